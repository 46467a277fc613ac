"""How status words look: coloured with a ✓/✗ mark on a terminal, plain words anywhere else."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TextIO

from ..sandboxed.status import Status


def status_label(status: Status) -> str:
    """The status word a reader sees (``passed`` → ``通过`` in the Chinese edition)."""
    return Status(status).label


@dataclass(frozen=True)
class Style:
    """Plain (the default) or coloured; only ever coloured when writing to a terminal."""

    colour: bool = False

    def status(self, status: Status, text: str | None = None) -> str:
        """``text`` (the status's label by default), marked and coloured on a terminal."""
        words = status.label if text is None else text
        if not self.colour:
            return words
        return f"\033[{status.colour}m{status.mark} {words}\033[0m"

    def bold(self, text: str) -> str:
        return f"\033[1m{text}\033[0m" if self.colour else text


PLAIN = Style()


def is_terminal(stream: TextIO) -> bool:
    """Whether ``stream`` is a terminal (a closed or replaced stream is not)."""
    try:
        return stream.isatty()
    except (AttributeError, ValueError):
        return False


def style_for(stream: TextIO, environ: Mapping[str, str]) -> Style:
    """Colour only on a terminal, and never with ``NO_COLOR`` or ``TERM=dumb`` (nor because of
    ``FORCE_COLOR``: a notebook kernel sets it, and its captured output must stay plain)."""
    wanted = "NO_COLOR" not in environ and environ.get("TERM") != "dumb"
    return Style(colour=is_terminal(stream) and wanted)
