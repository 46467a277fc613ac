"""Instructor tests: test files learners never see, run beside the focused tests and counted.

``checkpoint CHAPTER --hidden DIR`` copies every ``test_*.py`` of ``DIR`` next to the focused
tests in the graded copy (so they share its ``conftest.py`` and helpers) and adds their tests
to their labs. How many tests each lab gains is read from the files here, on the grader's
side, so a test process that leaves instructor tests out of its report cannot shrink a lab.
Each test is a module-level function with ``@pytest.mark.lab("ID")``; ``parametrize`` with a
literal list of cases counts each case.
"""

from __future__ import annotations

import ast
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from .manifest import Manifest


class HiddenTestError(ValueError):
    """Instructor tests cannot be used; the message names the file and the test."""


@dataclass(frozen=True)
class HiddenTests:
    """Instructor test files by name, and how many tests each lab gains from them."""

    files: Mapping[str, bytes]
    counts: Mapping[str, int]

    def paths(self, manifest: Manifest) -> dict[str, bytes]:
        """The files at their place in a graded copy: beside the focused tests."""
        folder = PurePosixPath(manifest.focused_tests).parent
        return {(folder / name).as_posix(): data for name, data in self.files.items()}

    def holds(self, manifest: Manifest, nodeid: str) -> bool:
        """Whether a collected test comes from one of these files."""
        return nodeid.partition("::")[0] in self.paths(manifest)


def _mark(decorator: ast.expr, name: str) -> ast.Call | None:
    """``decorator`` if it is a call of ``….mark.<name>(…)``."""
    if isinstance(decorator, ast.Call) and ast.unparse(decorator.func).endswith(f"mark.{name}"):
        return decorator
    return None


def _cases(call: ast.Call, where: str) -> int:
    values = call.args[1] if len(call.args) > 1 else None
    if not isinstance(values, ast.List | ast.Tuple):
        raise HiddenTestError(f"{where}: parametrize needs a literal list of cases to be counted")
    return len(values.elts)


def count_tests(source: str, where: str, labs: set[str]) -> dict[str, int]:
    """How many tests each lab gets from one instructor test file."""
    try:
        tree = ast.parse(source, filename=where)
    except SyntaxError as error:
        raise HiddenTestError(
            f"{where}: not valid Python ({error.msg}, line {error.lineno})"
        ) from None
    counts: dict[str, int] = {}
    for node in tree.body:
        if isinstance(node, ast.ClassDef) and node.name.startswith("Test"):
            raise HiddenTestError(f"{where}: {node.name}: write instructor tests as functions")
        if not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            continue
        if not node.name.startswith("test"):
            continue
        test = f"{where}::{node.name}"
        marks = [m for d in node.decorator_list if (m := _mark(d, "lab")) is not None]
        if len(marks) != 1 or len(marks[0].args) != 1:
            raise HiddenTestError(f'{test}: needs exactly one @pytest.mark.lab("ID")')
        lab = marks[0].args[0]
        if not isinstance(lab, ast.Constant) or lab.value not in labs:
            known = ", ".join(sorted(labs))
            raise HiddenTestError(f"{test}: lab {ast.unparse(lab)} is not a lab ({known})")
        cases = 1
        for decorator in node.decorator_list:
            call = _mark(decorator, "parametrize")
            if call is not None:
                cases *= _cases(call, test)
        counts[str(lab.value)] = counts.get(str(lab.value), 0) + cases
    if not counts:
        raise HiddenTestError(f"{where}: holds no test functions")
    return counts


def read_hidden(directory: Path, manifest: Manifest) -> HiddenTests:
    """Every ``test_*.py`` of ``directory``, checked and counted."""
    if not directory.is_dir():
        raise HiddenTestError(f"{directory}: not a directory of instructor tests")
    shipped = {PurePosixPath(f.path).name for f in manifest.files_with_role("test")}
    files: dict[str, bytes] = {}
    counts: dict[str, int] = {}
    labs = {lab.id for lab in manifest.labs}
    for path in sorted(directory.glob("test_*.py")):
        if not path.is_file():
            raise HiddenTestError(f"{path}: not a regular file")
        if path.name in shipped:
            raise HiddenTestError(f"{path}: has the name of a focused test file; rename it")
        data = path.read_bytes()
        for lab, count in count_tests(data.decode("utf-8"), path.name, labs).items():
            counts[lab] = counts.get(lab, 0) + count
        files[path.name] = data
    if not files:
        raise HiddenTestError(f"{directory}: no test_*.py files")
    return HiddenTests(files, counts)
