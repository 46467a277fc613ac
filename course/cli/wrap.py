"""Wrapping text that may hold Chinese: a wide character takes two columns of a terminal."""

from __future__ import annotations

import argparse
import textwrap
import unicodedata

NO_LINE_START = frozenset(
    "\uff0c\u3002\u3001\uff1b\uff1a\uff01\uff1f\uff09\u300b\u300d\u201d,.;:!?)"
)
"""Closing punctuation (Chinese and ASCII): it ends the line before rather than begins one."""
NO_LINE_END = frozenset("\uff08\u300a\u300c\u201c(")
"""Opening punctuation: it begins the next line rather than ends one."""


def wide(char: str) -> bool:
    return unicodedata.east_asian_width(char) in "WF"


def has_wide(text: str) -> bool:
    return any(wide(char) for char in text)


def columns(text: str) -> int:
    """How many terminal columns ``text`` takes."""
    return sum(2 if wide(char) else 1 for char in text)


def _tokens(text: str) -> list[str]:
    """Each wide character alone, each run of other characters, each space."""
    tokens: list[str] = []
    for char in text:
        if wide(char) or char.isspace() or not tokens or wide(tokens[-1][-1]) or tokens[-1] == " ":
            tokens.append(" " if char.isspace() else char)
        else:
            tokens[-1] += char
    return tokens


def wrap(text: str, width: int, indent: str = "", first: str | None = None) -> list[str]:
    """``textwrap.wrap`` of ``text``'s words (hyphens kept whole); with wide characters, by
    columns, a line may break between any two of them but not before closing punctuation."""
    text = " ".join(text.split())
    first = indent if first is None else first
    if not has_wide(text):
        return textwrap.wrap(
            text, width, initial_indent=first, subsequent_indent=indent, break_on_hyphens=False
        )
    lines: list[str] = []
    lead, line = first, list[str]()  # the line's tokens, after its indent
    for token in _tokens(text):
        if not line and token == " ":
            continue
        if not line or columns(lead) + columns("".join(line) + token) <= width:
            line.append(token)
            continue
        carried = [token]  # what may not end a line, or begin one, goes on with its neighbour
        while len(line) > 1 and (carried[0][0] in NO_LINE_START or line[-1][-1] in NO_LINE_END):
            carried.insert(0, line.pop())
        lines.append((lead + "".join(line)).rstrip())
        while carried and carried[0] == " ":
            carried.pop(0)
        lead, line = indent, carried
    if line:
        lines.append((lead + "".join(line)).rstrip())
    return lines


class HelpFormatter(argparse.HelpFormatter):
    """argparse's help, its descriptions and option helps wrapped by columns (see ``wrap``)."""

    def _split_lines(self, text: str, width: int) -> list[str]:
        if not has_wide(text):
            return super()._split_lines(text, width)
        return wrap(text, width)

    def _fill_text(self, text: str, width: int, indent: str) -> str:
        if not has_wide(text):
            return super()._fill_text(text, width, indent)
        return "\n".join(wrap(text, width, indent))
