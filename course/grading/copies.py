"""How much of each lab's code is the reference's, once names and padding are normalised away.

Copying the reference's text passes every check honestly (it is the reference); that is a
matter of academic honesty, not forgery, so it is only flagged, for an instructor to look at.
Each lab function is compared with the reference's as a sequence of syntax tokens after
normalising away what does not change behaviour: docstrings, comments, no-op statements
(``pass``, bare constants, ``x = x``, ``if False:`` blocks) and the names of parameters and
local variables. A lab's figure weighs its functions by the reference's size and leaves out
the short ones (there is about one way to write four lines), so a lab is flagged only when
its non-trivial code matches as a whole.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from difflib import SequenceMatcher
from pathlib import Path

from ..harness.kit import read_source
from ..harness.manifest import Lab, Manifest
from ..harness.pysource import parse

SHORT_STATEMENTS = 4
SHORT_TOKENS = 60
"""A function with fewer statements (nested ones counted) or fewer syntax tokens than these is
short: there is about one way to write it, so it is never compared."""
FLAG_AT = 0.9
"""A lab whose weighted similarity reaches this is flagged as copied."""

@dataclass(frozen=True)
class LabSimilarity:
    """How close one lab's learner code is to the reference's (0: nothing alike, 1: the same)."""

    lab: str
    similarity: float
    """Over the lab's non-trivial functions, weighted by the reference's size; 0 when none."""
    functions: tuple[str, ...]
    """The functions compared (``module.function``): the lab's non-trivial ones."""

    @property
    def flagged(self) -> bool:
        return bool(self.functions) and self.similarity >= FLAG_AT

    def describe(self) -> str:
        """``Lab 11.3 0.97`` for a flag or a gradebook cell."""
        return f"Lab {self.lab} {self.similarity:.2f}"


def _is_no_op(node: ast.stmt) -> bool:
    if isinstance(node, ast.Pass):
        return True
    if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant):
        return True  # a docstring, a string used as a comment, a bare number or ``...``
    if isinstance(node, ast.Assign) and len(node.targets) == 1:
        target, value = node.targets[0], node.value
        return (
            isinstance(target, ast.Name) and isinstance(value, ast.Name) and target.id == value.id
        )
    return (
        isinstance(node, ast.If)
        and isinstance(node.test, ast.Constant)
        and not node.test.value
        and not node.orelse
    )


class _Normaliser(ast.NodeTransformer):
    """Drops no-op statements and renames parameters and local variables by first use."""

    def __init__(self, local: set[str]) -> None:
        self.local = local
        self.names: dict[str, str] = {}

    def _rename(self, name: str) -> str:
        if name not in self.local:
            return name  # a global, an import or a builtin: part of what the code does
        return self.names.setdefault(name, f"v{len(self.names)}")

    def generic_visit(self, node: ast.AST) -> ast.AST:
        for field, value in ast.iter_fields(node):
            if isinstance(value, list) and value and isinstance(value[0], ast.stmt):
                kept = [s for s in value if not _is_no_op(s)]
                setattr(node, field, kept or [ast.Pass()])
        return super().generic_visit(node)

    def visit_Name(self, node: ast.Name) -> ast.AST:
        node.id = self._rename(node.id)
        return node

    def visit_arg(self, node: ast.arg) -> ast.AST:
        node.arg = self._rename(node.arg)
        node.annotation = None
        return node


def _local_names(function: ast.FunctionDef) -> set[str]:
    """Parameters and every name the function (or a nested scope) binds."""
    names = {a.arg for a in ast.walk(function.args) if isinstance(a, ast.arg)}
    for node in ast.walk(function):
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store | ast.Del):
            names.add(node.id)
        elif isinstance(node, ast.arg):
            names.add(node.arg)
    return names


def _tokens(node: ast.AST) -> Iterator[str]:
    """The tree in pre-order: each node's type and the values that shape what it does."""
    yield type(node).__name__
    for field, value in ast.iter_fields(node):
        if field in ("ctx", "type_comment", "kind"):
            continue
        items = value if isinstance(value, list) else [value]
        for item in items:
            if isinstance(item, ast.AST):
                yield from _tokens(item)
            elif item is not None:
                yield f"{field}={item!r}"


@dataclass(frozen=True)
class Shape:
    """A function reduced to what it does: its tokens and its statement count."""

    tokens: tuple[str, ...]
    statements: int

    @property
    def is_short(self) -> bool:
        return self.statements < SHORT_STATEMENTS or len(self.tokens) < SHORT_TOKENS


def function_shape(source: bytes | str, name: str) -> Shape | None:
    """The normalised shape of top-level function ``name``; None if absent or unparsable."""
    try:
        tree = parse(source)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    function = next(
        (n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == name), None
    )
    if function is None:
        return None
    function.decorator_list = []
    function.returns = None
    normalised = _Normaliser(_local_names(function)).visit(function)
    body = [s for s in ast.walk(normalised) if isinstance(s, ast.stmt)]
    return Shape(tuple(_tokens(normalised)), len(body) - 1)


def similarity(mine: Shape, reference: Shape) -> float:
    """0..1: how much of the two token sequences match, in order."""
    return SequenceMatcher(None, mine.tokens, reference.tokens, autojunk=False).ratio()


def lab_similarity(
    lab: Lab, package: str, mine: Mapping[str, bytes], reference: Mapping[str, bytes]
) -> LabSimilarity:
    """One lab's figure; ``mine`` and ``reference`` map workspace paths to source."""
    weighted, weights, compared = 0.0, 0, []
    for function in lab.functions:
        path = f"{package}/{function.module}.py"
        theirs = function_shape(reference.get(path, b""), function.function)
        if theirs is None or theirs.is_short:
            continue
        learner = function_shape(mine.get(path, b""), function.function)
        score = similarity(learner, theirs) if learner is not None else 0.0
        weighted += score * len(theirs.tokens)
        weights += len(theirs.tokens)
        compared.append(function.name)
    figure = round(weighted / weights, 2) if weights else 0.0
    return LabSimilarity(lab.id, figure, tuple(compared))


def lab_similarities(
    manifest: Manifest, kit: Path, learner: Mapping[str, bytes]
) -> list[LabSimilarity]:
    """Every lab's figure for the learner files ``learner`` (workspace path → source)."""
    reference = {f.path: read_source(kit, f.reference) for f in manifest.files_with_role("learner")}
    return [lab_similarity(lab, manifest.package, learner, reference) for lab in manifest.labs]
