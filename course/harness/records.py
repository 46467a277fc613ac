"""The grader's reader of the child's records: bounded, strict, and safe to show.

Learner code can append anything to the file, so a line or a file past its cap is dropped and
counted, never held whole; past ``MAX_LINES`` lines, or once the run's deadline has passed, the
rest of the file is left unread (counted once), so empty lines cost the grader no more than the
learner's deadline; every string is made safe here (``untrusted.safe_text``), once, for
every door, but a probe answer's ``value`` (data, compared as sent); and a line the strict JSON
reader refuses, or without the fields its event needs, each of its type (``SHAPES``), is
dropped and counted too, so no reader meets a ``KeyError``.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from ..jsonl import parse_json_line
from ..sandboxed.records import well_formed
from ..sandboxed.untrusted import MESSAGE_CHARS, NAME_CHARS, safe_name, safe_text

MAX_LINE_BYTES = 256 * 1024  # a longer record is dropped: no honest record comes near it
MAX_FILE_BYTES = 8 * 1024 * 1024  # read of one results file at most
MAX_LINES = 20_000  # lines of one results file read at most (an honest run writes hundreds)
DEADLINE_EVERY = 1000  # lines parsed between two looks at the clock
MAX_ITEMS = 200  # items of a list, or keys of an object, kept; the rest is counted
# fields holding a one-line name (cut at ``NAME_CHARS``); other strings are messages
NAME_FIELDS = frozenset({"event", "nodeid", "name", "lab", "id", "raised", "path", "function"})
DATA_FIELDS = frozenset({"value"})  # data compared as sent (a probe answer's result)
LINE_FIELDS = frozenset({"output"})  # lines the code under test printed, each cut as a name


class RecordReader:
    """Reads the complete records appended to a file since the last call, within the caps."""

    def __init__(self, path: Path, deadline: float | None = None) -> None:
        self.path = path
        self.deadline = deadline  # ``time.monotonic()`` past which nothing more is read
        self.offset = 0
        self.lines = 0  # complete lines taken so far (each counts against ``MAX_LINES``)
        self.closed = False  # past the line cap or the deadline: the rest is never read
        self.partial = b""
        self.dropped = 0  # records (or partial ones) left out
        self.cut = 0  # items of lists and keys of objects left out (past ``MAX_ITEMS``)

    def _close(self) -> None:
        """Read nothing more: what is left of the file counts as one dropped record."""
        self.closed, self.partial = True, b""
        self.dropped += 1

    def _past_deadline(self) -> bool:
        return self.deadline is not None and time.monotonic() > self.deadline

    def new(self) -> list[dict[str, Any]]:
        if self.closed:
            return []
        if self._past_deadline():
            self._close()
            return []
        room = MAX_FILE_BYTES - self.offset
        try:
            with open(self.path, "rb") as handle:
                handle.seek(self.offset)
                data = handle.read(max(room, 0) + 1)
        except FileNotFoundError:
            return []
        if len(data) > room:
            data = data[: max(room, 0)]
            self.dropped += 1
        self.offset += len(data)
        data, over = _first_lines(self.partial + data, MAX_LINES - self.lines)
        lines = data.split(b"\n")
        self.partial = lines.pop()
        self.lines += len(lines)
        if len(self.partial) > MAX_LINE_BYTES:
            self.partial = b""
            self.dropped += 1
        found: list[dict[str, Any]] = []
        for number, line in enumerate(lines, 1):
            if number % DEADLINE_EVERY == 0 and self._past_deadline():
                self._close()
                return found
            if (record := self._parse(line)) is not None:
                found.append(record)
        if over:
            self._close()
        return found

    def _parse(self, line: bytes) -> dict[str, Any] | None:
        """The record on ``line``, made safe; None (dropped and counted) if it is refused."""
        try:
            record = parse_json_line(line) if len(line) <= MAX_LINE_BYTES else None
            record = self._table(record) if isinstance(record, dict) else None
        except (ValueError, RecursionError):
            record = None
        if record is None or not well_formed(record):
            self.dropped += 1
            return None
        return record

    def _safe(self, value: Any, field: str) -> Any:
        """``value`` with its strings safe to show and its lists at most ``MAX_ITEMS`` long."""
        if field in DATA_FIELDS:
            return value
        if isinstance(value, str):
            if field in NAME_FIELDS or field in LINE_FIELDS:
                return safe_name(value)
            return safe_text(value, NAME_CHARS if field == "text" else MESSAGE_CHARS)
        if isinstance(value, list):
            if len(value) > MAX_ITEMS:
                self.cut += len(value) - MAX_ITEMS
            # of a stack, the innermost frames (the last ones) are the ones that explain it
            kept = value[-MAX_ITEMS:] if field == "frames" else value[:MAX_ITEMS]
            return [self._safe(item, field) for item in kept]
        if isinstance(value, dict):
            return self._table(value)
        return value

    def _table(self, value: dict[str, Any]) -> dict[str, Any]:
        """A JSON object: at most ``MAX_ITEMS`` keys, each a safe name."""
        if len(value) > MAX_ITEMS:
            self.cut += len(value) - MAX_ITEMS
        kept = list(value.items())[:MAX_ITEMS]
        return {safe_name(k): self._safe(v, safe_name(k)) for k, v in kept}


def _first_lines(data: bytes, lines: int) -> tuple[bytes, bool]:
    """``data`` up to and with its ``lines``-th newline, and whether more followed it."""
    if data.count(b"\n") <= lines:
        return data, False
    end = -1
    for _ in range(max(lines, 0)):
        end = data.index(b"\n", end + 1)
    return data[: end + 1], True
