"""How status words look: coloured with a ✓/✗ mark on a terminal, plain words anywhere else."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TextIO

from ..locale import N_, gettext

MARKS = {"passed": "✓", "pending": "…", "failed": "✗", "timeout": "✗", "error": "✗"}
COLOURS = {"passed": "32", "pending": "33", "failed": "31", "timeout": "31", "error": "31"}
"""ANSI SGR colour codes: green, yellow, red."""

LABELS = {
    "passed": N_("passed"),
    "pending": N_("pending"),
    "failed": N_("failed"),
    "timeout": N_("timeout"),
    "error": N_("error"),
}
"""How a status reads on a terminal; the status itself stays the English id (JSON, CSV)."""


def status_label(status: str) -> str:
    """The status word a reader sees (``passed`` → ``通过`` in the Chinese edition)."""
    label = LABELS.get(str(status))
    return gettext(label) if label is not None else str(status)


@dataclass(frozen=True)
class Style:
    """Plain (the default) or coloured; only ever coloured when writing to a terminal."""

    colour: bool = False

    def status(self, status: str, text: str | None = None) -> str:
        """``text`` (the status's label by default), marked and coloured on a terminal."""
        words = status_label(status) if text is None else text
        if not self.colour:
            return words
        mark = MARKS.get(status, "")
        code = COLOURS.get(status, "0")
        return f"\033[{code}m{mark} {words}\033[0m" if mark else words

    def bold(self, text: str) -> str:
        return f"\033[1m{text}\033[0m" if self.colour else text


PLAIN = Style()


def style_for(stream: TextIO, environ: Mapping[str, str]) -> Style:
    """Colour only on a terminal, and never with ``NO_COLOR`` or ``TERM=dumb``.

    ``FORCE_COLOR`` is ignored on purpose: a notebook kernel sets it, and its captured output
    (a pipe) must stay free of escape codes.
    """
    try:
        terminal = stream.isatty()
    except (AttributeError, ValueError):
        terminal = False
    wanted = "NO_COLOR" not in environ and environ.get("TERM") != "dumb"
    return Style(colour=terminal and wanted)
