"""Moving reference code into a workspace: a lab's functions, copied by name (author checks)."""

from __future__ import annotations

import ast
from collections.abc import Mapping
from pathlib import Path

from course.harness.kit import read_source
from course.harness.manifest import Manifest, WorkspaceFile


class SolutionError(ValueError):
    """A lab's solution names a function that the reference does not define."""


def _top_level_function(tree: ast.Module, name: str) -> ast.FunctionDef | None:
    for node in tree.body:
        if isinstance(node, ast.FunctionDef) and node.name == name:
            return node
    return None


def _span(node: ast.FunctionDef) -> tuple[int, int]:
    """0-based [start, end) line span of a function, decorators included."""
    first = min([node.lineno, *(d.lineno for d in node.decorator_list)])
    assert node.end_lineno is not None
    return first - 1, node.end_lineno


def replace_function(source: str, donor: str, name: str) -> str:
    """``source`` with its top-level ``name`` replaced by (or appended from) ``donor``'s."""
    given = _top_level_function(ast.parse(donor), name)
    if given is None:
        raise SolutionError(f"{name}: not a top-level function of the reference")
    start, end = _span(given)
    new_lines = donor.splitlines(keepends=True)[start:end]
    lines = source.splitlines(keepends=True)
    old = _top_level_function(ast.parse(source), name)
    if old is None:
        return "".join(lines).rstrip("\n") + "\n\n\n" + "".join(new_lines)
    old_start, old_end = _span(old)
    return "".join(lines[:old_start] + new_lines + lines[old_end:])


def learner_file(manifest: Manifest, module: str) -> WorkspaceFile:
    path = f"{manifest.package}/{module}.py"
    for file in manifest.files:
        if file.path == path:
            return file
    raise SolutionError(f"{module}: no workspace file {path} in {manifest.source}")


def solve_lab(
    manifest: Manifest,
    kit: Path,
    workspace: Path,
    lab_id: str,
    donors: Mapping[str, str] | None = None,
) -> list[str]:
    """Copy the functions that solve ``lab_id`` into ``workspace``; returns them.

    They come from the reference, or from ``donors`` (module name → source) when given: another
    solution written for the same starters.
    """
    lab = manifest.lab(lab_id)
    for qualified in lab.solution:
        module, _, name = qualified.partition(".")
        file = learner_file(manifest, module)
        if donors is None:
            donor = read_source(kit, file.reference).decode("utf-8")
        elif module in donors:
            donor = donors[module]
        else:
            raise SolutionError(f"{qualified}: no {module}.py among the donor modules")
        path = workspace / file.path
        path.write_text(replace_function(path.read_text("utf-8"), donor, name), "utf-8")
    return list(lab.solution)
