"""A reference module cut for one run: without the lab functions the run must not hold, and
without the private helpers only they reach."""

from __future__ import annotations

import ast
from collections.abc import Collection

from ...harness.pysource import parse


class CutError(ValueError):
    """A function to cut is not a top-level function of the module (the message names it)."""


def _defined(statement: ast.stmt) -> frozenset[str]:
    """The names a top-level definition binds (none for any other statement)."""
    if isinstance(statement, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
        return frozenset({statement.name})
    targets: list[ast.expr] = []
    if isinstance(statement, ast.Assign):
        targets = statement.targets
    elif isinstance(statement, ast.AnnAssign):
        targets = [statement.target]
    if targets and all(isinstance(target, ast.Name) for target in targets):
        return frozenset(target.id for target in targets if isinstance(target, ast.Name))
    return frozenset()


def _used(statement: ast.stmt) -> frozenset[str]:
    """Every name a statement mentions (a definition's own name aside)."""
    return frozenset(n.id for n in ast.walk(statement) if isinstance(n, ast.Name))


def _span(statement: ast.stmt) -> range:
    """The 0-based lines of a statement, its decorators included."""
    decorators = getattr(statement, "decorator_list", [])
    first = min([statement.lineno, *(d.lineno for d in decorators)])
    return range(first - 1, statement.end_lineno or statement.lineno)


def cut_module(source: str, removed: Collection[str]) -> str:
    """``source`` without its top-level functions named in ``removed``, and without every
    private top-level definition (``_name = …``, ``def _name``, ``class _Name``) that only they
    reach, directly or through other such definitions. Everything else stays as written: the
    module's public names are its given interface, which the starter holds too."""
    tree = parse(source)
    statements = list(tree.body)
    functions = {
        s.name for s in statements if isinstance(s, ast.FunctionDef | ast.AsyncFunctionDef)
    }
    missing = sorted(set(removed) - functions)
    if missing:
        raise CutError(f"no top-level function {', '.join(missing)} to cut")
    dropped = {i for i, s in enumerate(statements) if _defined(s) & set(removed)}
    private = {
        i
        for i, s in enumerate(statements)
        if i not in dropped and _defined(s) and all(n.startswith("_") for n in _defined(s))
    }
    kept = set(range(len(statements))) - dropped - private
    reached = frozenset().union(*(_used(statements[i]) for i in kept))
    while found := {i for i in private - kept if _defined(statements[i]) & reached}:
        kept |= found
        reached = reached.union(*(_used(statements[i]) for i in found))
    gone = {line for i in set(range(len(statements))) - kept for line in _span(statements[i])}
    lines = source.splitlines(keepends=True)
    return "".join(line for number, line in enumerate(lines) if number not in gone)
