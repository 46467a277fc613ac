"""Each lab stands alone: writing one lab changes that lab's results and no other lab's.

A lab is written five ways: the reference's functions moved in, three solutions written from
the starters' docstrings without the reference, and a variant of the third that estimates
every group before choosing (``own_solutions/``). Written alone, a lab leaves every other lab's
tests as in a fresh workspace (pending, at some lab's stub) and passes itself: it is graded
with the reference's code for the labs it builds on (``isolated.py``). Written after the labs
it builds on, it turns exactly its own lab green. A sixth, the third with a parser that finds a
summary's faults in another order (``fifth/``), passes whole on its own code.
"""

from __future__ import annotations

import ast
from collections.abc import Callable
from pathlib import Path

import pytest
from harness_support import DEFAULT_LIMITS, MakeWorkspace, plain_pytest
from solutions import replace_function, solve_lab

from course.grading.intake.safefs import Tree
from course.grading.intake.snapshot import workspace_snapshot
from course.grading.verdict import engine, probes
from course.grading.verdict.engine import GradingOptions, evaluate
from course.harness.manifest import Manifest
from course.harness.results import CheckpointResult

pytestmark = pytest.mark.costly  # handed to a worker first (tests/schedule.py)

OWN_SOLUTIONS = Path(__file__).parent / "own_solutions"
AUTHORS = ("reference", "first", "second", "third", "fourth")
LABS = ("11.1", "11.2", "11.3", "11.4", "11.5", "11.opt")

Outcomes = dict[str, tuple[str | None, str, str]]
Grade = Callable[[Path], CheckpointResult]


BASED_ON = {"fourth": "third", "fifth": "third"}
"""A variant holds only what it changes: modules (``fourth/``) or functions (``fifth/``); the
rest is its base's."""


def donors(author: str) -> dict[str, str] | None:
    """Module name → source of an own solution; None for the reference."""
    if author == "reference":
        return None
    base = donors(BASED_ON[author]) or {} if author in BASED_ON else {}
    modules = dict(base)
    for path in (OWN_SOLUTIONS / author).glob("*.py"):
        source = path.read_text(encoding="utf-8")
        if path.stem in base:  # the variant's functions in its base's module
            for node in ast.parse(source).body:
                if isinstance(node, ast.FunctionDef):
                    source_of_base = modules[path.stem]
                    modules[path.stem] = replace_function(source_of_base, source, node.name)
        else:
            modules[path.stem] = source
    return modules


def outcomes(result: CheckpointResult) -> Outcomes:
    """Test name → (lab, status, message), the optional lab's tests included."""
    return {t.name: (t.lab, t.status, t.message) for t in result.tests}


def statuses(result: CheckpointResult) -> dict[str, str]:
    return {lab.lab.id: lab.status for lab in result.labs}


@pytest.fixture(scope="module")
def grade(manifest: Manifest, kit: Path, probe_set: probes.ProbeSet | None) -> Grade:
    def run(workspace: Path) -> CheckpointResult:
        return evaluate(
            manifest, kit, workspace.resolve(), (), DEFAULT_LIMITS, GradingOptions(probes=probe_set)
        )

    return run


@pytest.fixture(scope="module")
def fresh(
    manifest: Manifest, kit: Path, grade: Grade, tmp_path_factory: pytest.TempPathFactory
) -> CheckpointResult:
    from course.harness.workspace import create_workspace

    workspace = tmp_path_factory.mktemp("fresh") / "practice"
    create_workspace(manifest, kit, workspace)
    return grade(workspace)


def test_the_own_solutions_cover_every_lab_function(manifest: Manifest) -> None:
    assert [lab.id for lab in manifest.labs] == list(LABS)
    for author in AUTHORS[1:]:
        sources = donors(author)
        assert sources is not None
        for lab in manifest.labs:
            for function in lab.functions:
                assert f"def {function.function}(" in sources.get(function.module, ""), (
                    f"{author}/{function.module}.py lacks {function.function}"
                )


