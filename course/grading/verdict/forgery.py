"""Reports no real code can give: a lab whose functions are the starter's stubs reported passing.

A flag accuses only where a report is impossible. A lab function the module binds (its last
definition, the one Python runs) whose body is the starter's, docstring aside, raises
``LabNotImplemented``: a passing test of that lab can only be a forged report.
"""

from __future__ import annotations

import ast
from collections.abc import Mapping, Sequence
from pathlib import Path

from ...harness.kit import read_source
from ...harness.manifest import Lab, Manifest
from ...harness.pysource import parse
from ...harness.results import CheckpointResult
from ...locale import gettext as _
from ...sandboxed.status import Status


def _bodies(source: bytes, path: str) -> dict[str, str]:
    """Each top-level function's body without its docstring, as ``ast.dump`` gives it; the last
    definition of a name is the one kept ({} when the module does not parse)."""
    try:
        tree = parse(source, path)
    except (SyntaxError, ValueError):
        return {}
    found: dict[str, str] = {}
    for node in tree.body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            body = node.body
            first = body[0] if body else None
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant):
                body = body[1:]  # the docstring: an edition may translate it
            found[node.name] = "\n".join(ast.dump(statement) for statement in body)
        else:
            for name in _assigned(node):
                found.pop(name, None)  # rebound to something else: no longer the def
    return found


def _assigned(node: ast.stmt) -> list[str]:
    targets: list[ast.expr] = []
    if isinstance(node, ast.Assign):
        targets = list(node.targets)
    elif isinstance(node, ast.AnnAssign | ast.AugAssign):
        targets = [node.target]
    elif isinstance(node, ast.ClassDef):
        return [node.name]
    elif isinstance(node, ast.Import | ast.ImportFrom):
        return [(alias.asname or alias.name).partition(".")[0] for alias in node.names]
    return [target.id for target in targets if isinstance(target, ast.Name)]


def stub_labs(
    manifest: Manifest, kit: Path, learner: Mapping[str, bytes], labs: Sequence[Lab]
) -> list[str]:
    """The labs of ``labs`` whose every function is still the starter's stub."""
    files = {Path(f.path).stem: f for f in manifest.files_with_role("learner")}
    mine: dict[str, dict[str, str]] = {}
    starter: dict[str, dict[str, str]] = {}
    for module, file in files.items():
        if file.path in learner:
            mine[module] = _bodies(learner[file.path], file.path)
            starter[module] = _bodies(read_source(kit, file.starter), file.starter)
    found = []
    for lab in labs:
        stubs = [
            f.function in starter.get(f.module, {})
            and mine.get(f.module, {}).get(f.function) == starter[f.module][f.function]
            for f in lab.functions
        ]
        if stubs and all(stubs):
            found.append(lab.id)
    return found


def forged_flags(result: CheckpointResult, stubs: Sequence[str]) -> tuple[str, ...]:
    """A flag for each lab of ``stubs`` whose focused tests report passing."""
    said = _(
        "Lab {lab}: a forged report: its functions are the starter's stubs, yet its tests "
        "report passing"
    )
    return tuple(
        said.format(lab=lab.lab.id)
        for lab in result.labs
        if lab.lab.id in stubs and lab.tests and lab.tests_status == Status.PASSED
    )
