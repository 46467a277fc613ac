"""The command line around argparse: options read before parsing (the edition must be chosen
before the parser's help is built) and help wrapped by terminal columns."""

from __future__ import annotations

import argparse
from collections.abc import Sequence

from ..harness.columns import wide, wrap


def given(argv: Sequence[str], option: str) -> str | None:
    """The last value given to ``option`` (``--lang zh`` or ``--lang=zh``), as argparse takes it."""
    value = None
    for index, word in enumerate(argv):
        if word == "--":
            break
        if word == option and index + 1 < len(argv):
            value = argv[index + 1]
        elif word.startswith(option + "="):
            value = word.partition("=")[2]
    return value


class HelpFormatter(argparse.HelpFormatter):
    """argparse's help with Chinese descriptions wrapped by columns (a wide character takes two)."""

    def _split_lines(self, text: str, width: int) -> list[str]:
        if not wide(text):
            return super()._split_lines(text, width)
        return wrap(" ".join(text.split()), width)

    def _fill_text(self, text: str, width: int, indent: str) -> str:
        if not wide(text):
            return super()._fill_text(text, width, indent)
        return "\n".join(wrap(" ".join(text.split()), width, indent, indent))
