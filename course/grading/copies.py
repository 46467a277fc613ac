"""Lab functions whose code is the reference's, node for node: copied rather than written.

Copying the reference's text passes every check honestly (it is the reference); that is a
matter of academic honesty, not forgery, so it is only flagged. The comparison is of syntax
trees without docstrings: comments, blank lines and quoting do not hide a copy, renaming does.
"""

from __future__ import annotations

import ast
import threading
from collections.abc import Mapping
from pathlib import Path

from ..harness.kit import read_source
from ..harness.manifest import Manifest

_PARSING = threading.Lock()
"""CPython 3.11's AST conversion keeps its recursion depth per interpreter, not per thread:
two threads parsing at once can fail with ``SystemError``. Workspaces are graded in threads."""


def _function(source: bytes, name: str) -> str | None:
    """The shape of top-level function ``name`` (docstring left out), None if there is none."""
    with _PARSING:
        try:
            tree = ast.parse(source)
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            return None
        return _shape(tree, name)


def _shape(tree: ast.Module, name: str) -> str | None:
    for node in tree.body:
        if isinstance(node, ast.FunctionDef) and node.name == name:
            body = node.body
            if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
                node.body = body[1:]
            return ast.dump(node)
    return None


def identical_functions(manifest: Manifest, kit: Path, learner: Mapping[str, bytes]) -> list[str]:
    """The lab functions (``module.function``) whose learner code is the reference's."""
    targets = {f.path: f.reference for f in manifest.files_with_role("learner")}
    found = []
    for lab in manifest.labs:
        for function in lab.functions:
            path = f"{manifest.package}/{function.module}.py"
            if path not in learner or path not in targets:
                continue
            mine = _function(learner[path], function.function)
            reference = _function(read_source(kit, targets[path]), function.function)
            if mine is not None and mine == reference:
                found.append(function.name)
    return list(dict.fromkeys(found))
