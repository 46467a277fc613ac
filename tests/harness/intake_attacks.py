"""Submissions that attack the grader's own reading (issue 29): built for the tests and the bench.

Each builder lays one attack into a workspace or a roster folder: a version-4 git index whose
paths each extend the last, a tar whose member name is megabytes long, a zip 1,100 folders deep,
a folder of many empty archives, a zip listing one member a million times, a marker nested
thousands deep or with a huge ``chapter``, a lab function holding a huge tuple, records missing
their fields, and a learner file that is a FIFO (with a writer that notices if the grader ever
opens it).
"""

from __future__ import annotations

import io
import os
import struct
import subprocess
import sys
import tarfile
import textwrap
import zipfile
from pathlib import Path

from harness_support import roster_workspace
from hostile import MODULE, append

from course.harness.manifest import Manifest

FAKE_COMMIT = "c0ffee" * 6 + "c0ff"


def v4_index(entries: int, grow: int = 64) -> bytes:
    """A version-4 git index whose every path is the previous one plus ``grow`` bytes."""
    body = bytearray(b"DIRC" + struct.pack(">II", 4, entries))
    for _ in range(entries):
        body += bytes(40) + bytes(20) + struct.pack(">H", 0)  # stat data, blob id, flags
        body += b"\x00" + b"a" * grow + b"\x00"  # strip nothing, add ``grow`` bytes
    return bytes(body)


def with_git_index(workspace: Path, index: bytes) -> Path:
    """Make ``workspace`` look like a repository at a commit, with ``index`` as its index."""
    git = workspace / ".git"
    (git / "refs" / "heads").mkdir(parents=True)
    (git / "HEAD").write_text("ref: refs/heads/main\n")
    (git / "refs" / "heads" / "main").write_text(FAKE_COMMIT + "\n")
    (git / "index").write_bytes(index)
    return workspace


def long_name_tar(archive: Path, length: int) -> Path:
    """A ``.tar.bz2`` of one member whose (GNU long) name is ``length`` bytes."""
    with tarfile.open(archive, "w:bz2", format=tarfile.GNU_FORMAT) as out:
        out.addfile(tarfile.TarInfo("n" * length), io.BytesIO(b""))
    return archive


def long_name_zip(archive: Path, length: int) -> Path:
    """A zip of one member with an absolute name of ``length`` characters (refused, quoted)."""
    with zipfile.ZipFile(archive, "w") as out:
        out.writestr("/" + "n" * (length - 1), b"")
    return archive


def deep_zip(archive: Path, depth: int) -> Path:
    """A zip whose one file lies ``depth`` folders down."""
    with zipfile.ZipFile(archive, "w") as out:
        out.writestr("d/" * depth + "f.txt", b"deep\n")
    return archive


def listing_zip(archive: Path, entries: int, declared: int | None = None) -> Path:
    """A zip of one empty member whose central directory lists it ``entries`` times (47 bytes
    an entry: a million of them is a 45 MiB file), each entry pointing at the same member; its
    end record declares ``declared`` entries (else as many as it can say)."""
    local = struct.pack("<4s5H3L2H", b"PK\x03\x04", 20, 0, 0, 0, 0, 0, 0, 0, 1, 0) + b"f"
    entry = struct.pack(
        "<4s4B4HL2L5H2L", b"PK\x01\x02", 20, 3, 20, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0
    )
    listing = (entry + b"f") * entries
    count = min(entries, 0xFFFF) if declared is None else declared
    end = struct.pack("<4s4H2LH", b"PK\x05\x06", 0, 0, count, count, len(listing), len(local), 0)
    archive.write_bytes(local + listing + end)
    return archive


def many_archives(folder: Path, count: int) -> Path:
    """A learner's folder holding ``count`` empty ``.zip`` files."""
    folder.mkdir(parents=True)
    for n in range(count):
        (folder / f"try-{n:05d}.zip").write_bytes(b"")
    return folder


def marker_text(workspace: Path) -> str:
    return (workspace / ".course-workspace.toml").read_text(encoding="utf-8")


