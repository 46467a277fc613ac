"""Text measured in terminal columns (a Chinese character takes two), to pad and wrap by them."""

from __future__ import annotations

import re
import textwrap
import unicodedata

_UNITS = re.compile(r"\s+|[^\s\u2e80-\u9fff\uf900-\ufaff\uff00-\uffef\u3000-\u303f]+|\S")
NO_LINE_START = set("\uff0c\u3002\uff1b\uff1a\u3001\uff09\u300b\u300d\u300f\uff01\uff1f,.;:)]}…")
"""Characters a line does not start with: they stay with what comes before them."""


def columns(text: str) -> int:
    return sum(2 if unicodedata.east_asian_width(c) in "WF" else 1 for c in text)


def wide(text: str) -> bool:
    return columns(text) != len(text)


def pad(text: str, width: int) -> str:
    """``text`` followed by spaces up to ``width`` columns (as ``f"{text:<{width}}"`` would)."""
    return text + " " * max(0, width - columns(text))


def wrap(text: str, width: int, initial_indent: str = "", subsequent_indent: str = "") -> list[str]:
    """``textwrap.wrap``, by columns when there is a wide character (never inside a word)."""
    if not wide(text + initial_indent + subsequent_indent):
        plain = textwrap.TextWrapper(width, initial_indent, subsequent_indent)
        plain.break_on_hyphens = False
        return plain.wrap(text)
    lines: list[str] = []
    line, used = initial_indent, columns(initial_indent)
    fresh = True
    for unit in _UNITS.findall(text.replace("\n", " ").replace("\t", " ")):
        size = columns(unit)
        if unit.isspace():
            if not fresh:
                line, used = line + unit, used + size
            continue
        if not fresh and used + size > width and unit[0] not in NO_LINE_START:
            lines.append(line.rstrip())
            line, used = subsequent_indent, columns(subsequent_indent)
        line, used = line + unit, used + size
        fresh = False
    if not fresh:
        lines.append(line.rstrip())
    return lines
