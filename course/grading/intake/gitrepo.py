"""The commit a submitted git repository has checked out, read from its files without running git.

A learner's ``.git`` config can name programs git would run (``core.fsmonitor``, filters,
hooks), so git is never run: ``HEAD``, its branch (loose, then ``packed-refs``) and the index are
read as plain files through ``safefs.Tree``. The index's blob ids tell files edited since the
checkout; it is read in one capped pass keeping only the paths asked for, so a version-4 index
whose paths each extend the last costs no more than its bytes.
"""

from __future__ import annotations

import hashlib
import re
import struct
from collections.abc import Collection, Mapping
from dataclasses import dataclass, replace
from pathlib import PurePosixPath

from ...sandboxed.untrusted import safe_name
from .safefs import Tree, UnsafePath

COMMIT_ID = re.compile(r"[0-9a-f]{40}|[0-9a-f]{64}")
MAX_REF_BYTES = 4096
MAX_PACKED_REFS_BYTES = 1024 * 1024
MAX_INDEX_BYTES = 16 * 1024 * 1024
MAX_INDEX_PATH = 4096  # bytes of one index path (Linux's PATH_MAX)
MAX_INDEX_ENTRIES = 100_000  # a course repository holds dozens


@dataclass(frozen=True)
class Checkout:
    """What a repository has checked out: a commit id, or why it could not be read."""

    commit: str = ""
    branch: str = ""
    problem: str = ""
    tracked: Mapping[str, str] | None = None  # path below the workspace → blob id, if read
    unread: str = ""  # why an index that exists was not read

    def changed(self, files: Mapping[str, bytes]) -> list[str]:
        """Which of ``files`` differ from the blob git holds for them (or are not tracked)."""
        if self.tracked is None or not self.commit:
            return []
        size = len(self.commit) // 2
        return [
            path for path, data in files.items() if self.tracked.get(path) != blob_id(data, size)
        ]

    @property
    def note(self) -> str:
        """Why no commit is known, for the gradebook; ``""`` when one is (its column says it)."""
        if self.problem:
            return f"a git repository whose commit is not known: {self.problem}"
        return f"its git index was not read: {self.unread}" if self.unread else ""


def parse_head(text: str) -> tuple[str, str]:
    """``("ref", "refs/heads/main")`` or ``("commit", id)``; ``ValueError`` for anything else."""
    line = text.strip()
    if line.startswith("ref:"):
        ref = line.removeprefix("ref:").strip()
        parts = PurePosixPath(ref).parts
        if not ref.startswith("refs/") or ".." in parts or not ref.isprintable():
            raise ValueError(f"HEAD names an unusual ref {safe_name(ref)!r}")
        return "ref", ref
    if COMMIT_ID.fullmatch(line):
        return "commit", line
    raise ValueError("HEAD is neither a ref nor a commit id")


def packed_ref(text: str, ref: str) -> str:
    """The commit id ``packed-refs`` gives ``ref``, or ``""``."""
    for line in text.splitlines():
        commit, _, name = line.partition(" ")
        if name == ref and COMMIT_ID.fullmatch(commit):
            return commit
    return ""


def blob_id(data: bytes, size: int = 20) -> str:
    """The id git gives a file's content (SHA-1, or SHA-256 when ``size`` is 32)."""
    algorithm = hashlib.sha1 if size == 20 else hashlib.sha256
    return algorithm(b"blob %d\0" % len(data) + data).hexdigest()


def _varint(data: bytes, at: int) -> tuple[int, int]:
    """Git's offset varint at ``at``: its value and the position after it."""
    byte = data[at]
    value = byte & 0x7F
    while byte & 0x80:
        at += 1
        byte = data[at]
        value = ((value + 1) << 7) | (byte & 0x7F)
    return value, at + 1


