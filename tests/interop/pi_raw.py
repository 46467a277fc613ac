"""The shipped Pi sessions read straight from their JSON lines, sharing no code with the importer.

A damaged line holding several objects back to back is split with ``json``'s own decoder, so
the tests can count what the file holds on their own.
"""

from __future__ import annotations

import gzip
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

FAILED_STOPS = ("aborted", "error")


@dataclass(frozen=True)
class RawLine:
    """One JSON object of the raw file: its line, its place on the line, its entry."""

    line: int
    part: int
    data: dict[str, Any]

    @property
    def id(self) -> str:
        """The id the kit gives it (every shipped file is v1)."""
        return f"L{self.line}" if self.part == 1 else f"L{self.line}-{self.part}"

    @property
    def message(self) -> dict[str, Any]:
        message: dict[str, Any] = self.data.get("message", {})
        return message if self.data.get("type") == "message" else {}

    @property
    def role(self) -> str:
        return str(self.message.get("role", ""))

    @property
    def starts_turn(self) -> bool:
        return self.role in ("user", "bashExecution")

    @property
    def failed(self) -> bool:
        """An aborted or failed assistant message, which Pi never sends."""
        return self.role == "assistant" and self.message.get("stopReason") in FAILED_STOPS

    @property
    def sent(self) -> bool:
        """A message Pi would send."""
        return bool(self.role) and not self.failed


def raw_lines(path: Path) -> list[RawLine]:
    """Every object of the gzipped file in order, a damaged line split into its objects."""
    with gzip.open(path, "rt", encoding="utf-8") as handle:
        text = handle.read()
    found: list[RawLine] = []
    decoder = json.JSONDecoder()
    for number, line in enumerate(text.split("\n"), start=1):
        position, part = 0, 1
        while position < len(line.rstrip()):
            value, position = decoder.raw_decode(line, position)
            found.append(RawLine(number, part, value))
            part += 1
    return found


def line_count(path: Path) -> int:
    with gzip.open(path, "rt", encoding="utf-8") as handle:
        return len(handle.read().splitlines())
