"""The starters are generated from the reference: lab code out, every stub naming its lab."""

from __future__ import annotations

import ast
import importlib
import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from course.harness.kit import kit_root
from course.harness.manifest import Manifest, WorkspaceFile, load_manifest
from course.tools.starters import (
    StarterError,
    Stub,
    generate_starter,
    probe_data_path,
    stale_starters,
)

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
    starter, reference = definitions(read(file.starter)), definitions(read(file.reference))
    for name, node in reference.items():
        if name in labs:
            continue
        assert name in starter, f"{file.starter} lacks {name}; copy it from {file.reference}"
        assert ast.dump(starter[name]) == ast.dump(node), (
            f"{file.starter}: {name} differs from {file.reference}; copy the reference definition"
        )
    extra = set(starter) - set(reference)
    assert not extra, f"{file.starter} defines {sorted(extra)}, which the reference does not"


@pytest.mark.parametrize("file", STARTERS, ids=module_of)
def test_lab_functions_keep_the_reference_signatures(file: WorkspaceFile) -> None:
    starter, reference = definitions(read(file.starter)), definitions(read(file.reference))
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
        for function, call in stubs(read(file.starter)):
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


def copy_of_the_kit(into: Path) -> Path:
    """The parts of the kit that generation reads: the package, the starters, the tests."""
    for part in ("course", "starters", "tests/chapter11"):
        shutil.copytree(
            kit_root() / part, into / part, ignore=shutil.ignore_patterns("__pycache__")
        )
    return into


def course_kit(kit: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "course.tools.maintainer", *args],
        cwd=kit,
        capture_output=True,
        text=True,
        check=False,
    )


def test_the_committed_starters_are_what_generation_gives() -> None:
    run = course_kit(kit_root(), "starters", "--check")
    assert run.returncode == 0, run.stderr
    assert stale_starters(MANIFEST, kit_root()) == []


def edit_by_hand(kit: Path, file: WorkspaceFile) -> None:
    with (kit / file.starter).open("a", encoding="utf-8") as starter:
        starter.write("\n# edited by hand\n")


@pytest.fixture(scope="module")
def repaired(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, int, int]:
    """A copy of the kit with every starter edited by hand, then regenerated: the copy, and
    the return codes of ``course-kit starters`` and of ``course-kit starters --check`` after it
    (each edited starter's test reads them: one regeneration repairs them all)."""
    kit = copy_of_the_kit(tmp_path_factory.mktemp("kit"))
    for file in STARTERS:
        edit_by_hand(kit, file)
    regenerated = course_kit(kit, "starters").returncode
    return kit, regenerated, course_kit(kit, "starters", "--check").returncode


@pytest.mark.parametrize("file", STARTERS, ids=module_of)
def test_an_edited_starter_fails_the_check_naming_the_file(
    file: WorkspaceFile, tmp_path: Path, repaired: tuple[Path, int, int]
) -> None:
    kit = copy_of_the_kit(tmp_path)
    edit_by_hand(kit, file)
    run = course_kit(kit, "starters", "--check")
    assert run.returncode == 1
    assert file.starter in run.stderr and "course-kit starters" in run.stderr
    edited, regenerated, checked = repaired
    assert regenerated == 0
    assert (edited / file.starter).read_text(encoding="utf-8") == read(file.starter), (
        f"{file.starter} is not the committed starter after regenerating"
    )
    assert checked == 0, "regenerating repairs it"


def test_a_lab_function_without_a_docstring_cannot_become_a_stub() -> None:
    lab = MANIFEST.labs[0]
    stub = Stub(lab, lab.functions[0])
    source = f"import math\n\n\ndef {lab.functions[0].function}(value):\n    return value\n"
    with pytest.raises(StarterError, match="needs a docstring"):
        generate_starter(source, {lab.functions[0].function: stub}, "reference.py")


@pytest.mark.parametrize("file", STARTERS, ids=module_of)
def test_a_learner_file_stays_short_enough_to_read(file: WorkspaceFile) -> None:
    lines = read(file.starter).count("\n")
    assert lines <= 250, f"{file.starter} has {lines} lines; move machinery to a given module"


def test_every_starter_imports_and_every_stub_raises_its_lab(tmp_path: Path) -> None:
    package = tmp_path / "starter_pkg"
    package.mkdir()
    for file in MANIFEST.files:
        if file.role != "test":
            shutil.copyfile(kit_root() / file.starter, package / Path(file.path).name)
    sys.path.insert(0, str(tmp_path))
    try:
        for file in STARTERS:
            module = importlib.import_module(f"starter_pkg.{module_of(file)}")
            for function, _ in stubs(read(file.starter)):
                assert callable(getattr(module, function))
    finally:
        sys.path.remove(str(tmp_path))
        for name in [n for n in sys.modules if n.split(".")[0] == "starter_pkg"]:
            del sys.modules[name]


def test_course_kit_crashtest_takes_the_crash_tests_own_options() -> None:
    from course.tools.maintainer import parser

    args = parser().parse_args(["crashtest", "--trials", "3", "--seed", "5"])
    assert (args.command, args.trials, args.seed) == ("crashtest", 3, 5)
    usage = subprocess.run(
        [sys.executable, "-m", "course.tools.maintainer", "crashtest", "--trials", "x"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert usage.returncode == 2 and "course-kit crashtest: error: argument --trials" in (
        usage.stderr
    )


def test_the_probe_cases_a_workspace_runs_follow_the_reference(tmp_path: Path) -> None:
    """The shipped probe data (cases, reference answers, inputs) is generated: a reference
    that answers differently makes it stale, named, until regenerated."""
    kit = copy_of_the_kit(tmp_path)
    data = probe_data_path(MANIFEST)
    assert data is not None
    shipped = json.loads((kit / data).read_text(encoding="utf-8"))
    assert shipped["seed"] == MANIFEST.probe_seed and shipped["chapter"] == MANIFEST.chapter
    assert set(shipped["expected"]) == {case["id"] for case in shipped["cases"]}
    assert set(shipped["inputs"]) == set(shipped["expected"])
    context = kit / "course" / "context.py"
    text = context.read_text(encoding="utf-8")
    forgets = "    available = max(0, max_tokens - system - reserved_output - safety_margin)\n"
    assert text.count(forgets) == 1, "the mutation below must still apply"
    context.write_text(text.replace(forgets, forgets.replace(" - safety_margin", "")), "utf-8")
    run = course_kit(kit, "starters", "--check")
    assert run.returncode == 1
    assert data in run.stderr, run.stderr
    assert course_kit(kit, "starters").returncode == 0
    assert course_kit(kit, "starters", "--check").returncode == 0, "regenerating repairs it"
