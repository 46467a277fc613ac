"""Each lab earns its own credit: a lab is graded with the learner's code for it and the
reference's for every other lab, and nothing of that run reaches the learner but statuses.

``test_mutants.py`` shows that each curated mistake costs only its lab, and
``test_lab_independence.py`` that a lab written alone passes; here are the cases around them: a
module that does not import, a later lab written before an earlier one, what the run shows and
what it keeps to itself, and which labs are graded again.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest
from harness_support import DEFAULT_LIMITS, MakeWorkspace, replace_in, solved_workspace
from solutions import solve_lab

from course.grading import probes
from course.grading.engine import GradingOptions, evaluate
from course.grading.forgery import stub_labs
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
    # the learner's own run shows why: every lab's tests stop at the import
    assert any("Lab 11.3 passes with the reference's other labs" in note for note in result.notes)
    assert any("Lab 11.4, Lab 11.5" in note for note in result.notes), result.notes


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
    assert "Lab 11.2" in note, note


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
