"""The starters are the reference minus lab code, and every stub names its own lab."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from course.harness.kit import kit_root
from course.harness.manifest import Manifest, WorkspaceFile, load_manifest

MANIFEST = load_manifest("11")
STARTERS = MANIFEST.files_with_role("learner")
STUB = "LabNotImplemented"


def module_of(file: WorkspaceFile) -> str:
    return Path(file.path).stem


def lab_functions(manifest: Manifest, module: str) -> set[str]:
    """Names of the reference functions that the labs write in ``module``."""
    return {
        name.partition(".")[2]
        for lab in manifest.labs
        for name in lab.solution
        if name.partition(".")[0] == module
    }


def definitions(source: str) -> dict[str, ast.stmt]:
    """Top-level statements by the name they bind (imports and the docstring left out)."""
    named: dict[str, ast.stmt] = {}
    for node in ast.parse(source).body:
        if isinstance(node, ast.FunctionDef | ast.ClassDef):
            named[node.name] = node
        elif isinstance(node, ast.Assign | ast.AnnAssign):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            named[" ".join(ast.unparse(t) for t in targets)] = node
        elif isinstance(node, ast.Assert):
            named[f"assert {ast.unparse(node.test)}"] = node
    return named


def read(path: str) -> str:
    return (kit_root() / path).read_text(encoding="utf-8")


@pytest.mark.parametrize("file", STARTERS, ids=module_of)
def test_outside_lab_code_the_starter_is_the_reference(file: WorkspaceFile) -> None:
    labs = lab_functions(MANIFEST, module_of(file))
    starter, reference = definitions(read(file.parent)), definitions(read(file.target))
    for name, node in reference.items():
        if name in labs:
            continue
        assert name in starter, f"{file.parent} lacks {name}; copy it from {file.target}"
        assert ast.dump(starter[name]) == ast.dump(node), (
            f"{file.parent}: {name} differs from {file.target}; copy the reference definition"
        )
    extra = set(starter) - set(reference)
    assert not extra, f"{file.parent} defines {sorted(extra)}, which the reference does not"


@pytest.mark.parametrize("file", STARTERS, ids=module_of)
def test_lab_functions_keep_the_reference_signatures(file: WorkspaceFile) -> None:
    starter, reference = definitions(read(file.parent)), definitions(read(file.target))
    for name in lab_functions(MANIFEST, module_of(file)):
        ours = reference[name]
        assert isinstance(ours, ast.FunctionDef)
        if name.startswith("_"):
            continue  # private helpers are the learner's choice
        theirs = starter[name]
        assert isinstance(theirs, ast.FunctionDef)
        assert ast.dump(theirs.args) == ast.dump(ours.args), f"{name}: parameters differ"
        same_return = ast.unparse(theirs.returns or ast.Constant(None)) == ast.unparse(
            ours.returns or ast.Constant(None)
        )
        assert same_return, f"{name}: return type differs"


def stubs(source: str) -> list[tuple[str, ast.Call]]:
    """(enclosing function, call) for every ``LabNotImplemented(...)`` in a module."""
    found = []
    for function in ast.parse(source).body:
        if isinstance(function, ast.FunctionDef):
            for node in ast.walk(function):
                if isinstance(node, ast.Call) and ast.unparse(node.func) == STUB:
                    found.append((function.name, node))
    return found


def test_every_stub_names_its_lab_title_and_function() -> None:
    titles = {lab.id: lab.title for lab in MANIFEST.labs}
    seen: set[str] = set()
    for file in STARTERS:
        for function, call in stubs(read(file.parent)):
            lab_id, title, named, hint = (ast.literal_eval(arg) for arg in call.args)
            assert lab_id in titles, f"{function}: unknown lab {lab_id}"
            assert title == titles[lab_id], f"{function}: title {title!r} is not the manifest's"
            assert named == function and hint
            seen.add(lab_id)
            owner = next(
                lab for lab in MANIFEST.labs if f"{module_of(file)}.{function}" in lab.solution
            )
            assert owner.id == lab_id, f"{function} belongs to Lab {owner.id}, not {lab_id}"
    assert seen == set(titles), "every lab has at least one stub"
