"""Moving a learner's lab code into a fresh scaffold's files, keeping what the kit gives.

A workspace begun from an older scaffold is moved into a fresh one lab function by lab function:
each lab function the learner's file defines takes the fresh starter's stub's place; what else
the learner wrote (helpers, constants, imports) that the starter does not define is added; what
the starter gives (``open_context``, the records' classes) stays the kit's. Copying the four files
whole would lose what the newer scaffold gives.
"""

from __future__ import annotations

import ast
from collections.abc import Collection
from dataclasses import dataclass

from .pysource import parse


@dataclass(frozen=True)
class Carried:
    """A learner file moved into a fresh starter: its text, the lab functions carried, and the
    learner's own additions (helpers, constants, imports)."""

    text: str
    labs: tuple[str, ...]
    added: tuple[str, ...]


def _span(node: ast.stmt) -> tuple[int, int]:
    """A top-level statement's 0-based [first, end) lines, decorators included."""
    decorators = getattr(node, "decorator_list", [])
    first = min([node.lineno, *(d.lineno for d in decorators)])
    assert node.end_lineno is not None
    return first - 1, node.end_lineno


def bound_names(node: ast.stmt) -> set[str]:
    """The names a top-level statement binds."""
    if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
        return {node.name}
    if isinstance(node, ast.Import | ast.ImportFrom):
        return {(alias.asname or alias.name).partition(".")[0] for alias in node.names}
    if isinstance(node, ast.Assign | ast.AnnAssign | ast.AugAssign):
        targets = node.targets if isinstance(node, ast.Assign) else [node.target]
        return {n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name)}
    return set()


def _is_docstring(node: ast.stmt) -> bool:
    return isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant)


def is_stub(node: ast.stmt) -> bool:
    """A function not written yet: its body, docstring aside, raises ``LabNotImplemented``."""
    if not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
        return False
    body = node.body[1:] if node.body and _is_docstring(node.body[0]) else node.body
    return (
        len(body) == 1
        and isinstance(body[0], ast.Raise)
        and "LabNotImplemented" in ast.unparse(body[0])
    )


def carry(old: str, new: str, lab_functions: Collection[str], file: str) -> Carried | None:
    """``new`` (a fresh starter) with ``old``'s lab functions in place of its stubs and ``old``'s
    own additions appended (its new imports after the starter's); None when either does not
    parse."""
    try:
        theirs, starter = parse(old, filename=file), parse(new, filename=file)
    except (SyntaxError, ValueError):
        return None
    old_lines, lines = old.splitlines(keepends=True), new.splitlines(keepends=True)
    defined = {name for node in starter.body for name in bound_names(node)}
    last: dict[str, ast.stmt] = {}
    for node in theirs.body:
        for name in bound_names(node):
            last[name] = node

    def text_of(node: ast.stmt) -> str:
        first, end = _span(node)
        return "".join(old_lines[first:end]).rstrip("\n") + "\n"

    stubs = [
        node
        for node in starter.body
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
        and node.name in lab_functions
        and isinstance(last.get(node.name), ast.FunctionDef | ast.AsyncFunctionDef)
        and not is_stub(last[node.name])  # not written: the fresh stub, its newer words
    ]
    for node in sorted(stubs, key=lambda n: n.lineno, reverse=True):
        first, end = _span(node)
        lines[first:end] = text_of(last[node.name]).splitlines(keepends=True)
    carried = tuple(node.name for node in stubs)
    imports, rest, added = [], [], []
    for node in theirs.body[1 if theirs.body and _is_docstring(theirs.body[0]) else 0 :]:
        names = bound_names(node)
        shadowed = any(last.get(name) is not node for name in names)
        if names & defined or (names and shadowed):
            continue  # the starter's (given, or a stub carried above), or shadowed later
        if isinstance(node, ast.Import | ast.ImportFrom):
            imports.append(text_of(node))
        elif names or not _is_docstring(node):
            rest.append(text_of(node))
        added += sorted(names)
    if imports:
        ends = [_span(n)[1] for n in starter.body if isinstance(n, ast.Import | ast.ImportFrom)]
        lines[max(ends, default=0) : max(ends, default=0)] = imports
    body = "".join(lines).rstrip("\n") + "\n"
    if rest:
        body += "\n\n" + "\n\n".join(chunk.rstrip("\n") + "\n" for chunk in rest)
    return Carried(body, carried, tuple(added))