def nested_marker(workspace: Path, depth: int) -> Path:
    """A marker with an array nested ``depth`` deep before its tables."""
    deep = "deep = " + "[" * depth + "]" * depth + "\n"
    (workspace / ".course-workspace.toml").write_text(deep + marker_text(workspace))
    return workspace


def long_chapter(workspace: Path, length: int) -> Path:
    """A marker whose ``chapter`` is ``length`` characters."""
    text = marker_text(workspace).replace('chapter = "11"', f'chapter = "{"9" * length}"')
    (workspace / ".course-workspace.toml").write_text(text)
    return workspace


def huge_tuple(workspace: Path, size: int) -> Path:
    """A lab function (``context.select_groups``) whose first statement is a ``size``-byte tuple."""
    path = workspace / "pi_course" / "context.py"
    items, total = [], 2
    while total < size:
        items.append(str(len(items)))
        total += len(items[-1]) + 2
    literal = "(" + ", ".join(items) + ",)"
    text = path.read_text(encoding="utf-8")
    start = text.index("def select_groups(")
    body = text.index(":\n", text.index(")", start)) + 2
    path.write_text(text[:body] + f"    _table = {literal}\n" + text[body:], encoding="utf-8")
    return workspace


BAD_RECORDS = """
import json as _json, sys as _sys


def _malformed():
    argv = _sys.argv
    if "--course-results" not in argv:
        return
    results = argv[argv.index("--course-results") + 1]
    with open(results, "a", encoding="utf-8") as out:
        for record in ({"event": "collected"}, {"event": "collected", "tests": [1]},
                       {"event": "start"}, {"event": "end", "duration": "slow"},
                       {"event": "end", "nodeid": ["t.py::x"]}):
            out.write(_json.dumps(record) + "\\n")


_malformed()
"""
"""Records without the fields their event needs, or of the wrong type; then an honest run."""


def malformed_records(workspace: Path) -> Path:
    append(workspace, MODULE, BAD_RECORDS)
    return workspace


def fifo_learner_file(workspace: Path) -> Path:
    """Make ``pi_course/summary.py`` a FIFO (an open for reading would block, or let a writer
    through); its path."""
    fifo = workspace / MODULE
    fifo.unlink()
    os.mkfifo(fifo)
    return fifo


def fifo_writer(fifo: Path, witness: Path) -> subprocess.Popen[bytes]:
    """A process blocked opening ``fifo`` for writing; it writes ``witness`` if the FIFO is ever
    opened for reading. The caller ends it (by its pid)."""
    code = textwrap.dedent(
        f"""
        import pathlib
        with open({str(fifo)!r}, "wb"):
            pathlib.Path({str(witness)!r}).write_text("opened")
        """
    )
    return subprocess.Popen([sys.executable, "-c", code])


def lay_out_attacks(manifest: Manifest, roster: Path, *, small: bool = False) -> Path:
    """Every attack as a learner of ``roster`` (``h-index``, ``h-longname.tar.bz2``…), beside
    whoever else is there; the FIFO's path. ``small``: 300 archives in one folder instead of
    12,000 and a 2 MB member name instead of 20 MB (the other attacks at full size)."""
    with_git_index(roster_workspace(manifest, roster, "h-index", solved=5), v4_index(16_000))
    malformed_records(roster_workspace(manifest, roster, "h-records", solved=5))
    huge_tuple(roster_workspace(manifest, roster, "h-tuple", solved=5), 240 * 1024)
    long_chapter(roster_workspace(manifest, roster, "h-chapter"), 900_000)
    nested_marker(roster_workspace(manifest, roster, "h-nested"), 3000)
    long_name_tar(roster / "h-longname.tar.bz2", 2_000_000 if small else 20_000_000)
    long_name_zip(roster / "h-zipname.zip", 60_000)
    deep_zip(roster / "h-deep.zip", 1100)
    many_archives(roster / "h-many", 300 if small else 12_000)
    return fifo_learner_file(roster_workspace(manifest, roster, "h-fifo"))
