"""Each lab earns its own credit: a lab is graded with the learner's code for it and the
reference's for every other lab, and nothing of that run reaches the learner but statuses.

``test_mutants.py`` shows that each curated mistake costs only its lab, and
``test_lab_independence.py`` that a lab written alone passes; here are the cases around them: a
module that does not import, a later lab written before an earlier one, what the run shows and
what it keeps to itself, and which labs are graded again.
"""

from __future__ import annotations

import ast
import contextlib
import json
import marshal
import types
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import Any
from unittest import mock

import pytest
from harness_support import DEFAULT_LIMITS, MakeWorkspace, replace_in, solved_workspace
from solutions import solve_lab

from course.grading.verdict import engine, probes
from course.grading.verdict.engine import GradingOptions, evaluate
from course.grading.verdict.forgery import stub_labs
from course.harness.manifest import Manifest
from course.harness.results import CheckpointResult

pytestmark = pytest.mark.costly  # handed to a worker first (tests/schedule.py)


def statuses(result: CheckpointResult) -> dict[str, str]:
    return {lab.lab.id: str(lab.status) for lab in result.labs}


Grade = Callable[[Path], CheckpointResult]


@pytest.fixture(scope="module")
def grade(manifest: Manifest, kit: Path, probe_set: probes.ProbeSet | None) -> Grade:
    def run(workspace: Path) -> CheckpointResult:
        options = GradingOptions(probes=probe_set)
        return evaluate(manifest, kit, workspace.resolve(), (), DEFAULT_LIMITS, options)

    return run


def test_a_module_that_does_not_import_costs_only_its_own_labs(
    manifest: Manifest, kit: Path, make_workspace: MakeWorkspace, grade: Grade
) -> None:
    workspace = solved_workspace(manifest, kit, make_workspace, "syntax")
    compaction = workspace / "pi_course" / "compaction.py"
    compaction.write_text(compaction.read_text(encoding="utf-8") + "\ndef broken(:\n")
    result = grade(workspace)
    found = statuses(result)
    assert {found.pop("11.4"), found.pop("11.5")} == {"error"}
    assert set(found.values()) == {"passed"}, found
    # the learner's own run shows why: every lab's tests stop at the import, which the labs
    # of compaction.py are charged with; the others keep their points
    assert any(
        "with your Lab 11.4 it fails, so Lab 11.4 loses its own" in note for note in result.notes
    ), result.notes
    assert {t.lab for t in result.tests if t.status == "passed"} == set(), "the own run's tests"
    assert [lab.lab.id for lab in result.labs if lab.credit and lab.credit.charged] == ["11.4"]


def test_a_later_lab_written_first_earns_its_points(
    manifest: Manifest, kit: Path, make_workspace: MakeWorkspace, grade: Grade
) -> None:
    workspace = make_workspace("later-first")
    for lab in ("11.1", "11.3"):
        solve_lab(manifest, kit, workspace, lab)
    result = grade(workspace)
    assert statuses(result)["11.3"] == "passed"
    assert statuses(result)["11.2"] == "pending"
    (note,) = [note for note in result.notes if note.startswith("Lab 11.3 ")]
    assert "Lab 11.2" in note and "not written yet" in note, note


def test_the_isolated_run_shows_nothing_of_the_reference(
    manifest: Manifest, kit: Path, make_workspace: MakeWorkspace, grade: Grade
) -> None:
    """A failing Lab 11.3 that reads the reference's modules where the isolated run has them on
    disk, then prints them, raises them and keeps them in its answers: every word of the result
    is the learner's own run's, where there is no reference to read."""
    workspace = solved_workspace(manifest, kit, make_workspace, "leaky")
    leak = (
        "    import glob\n"
        "    found = ''.join(open(p).read() for p in glob.glob('.reference/*.py'))\n"
        "    if found:\n"
        "        print('REFERENCE-SEEN', found)\n"
        "        raise ValueError('REFERENCE-SEEN ' + found)\n"
    )
    replace_in(
        workspace / "pi_course" / "context.py",
        "def select_groups(",
        "def select_groups(*args, **kwargs):\n"
        + leak
        + "    return _was_select_groups(*args, **kwargs)[::-1]\n\n\ndef _was_select_groups(",
    )
    result = grade(workspace)
    assert statuses(result)["11.3"] == "failed"
    shown = json.dumps(result.to_json(), ensure_ascii=False) + "\n".join(
        [*result.notes, *result.flags, *result.problems]
        + [line for t in result.tests for line in (t.message, *t.output, *t.shown)]
        + [f for lab in result.labs if lab.probes for f in lab.probes.failures]
    )
    assert "REFERENCE-SEEN" not in shown
    assert "_course_reference_" not in shown and ".reference" not in shown


def test_only_written_labs_that_fail_are_graded_again(
    manifest: Manifest, kit: Path, make_workspace: MakeWorkspace
) -> None:
    workspace = make_workspace("unwritten")
    learner = {
        f"{manifest.package}/{name}.py": (workspace / manifest.package / f"{name}.py").read_bytes()
        for name in ("summary", "groups", "context", "compaction")
    }
    assert set(stub_labs(manifest, kit, learner, manifest.labs)) == {
        lab.id for lab in manifest.labs
    }
    solve_lab(manifest, kit, workspace, "11.3")
    learner["pi_course/context.py"] = (workspace / "pi_course" / "context.py").read_bytes()
    assert set(stub_labs(manifest, kit, learner, manifest.labs)) == {
        "11.1",
        "11.2",
        "11.4",
        "11.5",
        "11.opt",
    }


