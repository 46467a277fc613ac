"""Session files read within caps: ``session-log import``, ``check`` and ``repair`` under attack.

Each attack of issue 29 is run against the public doors with the caps lowered (the mechanism is
the same at the shipped sizes, which take seconds): decompressed size and line length are
refused with a message naming the cap, blank lines are streamed past without being held, and
chained compactions cost time linear in their number.
"""

from __future__ import annotations

import contextlib
import gzip
import json
import tracemalloc
from pathlib import Path
from typing import Any

import pytest
from costs import growth
from pi_builders import header

from course.interop import PiFormatError, import_pi_session, pi_format
from course.tools import sessionlog
from course.tools.sessionlog import main

MiB = 1024 * 1024
HEADER = (json.dumps(header(3)) + "\n").encode()


def blank_bomb(path: Path, mebibytes: int) -> Path:
    """A small gzip file that decompresses to ``mebibytes`` MiB of blank lines."""
    with gzip.open(path, "wb", compresslevel=9) as handle:
        handle.write(HEADER)
        for _ in range(mebibytes):
            handle.write(b"\n" * MiB)
    return path


def peak_bytes(work: Any) -> int:
    """The most memory Python held while ``work()`` ran, in bytes."""
    tracemalloc.start()
    try:
        with contextlib.suppress(PiFormatError):
            work()
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


@pytest.fixture
def small_caps(monkeypatch: pytest.MonkeyPatch) -> None:
    """Caps of 8 MiB of text and 1 MiB lines, for the importer and for check and repair."""
    for module in (pi_format, sessionlog):
        monkeypatch.setattr(module, "MAX_SESSION_BYTES", 8 * MiB)
        monkeypatch.setattr(module, "MAX_LINE_BYTES", 1 * MiB)


@pytest.mark.usefixtures("small_caps")
def test_a_gzip_bomb_of_blank_lines_is_refused_at_the_cap_without_being_held(
    tmp_path: Path,
) -> None:
    bomb = blank_bomb(tmp_path / "bomb.jsonl.gz", 24)
    assert bomb.stat().st_size < 64 * 1024
    with pytest.raises(PiFormatError, match=r"holds more than 8 MiB of text"):
        import_pi_session(bomb)
    assert peak_bytes(lambda: import_pi_session(bomb)) < 6 * MiB  # a few chunks, not 24 MiB


@pytest.mark.usefixtures("small_caps")
def test_blank_lines_within_the_cap_are_streamed_past(tmp_path: Path) -> None:
    bomb = blank_bomb(tmp_path / "blank.jsonl.gz", 7)
    with gzip.open(bomb, "ab") as handle:
        line = {"type": "custom", "id": "c1", "parentId": None, "timestamp": "2025-01-01T00:00:01Z"}
        handle.write(json.dumps(line).encode())
    imported = import_pi_session(bomb, repair="synthesize")
    assert imported.leaf_id == "c1"
    assert peak_bytes(lambda: import_pi_session(bomb)) < 6 * MiB  # less than the blank lines


@pytest.mark.usefixtures("small_caps")
def test_a_line_longer_than_the_cap_is_refused_naming_it(tmp_path: Path) -> None:
    source = tmp_path / "long.jsonl"
    source.write_bytes(HEADER + b"\n" + b'{"x": "' + b"a" * (2 * MiB) + b'"}\n')
    with pytest.raises(PiFormatError, match=r"^line 3: longer than 1 MiB"):
        import_pi_session(source)


@pytest.mark.usefixtures("small_caps")
def test_session_log_import_refuses_a_bomb_with_status_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bomb = blank_bomb(tmp_path / "bomb.jsonl.gz", 12)
    assert main(["import", str(bomb), "-o", str(tmp_path / "out.jsonl")]) == 2
    assert "holds more than 8 MiB of text (after decompression)" in capsys.readouterr().err
    assert not (tmp_path / "out.jsonl").exists()


@pytest.mark.usefixtures("small_caps")
@pytest.mark.parametrize("command", ["check", "repair"])
def test_check_and_repair_refuse_a_log_beyond_the_size_cap(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], command: str
) -> None:
    log = tmp_path / "big.jsonl"
    log.write_bytes(b"\n" * (9 * MiB))
    assert main([command, str(log)]) == 2
    assert "more than the 8 MiB a session log may hold; not read" in capsys.readouterr().err
    assert log.stat().st_size == 9 * MiB  # repair touched nothing


@pytest.mark.usefixtures("small_caps")
@pytest.mark.parametrize("command", ["check", "repair"])
def test_check_and_repair_refuse_a_line_beyond_the_line_cap(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], command: str
) -> None:
    log = tmp_path / "long.jsonl"
    log.write_bytes(b"{}\n{}\n" + b"x" * (MiB + 1))
    assert main([command, str(log)]) == 2
    assert "line 3 is longer than 1 MiB; not read" in capsys.readouterr().err


def chained_compactions(path: Path, count: int) -> Path:
    """``count`` compactions in a chain, each keeping the user message of its own turn."""
    lines = [header(3)]
    parent = None
    for i in range(count):
        at = "2025-01-01T00:00:01Z"
        lines.append(
            {
                "type": "message",
                "id": f"u{i}",
                "parentId": parent,
                "timestamp": at,
                "message": {"role": "user", "content": f"step {i}"},
            }
        )
        lines.append(
            {
                "type": "message",
                "id": f"a{i}",
                "parentId": f"u{i}",
                "timestamp": at,
                "message": {"role": "assistant", "content": [], "stopReason": "stop"},
            }
        )
        lines.append(
            {
                "type": "compaction",
                "id": f"c{i}",
                "parentId": f"a{i}",
                "timestamp": at,
                "summary": "## Goal\nStep on.",
                "firstKeptEntryId": f"u{i}",
                "tokensBefore": 1,
            }
        )
        parent = f"c{i}"
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    return path


def test_chained_compactions_cost_work_linear_in_their_number(tmp_path: Path) -> None:
    """Four times the compactions run about four times the lines; walking each compaction's
    whole path (the importer before) ran about sixteen times (counted, not timed)."""

    def import_chain(count: int) -> object:
        return import_pi_session(chained_compactions(tmp_path / f"chain-{count}.jsonl", count))

    assert growth(import_chain, 100) < 6
