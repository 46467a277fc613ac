"""Text measured in terminal columns (a Chinese character takes two), to pad and wrap by them."""

from __future__ import annotations

import re
import shutil
import sys
import textwrap
import unicodedata
from typing import TextIO

from ..locale import unquoted

WIDE = "\u2e80-\u9fff\uf900-\ufaff\uff00-\uffef\u3000-\u303f"
NO_LINE_END = "\uff08\u201c\u2018\u300a\u300c\u300e\u3010"
"""Marks a line does not end with (full-width opening brackets and quotes): they go down
with what follows them."""
_UNITS = re.compile(
    rf"\s+|[{NO_LINE_END}]*(?:`[^`\n]+`|第 ?\d+(?: ?[章行节项条个])?|[^\s{WIDE}`{NO_LINE_END}]+|\S)"
)
"""What a line breaks between: runs of spaces, and words, each with the opening marks before
it: a code span whole, ``第 11 章`` whole, a Latin word, or one wide character."""
_SOURCE_UNITS = re.compile(
    rf"\s+|[{NO_LINE_END}]*(?:``[^`\n]+``|`[^`\n]+`|第 ?\d+(?: ?[章行节项条个])?"
    rf"|[^\s{WIDE}`{NO_LINE_END}]+|\S)"
)
"""``_UNITS`` of a text kept as written (a comment in a source file): a reST literal whole."""
NO_LINE_START = set("\uff0c\u3002\uff1b\uff1a\u3001\uff09\u300b\u300d\u300f\uff01\uff1f,.;:)]}…")
"""Characters a line does not start with: they stay with what comes before them."""
WIDTH = 100
"""The columns a report takes where the output is no terminal (a file, a pipe, a test)."""
NARROWEST = 40


def terminal_width(stream: TextIO | None = None, widest: int = WIDTH) -> int:
    """The columns to wrap to: the terminal's (``COLUMNS`` first, as ``shutil`` reads it) when
    ``stream`` (stdout by default) is one, at most ``widest``; else ``widest``."""
    stream = sys.stdout if stream is None else stream
    try:
        interactive = stream.isatty()
    except (AttributeError, ValueError):
        interactive = False
    if not interactive:
        return widest
    fallback = (widest, 24)
    try:
        found = shutil.get_terminal_size(fallback).columns
    except (OSError, ValueError):
        found = widest
    return max(NARROWEST, min(widest, found))


def columns(text: str) -> int:
    return sum(2 if unicodedata.east_asian_width(c) in "WF" else 1 for c in text)


def wide(text: str) -> bool:
    return columns(text) != len(text)


def pad(text: str, width: int) -> str:
    """``text`` followed by spaces up to ``width`` columns (as ``f"{text:<{width}}"`` would)."""
    return text + " " * max(0, width - columns(text))


def wrap(
    text: str,
    width: int,
    initial_indent: str = "",
    subsequent_indent: str = "",
    *,
    as_written: bool = False,
) -> list[str]:
    """``textwrap.wrap``, by columns when there is a wide character or a code span: never
    inside a word or a code span, nor between ``第`` and its number, nor after an opening
    bracket. Code spans lose their backticks (a terminal shows them as themselves), unless
    ``as_written`` (a comment in a source file: a reST literal too stays whole and quoted)."""
    if not wide(text + initial_indent + subsequent_indent) and "`" not in text:
        plain = textwrap.TextWrapper(width, initial_indent, subsequent_indent)
        plain.break_on_hyphens = False
        return plain.wrap(text)
    rows: list[list[str]] = []  # each line's words and spaces, the indent first
    row, used = [initial_indent], columns(initial_indent)
    units = _SOURCE_UNITS if as_written else _UNITS
    for found in units.findall(text.replace("\n", " ").replace("\t", " ")):
        unit = found if as_written else unquoted(found)
        size = columns(unit)
        fresh = len(row) == 1
        if unit.isspace():
            if not fresh:
                row.append(unit)
                used += size
            continue
        if not fresh and used + size > width and unit[0] not in NO_LINE_START:
            rows.append(row)
            row, used = [subsequent_indent], columns(subsequent_indent)
        row.append(unit)
        used += size
    if len(row) > 1:
        rows.append(row)
    _no_orphan(rows)
    return ["".join(row).rstrip() for row in rows]


def _no_orphan(rows: list[list[str]]) -> None:
    """A last line of one wide character takes the word before it down with it."""
    if len(rows) < 2 or len(rows[-1]) != 2 or columns(rows[-1][1]) != 2:
        return
    before = rows[-2]
    words = [index for index, unit in enumerate(before) if index and not unit.isspace()]
    last = words[-1] if words else 0
    if len(words) < 2 or last != len(before) - 1 or not wide(before[last]):
        return  # a word on its own, or one the orphan is not glued to
    rows[-1][1:1] = [before.pop()]