WITNESS = """
def _witness():
    import gc, json, os, sys, types

    spec = os.environ.get("COURSE_ISOLATION")
    with open(spec, encoding="utf-8") if spec else open(os.devnull) as source:
        held = json.load(source).get("held", []) if spec else []
    functions = sorted({
        (found.__name__, found.__code__.co_filename)
        for found in gc.get_objects()
        if isinstance(found, types.FunctionType) and found.__name__ in LAB_FUNCTIONS
    })
    modules = sorted((name, getattr(module, "__file__", None) or "")
                     for name, module in list(sys.modules.items()))
    record = {"held": held, "functions": functions, "modules": modules}
    with open(os.path.join(WITNESSES, str(os.getpid())), "a", encoding="utf-8") as out:
        out.write(json.dumps(record) + "\\n")
"""


def lab_functions_in(path: Path, names: Mapping[str, str]) -> set[str]:
    """The lab functions (``names``: function → its lab) a module's source or byte code defines."""
    if path.suffix == ".py":
        tree = ast.parse(path.read_text(encoding="utf-8"))
        return {n.name for n in tree.body if isinstance(n, ast.FunctionDef) and n.name in names}
    code = marshal.loads(path.read_bytes()[16:])
    found, stack = set(), [code]
    while stack:
        for const in stack.pop().co_consts:
            if isinstance(const, types.CodeType):
                found |= {const.co_name} & names.keys()
                stack.append(const)
    return found


def test_no_run_holds_the_reference_of_a_lab_it_decides_on_disk_or_in_memory(
    manifest: Manifest, kit: Path, make_workspace: MakeWorkspace, tmp_path: Path
) -> None:
    """The invariant of per-lab credit, checked on every run of a workspace whose every lab
    function fails (so every kind of run is made): each graded copy's files (the cut reference
    and its byte code included) define no function of a lab the run does not hold, and no
    process of the run has loaded one, from any file."""
    names = {f.function: lab.id for lab in manifest.labs for f in lab.functions}
    witnesses = tmp_path / "witnesses"
    witnesses.mkdir()
    workspace = make_workspace("witnessed")
    for lab in manifest.labs:
        for function in lab.functions:
            path = workspace / manifest.package / f"{function.module}.py"
            text = path.read_text(encoding="utf-8")
            if "def _witness(" not in text:
                preamble = f"LAB_FUNCTIONS = {sorted(names)!r}\nWITNESSES = {str(witnesses)!r}\n"
                text += "\n\n" + preamble + WITNESS
            text = text.replace(
                f"def {function.function}(",
                f"def {function.function}(*args, **kwargs):\n    _witness()\n"
                f"    raise RuntimeError('wrong')\n\n\ndef _starter_{function.function}(",
            )
            path.write_text(text, encoding="utf-8")
    learner = {f.path for f in manifest.files_with_role("learner")}
    copies: list[tuple[frozenset[str], dict[str, set[str]]]] = []
    graded_run = engine.graded_run

    @contextlib.contextmanager
    def watched(*given: Any, **named: Any) -> Iterator[Any]:
        with graded_run(*given, **named) as run:
            spec = run.copy / ".isolation.json"
            held = (
                json.loads(spec.read_text(encoding="utf-8")).get("held", [])
                if spec.exists()
                else []
            )
            defined = {
                str(path): lab_functions_in(path, names)
                for root in (run.copy, run.library)
                for path in root.rglob("*")
                if path.suffix in (".py", ".pyc")
                and path.relative_to(root).as_posix() not in learner
            }
            copies.append((frozenset(held), defined))
            yield run

    options = GradingOptions(sandbox="off")
    with mock.patch.object(engine, "graded_run", watched):
        result = evaluate(manifest, kit, workspace, (), DEFAULT_LIMITS, options)
    assert {str(lab.status) for lab in result.labs} == {"failed"}
    for held, defined in copies:
        for path, functions in defined.items():
            stray = {f for f in functions if names[f] not in held}
            assert not stray, f"a run holding {sorted(held)} has {sorted(stray)} in {path}"
    kinds = {len(held) for held, _ in copies}
    assert {0, 1, len(manifest.labs) - 1} <= kinds, "the own run, a swap and a lab on its own"
    records = [
        json.loads(line)
        for path in witnesses.iterdir()
        for line in path.read_text(encoding="utf-8").splitlines()
    ]
    assert records and {len(r["held"]) for r in records} >= {0, len(manifest.labs) - 1}
    for record in records:
        for name, file in record["functions"]:
            assert file.endswith(f"{manifest.package}/{Path(file).name}") or (
                "/.reference/" in file and names[name] in record["held"]
            ), f"a process holding {record['held']} loaded {name} from {file}"
        package = f"{kit / manifest.reference}/"  # the kit's own reference package
        kit_files = [file for _, file in record["modules"] if file.startswith(package)]
        assert not kit_files, f"a process loaded the kit's own modules: {kit_files}"