def index_blobs(
    data: bytes, size: int = 20, wanted: Collection[str] | None = None
) -> dict[str, str]:
    """Path → blob id of each merged entry of a git index (versions 2 to 4), only those in
    ``wanted`` when given; ``ValueError`` for a malformed index, or one past the caps."""
    if len(data) < 12 or data[:4] != b"DIRC":
        raise ValueError("the index is not a git index")
    version, count = struct.unpack(">II", data[4:12])
    if version not in (2, 3, 4):
        raise ValueError(f"index version {version} is not read")
    if count > MAX_INDEX_ENTRIES:
        raise ValueError(f"the index holds {count} entries, more than {MAX_INDEX_ENTRIES}")
    blobs: dict[str, str] = {}
    at, previous = 12, b""
    try:
        for _ in range(count):
            start, fixed = at, 40 + size
            blob = data[at + 40 : at + fixed].hex()
            (flags,) = struct.unpack(">H", data[at + fixed : at + fixed + 2])
            at += fixed + 2 + (2 if version >= 3 and flags & 0x4000 else 0)
            if version == 4:
                strip, at = _varint(data, at)
                if strip > len(previous):
                    raise ValueError("an index path strips more than its predecessor holds")
                end = _path_end(data, at, MAX_INDEX_PATH - len(previous) + strip)
                path = previous[: len(previous) - strip] + data[at:end]
                at = end + 1
            else:
                end = _path_end(data, at, MAX_INDEX_PATH)
                path = data[at:end]
                at = start + (end - start + 8) // 8 * 8
            previous = path
            name = path.decode("utf-8", "surrogateescape")
            if (flags >> 12) & 0x3 == 0 and (wanted is None or name in wanted):
                blobs[name] = blob
    except (IndexError, struct.error):
        raise ValueError("the index ends early") from None
    return blobs


def _path_end(data: bytes, at: int, room: int) -> int:
    """Where the NUL ending the path at ``at`` is; ``ValueError`` past ``room`` bytes."""
    end = data.find(b"\0", at, at + max(room, 0) + 1)
    if end == -1:
        if len(data) <= at + room:
            raise IndexError(at)
        raise ValueError(f"an index path is longer than {MAX_INDEX_PATH} bytes")
    return end


def _tracked(
    repository: Tree, below: tuple[str, ...], size: int, wanted: Collection[str] | None
) -> tuple[Mapping[str, str] | None, str]:
    """The index's blob ids of the files under ``below`` (of ``wanted`` only, when given), by
    their path from there; or None and why it was not read."""
    if repository.kind(".git/index") == "missing":
        return None, ""
    prefix = "".join(f"{part}/" for part in below)
    asked = None if wanted is None else {prefix + path for path in wanted}
    try:
        blobs = index_blobs(repository.read(".git/index", MAX_INDEX_BYTES), size, asked)
    except (UnsafePath, ValueError) as error:
        return None, str(error)
    tracked = {
        path.removeprefix(prefix): blob for path, blob in blobs.items() if path.startswith(prefix)
    }
    return tracked, ""


def _text(tree: Tree, relative: str, limit: int) -> str:
    return tree.read(relative, limit).decode("ascii", "replace")


def checkout(tree: Tree) -> Checkout | None:
    """The commit checked out in the repository at the top of ``tree``; None if it is none."""
    kind = tree.kind(".git")
    if kind == "missing":
        return None
    if kind != "directory":
        return Checkout(problem=f".git is a {kind} (a linked worktree or submodule), not read")
    try:
        how, value = parse_head(_text(tree, ".git/HEAD", MAX_REF_BYTES))
        if how == "commit":
            return Checkout(commit=value)
        branch = value.removeprefix("refs/heads/")
        if tree.kind(f".git/{value}") != "missing":
            commit = _text(tree, f".git/{value}", MAX_REF_BYTES).strip()
        elif tree.kind(".git/packed-refs") != "missing":
            commit = packed_ref(_text(tree, ".git/packed-refs", MAX_PACKED_REFS_BYTES), value)
        else:
            commit = ""
    except (UnsafePath, ValueError) as error:
        return Checkout(problem=str(error))
    if not COMMIT_ID.fullmatch(commit):
        return Checkout(branch=branch, problem=f"{branch} has no commit yet")
    return Checkout(commit=commit, branch=branch)


def nearest_checkout(
    tree: Tree, top: int, wanted: Collection[str] | None = None
) -> Checkout | None:
    """The repository holding ``tree``'s folder or one above it, up to ``top`` parts deep;
    ``wanted``: the only paths (below ``tree``) whose blob ids are kept."""
    for depth in range(len(tree.below), top - 1, -1):
        repository = Tree(tree.base, tree.below[:depth])
        found = checkout(repository)
        if found is not None and found.commit:
            size = len(found.commit) // 2
            tracked, unread = _tracked(repository, tree.below[depth:], size, wanted)
            return replace(found, tracked=tracked, unread=unread)
        if found is not None:
            return found
    return None
