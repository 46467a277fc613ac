"""Per-lab credit's search (``grading/verdict/isolated.py``'s ``credit``), against a model of a
class's workspaces: which runs it asks for, and whom it charges.

The model: each lab either has a bug of its own, or passes as soon as the labs it ``needs``
(those whose learner code, or starter's stub, breaks it) are the reference's; a run passes a lab
exactly then. The search sees only what runs say, like the engine's.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from course.grading.verdict.isolated import HeldLabError, credit, isolation_files
from course.harness.manifest import Lab, Manifest
from course.harness.results import CheckpointResult, LabResult, TestOutcome
from course.sandboxed.status import Status

LABS = ("11.1", "11.2", "11.3", "11.4", "11.5", "11.opt")


@dataclass(frozen=True)
class Workspace:
    unwritten: frozenset[str]
    bugged: frozenset[str]  # a bug of its own: it passes in no run
    needs: dict[str, frozenset[str]]  # what breaks it while the learner's (or the stub)
    silent: frozenset[str] = frozenset()  # reaching a stub, it fails (catches what it raises)

    def passes(self, lab: str, held: frozenset[str]) -> bool:
        if lab in self.unwritten or lab in self.bugged:
            return False
        return self.needs[lab] <= held

    def status(self, lab: str, held: frozenset[str]) -> Status:
        if self.passes(lab, held):
            return Status.PASSED
        stops = lab not in self.silent and (self.needs[lab] - held) & self.unwritten
        if lab in self.unwritten or stops:
            return Status.PENDING  # it stops at a lab not written yet
        return Status.FAILED


@st.composite
def workspaces(draw: st.DrawFn) -> Workspace:
    unwritten = draw(st.frozensets(st.sampled_from(LABS)))
    bugged = draw(st.frozensets(st.sampled_from(LABS))) - unwritten
    needs = {
        lab: draw(st.frozensets(st.sampled_from([other for other in LABS if other != lab])))
        for lab in LABS
    }
    return Workspace(unwritten, bugged, needs, draw(st.frozensets(st.sampled_from(LABS))))


def result(
    manifest: Manifest, labs: Sequence[Lab], statuses: dict[str, Status]
) -> CheckpointResult:
    def one(lab: Lab) -> LabResult:
        test = TestOutcome(f"t.py::test_{lab.id}", f"test_{lab.id}", lab.id, statuses[lab.id])
        return LabResult(lab, (test,), 1)

    return CheckpointResult(manifest.chapter, "", tuple(one(lab) for lab in labs))


@dataclass
class Runs:
    """The fake credit runner, recording what it was asked."""

    manifest: Manifest
    workspace: Workspace
    asked: list[tuple[frozenset[str], tuple[str, ...]]]

    def __call__(self, held: frozenset[str], deciding: Sequence[Lab]) -> CheckpointResult:
        ids = tuple(lab.id for lab in deciding)
        self.asked.append((held, ids))
        statuses = {lab: self.workspace.status(lab, held) for lab in ids}
        return result(self.manifest, deciding, statuses)


def graded(manifest: Manifest, workspace: Workspace) -> tuple[CheckpointResult, Runs]:
    own = result(manifest, manifest.labs, {lab: workspace.status(lab, frozenset()) for lab in LABS})
    runs = Runs(manifest, workspace, [])
    return credit(manifest, own, workspace.unwritten, runs), runs


@settings(max_examples=400)
@given(workspace=workspaces())
def test_no_run_decides_a_lab_whose_reference_it_holds(
    manifest: Manifest, workspace: Workspace
) -> None:
    """Each run holds either every lab but the one it decides, or the unwritten labs and at most
    one written lab; never a lab it decides."""
    _, runs = graded(manifest, workspace)
    for held, deciding in runs.asked:
        assert deciding and not held & set(deciding), (held, deciding)
        alone = len(deciding) == 1 and held == frozenset(LABS) - set(deciding)
        assert alone or len(held - workspace.unwritten) <= 1, (held, deciding)


@settings(max_examples=400)
@given(workspace=workspaces())
@example(  # Lab 11.3 fails through the unwritten Lab 11.5, without stopping at its stub
    Workspace(
        frozenset({"11.5"}),
        frozenset(),
        dict.fromkeys(LABS, frozenset[str]()) | {"11.3": frozenset({"11.5"})},
        frozenset({"11.3"}),
    )
)
def test_credit_is_earned_by_the_learners_own_code_and_charged_to_the_lab_that_broke_it(
    manifest: Manifest, workspace: Workspace
) -> None:
    decided, _ = graded(manifest, workspace)
    charged: dict[str, set[str]] = {}
    for lab in decided.labs:
        own_passes = workspace.passes(lab.lab.id, frozenset())
        credit = lab.credit
        for charge in credit.charged if credit else ():
            charged.setdefault(lab.lab.id, set()).add(charge.lab)
        if own_passes:
            assert credit is None or not credit.through
            continue
        if credit is not None and credit.through:  # its own code passes once they are swapped
            culprits = set(credit.through)
            assert workspace.passes(lab.lab.id, frozenset(workspace.unwritten | culprits))
            assert culprits <= workspace.unwritten or len(culprits) == 1, culprits
            assert (lab.status == Status.PASSED) == (not credit.charged), lab
        else:  # no single lab explains it, or its own code fails it
            single = [
                z
                for z in LABS
                if z not in workspace.unwritten
                and z != lab.lab.id
                and workspace.passes(lab.lab.id, workspace.unwritten | {z})
            ]
            alone = workspace.passes(lab.lab.id, workspace.unwritten)
            written = lab.lab.id not in workspace.unwritten
            assert not (written and (single or alone)), (lab.lab.id, single, alone)
    for lab in decided.labs:
        through = lab.credit.through if lab.credit else ()
        for culprit in through:
            if culprit not in workspace.unwritten:
                assert lab.lab.id in charged.get(culprit, set()), (culprit, lab.lab.id)
        if through and workspace.passes(lab.lab.id, workspace.unwritten):
            # the starter's stubs replaced alone pass it: no written lab is charged for it
            assert set(through) <= workspace.unwritten, (lab.lab.id, through)


def test_a_lab_whose_failure_one_lab_explains_charges_that_lab(manifest: Manifest) -> None:
    """The issue's example: Lab 11.5 fails only through Lab 11.2, whose own tests pass."""
    needs = dict.fromkeys(LABS, frozenset[str]()) | {"11.5": frozenset({"11.2"})}
    decided, runs = graded(manifest, Workspace(frozenset(), frozenset(), needs))
    lab = {lab.lab.id: lab for lab in decided.labs}
    assert lab["11.2"].status == Status.FAILED and lab["11.5"].status == Status.PASSED
    assert lab["11.2"].credit is not None and lab["11.5"].credit is not None
    assert [(c.lab, c.name) for c in lab["11.2"].credit.charged] == [("11.5", "test_11.5")]
    assert lab["11.5"].credit.through == ("11.2",)
    assert decided.passed == 4 and decided.score == 80, "its own run's counts; 11.2 charged"
    assert (frozenset(LABS) - {"11.5"}, ("11.5",)) in runs.asked


def test_a_run_decides_only_labs_it_does_not_hold(manifest: Manifest, kit: Path) -> None:
    with pytest.raises(HeldLabError, match="11.3"):
        isolation_files(manifest, kit, {"11.2", "11.3"}, ["11.3"])
