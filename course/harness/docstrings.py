"""A learner's files in the workspace's edition: their docstrings and comments, through the
catalog."""

from __future__ import annotations

import ast
import inspect
import io
import tokenize
from collections.abc import Callable, Iterator
from dataclasses import dataclass

from ..sandboxed.columns import wrap
from .pysource import parse

WIDTH = 100  # a comment's lines, as the kit's own code is written
TOOLS = ("pragma:", "type:", "noqa", "fmt:")
"""Comments that speak to a tool, never to a reader: kept as they are."""


@dataclass(frozen=True)
class Comment:
    """A comment a learner reads: whole lines at one column (a block, joined into one text), or
    one after code on its line (``inline``)."""

    first: int  # its lines, 1-based and inclusive
    last: int
    column: int
    text: str
    inline: bool = False


def comments(source: str) -> list[Comment]:
    """Every comment of ``source`` a learner reads, in order (a tool's pragma is none)."""
    found: list[Comment] = []
    lines = source.splitlines()
    tokens = tokenize.generate_tokens(io.StringIO(source).readline)
    for token in (t for t in tokens if t.type == tokenize.COMMENT):
        (row, column), text = token.start, token.string.removeprefix("#").strip()
        if not text or text.startswith(TOOLS):
            continue
        inline = bool(lines[row - 1][:column].strip())
        previous = found[-1] if found else None
        if (
            previous is not None
            and not inline
            and not previous.inline
            and previous.last == row - 1
            and previous.column == column
        ):
            found[-1] = Comment(previous.first, row, column, f"{previous.text} {text}")
        else:
            found.append(Comment(row, row, column, text, inline))
    return found


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


Stub = Callable[[str, str, str, str], str]
"""What a stub says, from its ``LabNotImplemented`` arguments (``labs.stub_message``)."""


def localized(source: str, translate: Callable[[str], str], stub: Stub | None = None) -> str:
    """``source`` with each docstring and comment passed through ``translate`` (a text a
    literal could not hold stays; a comment block is wrapped again at its column); code and the
    lab stubs' words (looked up when one raises) untouched. With ``stub``, a comment above each
    stub's ``raise`` says what it raises, as ``stub`` words it."""
    source = _localized_docstrings(source, translate)
    if stub is not None:
        source = _stubs_said(source, stub)
    return _localized_comments(source, translate)


def _stubs_said(source: str, stub: Stub) -> str:
    lines = source.splitlines(keepends=True)
    for line, column, args in sorted(_stub_raises(parse(source)), reverse=True):
        pad = " " * column  # a raise is indented with spaces: bytes are characters
        # two columns spare: a full-width comma never starts a line, so it may end one past
        rows = wrap(stub(*args), WIDTH - column - 4, as_written=True)
        lines[line - 1 : line - 1] = [f"{pad}# {row}\n" for row in rows]
    return "".join(lines)


def _stub_raises(tree: ast.Module) -> Iterator[tuple[int, int, tuple[str, str, str, str]]]:
    """The line, column and arguments of each ``raise LabNotImplemented("11.1", "title",
    "function", "to-do")`` of ``tree``."""
    for node in ast.walk(tree):
        if not isinstance(node, ast.Raise):
            continue
        call = node.exc
        if not (
            isinstance(call, ast.Call)
            and isinstance(call.func, ast.Name)
            and call.func.id == "LabNotImplemented"
        ):
            continue
        args = tuple(a.value for a in call.args if isinstance(a, ast.Constant))
        if len(call.args) == 4 and all(isinstance(a, str) for a in args) and len(args) == 4:
            lab_id, title, function, todo = (str(a) for a in args)
            yield node.lineno, node.col_offset, (lab_id, title, function, todo)


def _localized_comments(source: str, translate: Callable[[str], str]) -> str:
    lines = source.splitlines(keepends=True)
    for comment in reversed(comments(source)):
        translated = translate(comment.text)
        if translated == comment.text:
            continue
        if comment.inline:
            code = lines[comment.first - 1][: comment.column].rstrip()
            lines[comment.first - 1] = f"{code}  # {translated}\n"
            continue
        pad = " " * comment.column
        rows = wrap(translated, WIDTH - comment.column - 2, as_written=True)
        lines[comment.first - 1 : comment.last] = [f"{pad}# {row}\n" for row in rows]
    return "".join(lines)


def _localized_docstrings(source: str, translate: Callable[[str], str]) -> str:
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
