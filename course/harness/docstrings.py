"""A learner's files in the workspace's edition: their docstrings, through the catalog."""

from __future__ import annotations

import ast
import inspect
from collections.abc import Callable, Iterator

from .pysource import parse


def _string_statements(tree: ast.Module) -> Iterator[tuple[ast.Constant, str]]:
    for node in ast.walk(tree):
        value = node.value if isinstance(node, ast.Expr) else None
        if isinstance(value, ast.Constant) and isinstance(value.value, str):
            yield value, value.value


def docstrings(source: str) -> Iterator[tuple[int, str]]:
    """(line, text) of every docstring in ``source``, cleaned as ``inspect.cleandoc`` does."""
    for node, value in _string_statements(parse(source)):
        text = inspect.cleandoc(value)
        if text.strip():
            yield node.lineno, text


def _docstring_literal(text: str, indent: int) -> str:
    lines = text.split("\n")
    if len(lines) == 1:
        return f'"""{text}"""'
    pad = " " * indent
    body = "\n".join(f"{pad}{line}" if line else "" for line in lines[1:])
    return f'"""{lines[0]}\n{body}\n{pad}"""'


def localized(source: str, translate: Callable[[str], str]) -> str:
    """``source`` with each docstring passed through ``translate`` (a text a literal could not
    hold stays); code and the lab stubs' words (looked up when one raises) untouched."""
    tree = parse(source)
    edits: list[tuple[ast.Constant, str]] = []
    for node, value in _string_statements(tree):
        original = inspect.cleandoc(value)
        translated = translate(original)
        if translated != original and '"""' not in translated and "\\" not in translated:
            edits.append((node, _docstring_literal(translated, node.col_offset)))
    lines = source.splitlines(keepends=True)
    for node, literal in sorted(edits, key=lambda e: (e[0].lineno, e[0].col_offset), reverse=True):
        assert node.end_lineno is not None and node.end_col_offset is not None
        first, last = node.lineno - 1, node.end_lineno - 1
        # the offsets count UTF-8 bytes, not characters
        head = lines[first].encode("utf-8")[: node.col_offset].decode("utf-8")
        tail = lines[last].encode("utf-8")[node.end_col_offset :].decode("utf-8")
        lines[first : last + 1] = [head + literal + tail]
    return "".join(lines)
