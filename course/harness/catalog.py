"""Which tests a chapter has and the lab each belongs to, read from test files on the kit's side.

A test is a module-level function with ``@pytest.mark.lab("ID")`` (``parametrize`` with a literal
list counts each case), read from the pristine files, never from what a test process says, so a
forged report cannot add a test, move one to another lab or count one twice.
"""

from __future__ import annotations

import ast
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from .kit import KitError, read_source
from .manifest import Manifest
from .pysource import parse


class CatalogError(ValueError):
    """A test file cannot be catalogued; the message names the file and the test."""


@dataclass(frozen=True)
class CatalogTest:
    """One test function of a test file, and how many test cases it stands for."""

    file: str  # relative to the run's root (as pytest's node ids write it)
    function: str
    lab: str
    cases: int = 1


@dataclass(frozen=True)
class Catalog:
    """Every test of a run, in file order."""

    tests: tuple[CatalogTest, ...] = ()

    def __add__(self, other: Catalog) -> Catalog:
        return Catalog(self.tests + other.tests)

    def of_lab(self, lab: str) -> tuple[CatalogTest, ...]:
        return tuple(test for test in self.tests if test.lab == lab)

    def count(self, lab: str) -> int:
        """How many test cases ``lab`` has."""
        return sum(test.cases for test in self.of_lab(lab))

    def find(self, nodeid: str) -> CatalogTest | None:
        """The test a node id (``file::function[case]``) stands for; None if there is none."""
        file, _, name = nodeid.partition("::")
        function = name.partition("[")[0]
        return next((t for t in self.tests if t.file == file and t.function == function), None)


def _marks(node: ast.FunctionDef | ast.AsyncFunctionDef, name: str) -> list[ast.Call]:
    """The decorators of ``node`` that call ``….mark.<name>(…)``."""
    calls = [d for d in node.decorator_list if isinstance(d, ast.Call)]
    return [call for call in calls if ast.unparse(call.func).endswith(f"mark.{name}")]


def test_functions(source: str, file: str, labs: Iterable[str]) -> tuple[CatalogTest, ...]:
    """The tests of one file, each with its lab; a ``CatalogError`` names what is wrong."""
    known = set(labs)
    try:
        tree = parse(source, filename=file)
    except SyntaxError as error:
        raise CatalogError(f"{file}: not valid Python ({error.msg}, line {error.lineno})") from None
    tests: list[CatalogTest] = []
    for node in tree.body:
        if isinstance(node, ast.ClassDef) and node.name.startswith("Test"):
            raise CatalogError(f"{file}: {node.name}: write the tests as functions")
        if not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) or node.name[:4] != "test":
            continue
        where = f"{file}::{node.name}"
        marks = _marks(node, "lab")
        if len(marks) != 1 or len(marks[0].args) != 1:
            raise CatalogError(f'{where}: needs exactly one @pytest.mark.lab("ID")')
        lab = marks[0].args[0]
        if not isinstance(lab, ast.Constant) or lab.value not in known:
            names = ", ".join(sorted(known))
            raise CatalogError(f"{where}: lab {ast.unparse(lab)} is not a lab ({names})")
        cases = 1
        for call in _marks(node, "parametrize"):
            values = call.args[1] if len(call.args) > 1 else None
            if not isinstance(values, ast.List | ast.Tuple):
                said = "parametrize needs a literal list of cases to be counted"
                raise CatalogError(f"{where}: {said}")
            cases *= len(values.elts)
        tests.append(CatalogTest(file, node.name, str(lab.value), cases))
    return tuple(tests)


def read_catalog(files: Mapping[str, bytes], labs: Iterable[str]) -> Catalog:
    known = tuple(labs)
    tests: list[CatalogTest] = []
    for path, data in files.items():
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError:
            raise CatalogError(f"{path}: not UTF-8 text") from None
        tests += test_functions(text, path, known)
    return Catalog(tuple(tests))


CatalogReader = Callable[[Mapping[str, bytes], Sequence[str]], Catalog]


def kit_catalog(manifest: Manifest, kit: Path, read: CatalogReader = read_catalog) -> Catalog:
    """The chapter's focused tests as the kit ships them, checked against the manifest's counts
    (``read``: ``read_catalog``, or a reader that keeps what it read, the grader's)."""
    shipped = {file.path: file.starter for file in manifest.files}  # a test's place in the kit
    files = {path: read_source(kit, shipped.get(path, path)) for path in manifest.test_files}
    catalog = read(files, [lab.id for lab in manifest.labs])
    for lab in manifest.labs:
        if catalog.count(lab.id) != lab.tests:
            raise KitError(
                f"Lab {lab.id}: {manifest.source} promises {lab.tests} tests, but "
                f"{lab.test_file} has {catalog.count(lab.id)}"
            )
    return catalog