@pytest.mark.parametrize("author", AUTHORS)
@pytest.mark.parametrize("lab_id", LABS)
def test_a_lab_written_alone_earns_its_lab_and_changes_no_other(
    lab_id: str,
    author: str,
    manifest: Manifest,
    kit: Path,
    grade: Grade,
    fresh: CheckpointResult,
    make_workspace: MakeWorkspace,
) -> None:
    """Each lab earns its own credit: written alone (by the reference or an own solution), it
    passes, graded with the reference's code for the labs still unwritten (its tests show what
    the learner's own run showed: each passes, or stops at a lab not written yet)."""
    workspace = make_workspace(f"only-{lab_id}-{author}")
    solve_lab(manifest, kit, workspace, lab_id, donors(author))
    result = grade(workspace)
    before, after = outcomes(fresh), outcomes(result)
    assert after.keys() == before.keys()
    for name, (lab, status, message) in after.items():
        if lab != lab_id:
            # a test of a later lab may now stop at a later stub, but it stays pending
            assert status == before[name][1], f"{name} is {status} with Lab {lab_id}: {message}"
        else:
            assert status in ("passed", "pending"), f"{name}: {message}"
            assert status == "passed" or f"Lab {lab_id} " not in message, message
    others = {k: v for k, v in statuses(result).items() if k != lab_id}
    assert others == {k: v for k, v in statuses(fresh).items() if k != lab_id}
    assert statuses(result)[lab_id] == "passed"
    written = result.lab(lab_id)
    assert written is not None
    if written.credit is not None:  # it stopped at a lab not written yet: no lab is charged
        assert written.credit.unwritten and not written.credit.charged, written.credit
        assert not any(lab.credit and lab.credit.charged for lab in result.labs)


@pytest.mark.parametrize("author", AUTHORS[1:])
def test_own_solutions_written_in_order_turn_exactly_their_lab_green(
    author: str,
    manifest: Manifest,
    kit: Path,
    grade: Grade,
    fresh: CheckpointResult,
    make_workspace: MakeWorkspace,
) -> None:
    workspace = make_workspace(f"own-{author}")
    sources = donors(author)
    expected = statuses(fresh)
    for lab_id in LABS:
        solve_lab(manifest, kit, workspace, lab_id, sources)
        expected[lab_id] = "passed"
        result = grade(workspace)
        failures = [f"{t.name}: {t.message}" for t in result.tests if t.status == "failed"]
        assert statuses(result) == expected, f"{author}, after Lab {lab_id}: {failures}"


def test_a_solution_that_finds_a_summarys_faults_in_another_order_passes_on_its_own_code(
    manifest: Manifest,
    kit: Path,
    probe_set: probes.ProbeSet | None,
    make_workspace: MakeWorkspace,
) -> None:
    """``fifth/`` reports a missing summary key before an unknown one; the contract states no
    precedence, so no test input holds both faults. Every lab passes on the learner's own code
    (no lab needs a run with the reference's other labs), and plain pytest passes too."""
    workspace = make_workspace("own-fifth")
    for lab in manifest.labs:
        solve_lab(manifest, kit, workspace, lab.id, donors("fifth"))
    snapshot = workspace_snapshot(manifest, kit, Tree(workspace.resolve()))
    options = GradingOptions(probes=probe_set)
    labs = manifest.labs
    graded = engine.grade(manifest, kit, snapshot, labs, DEFAULT_LIMITS, options, selected=False)
    failures = [f"{t.name}: {t.message}" for t in graded.result.tests if t.status != "passed"]
    assert set(statuses(graded.result).values()) == {"passed"}, failures
    assert graded.own is None, "a lab passed only with the reference's other labs"
    ran = plain_pytest(workspace, "lab_11_1 or lab_11_4")
    assert ran.returncode == 0, ran.stdout[-3000:]
