"""No run that executes a lab's code can reach that lab's reference, at any door (issue 53).

A lab that fails with the learner's own code used to be graded again in one isolated run whose
graded copy held every lab's reference (``.reference/*.py``, loaded as
``pi_course._course_reference_*``). A workspace whose lab functions only call "the reference's
function of the same name", found among the objects in memory or loaded from the files the
sandbox can read, failed its own run (no reference there), was sent to that run, found it, and
got 100/100 at the roster, on Gradescope and at the learner's own ``checkpoint 11``.

Each door below grades a workspace whose Labs 11.2 and 11.5 borrow the reference so
(``hostile.BORROW_FROM_MEMORY`` and ``BORROW_FROM_DISK``: the reference's function found, its code
run as the learner's module's own) and whose other labs are the reference's own code: the two
borrowing labs earn nothing, the others their points (60 of 100). Lab 11.2's functions fail the
labs after it in the learner's own run, so every kind of credit run is made; Lab 11.5 shares its
module with Lab 11.4. The engine, the roster and Gradescope's fallback grade a fresh workspace
whose every lab borrows, as the issue found it: 0 of 100.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from harness_support import CHAPTER, cli, enterable_folder, roster_workspace, watch_once
from hostile import BORROW_FROM_DISK, BORROW_FROM_MEMORY, borrow_the_reference
from solutions import solve_lab

from course.display.notebook import check
from course.grading.confinement.sandbox import sandbox_status
from course.grading.verdict import engine
from course.harness.kit import kit_root
from course.harness.manifest import Manifest
from course.harness.runner import Limits

pytestmark = pytest.mark.costly  # handed to a worker first (tests/schedule.py)

BIN = Path(sys.executable).parent
BORROWS = {"memory": BORROW_FROM_MEMORY, "disk": BORROW_FROM_DISK}
TIMEOUT = ("--timeout", "5")


@dataclass(frozen=True)
class Verdict:
    """What a door gave the workspace: each required lab's status (as far as the door shows
    it) and the grade out of 100 (None: the door shows no grade)."""

    labs: dict[str, str]
    score: int | None


BORROWING = ("11.2", "11.5")
"""The labs that borrow in the workspace the doors grade (the others are the reference's)."""


def borrowing(manifest: Manifest, roster: Path, how: str, labs: Sequence[str] = ()) -> Path:
    """A workspace ``roster/<how>`` whose functions of ``labs`` borrow the reference and whose
    other labs are solved with its code; with no ``labs``, a fresh one whose every lab borrows."""
    workspace = roster_workspace(manifest, roster, how)
    for lab in manifest.labs:
        if labs and lab.id not in labs:
            solve_lab(manifest, kit_root(), workspace, lab.id)
    chosen = [lab for lab in manifest.labs if not labs or lab.id in labs]
    functions = [name for lab in chosen for name in lab.solution]
    borrow_the_reference(workspace, functions, BORROWS[how])
    return workspace


def required(manifest: Manifest) -> list[str]:
    return [lab.id for lab in manifest.required_labs]


def from_report(report: dict[str, Any]) -> Verdict:
    labs = {lab["id"]: lab["status"] for lab in report["labs"] if not lab["optional"]}
    return Verdict(labs, report["score"])


def practice(manifest: Manifest, workspace: Path, scratch: Path) -> Verdict:
    report = scratch / "practice.json"
    done = cli("checkpoint", CHAPTER, "--practice", str(workspace), "--json", str(report), *TIMEOUT)
    assert done.returncode in (0, 1), done.stdout + done.stderr
    return from_report(json.loads(report.read_text(encoding="utf-8")))


def in_the_workspace(manifest: Manifest, workspace: Path, scratch: Path) -> Verdict:
    report = scratch / "own.json"
    done = cli("checkpoint", CHAPTER, "--no-card", "--json", str(report), *TIMEOUT, cwd=workspace)
    assert done.returncode in (0, 1), done.stdout + done.stderr
    return from_report(json.loads(report.read_text(encoding="utf-8")))


def one_lab(manifest: Manifest, workspace: Path, scratch: Path) -> Verdict:
    """``checkpoint 11 --lab ID --json FILE``, one lab graded on its own, for three labs."""
    labs = {}
    for lab in ("11.2", "11.4", "11.5"):
        report = scratch / f"lab-{lab}.json"
        done = cli("checkpoint", CHAPTER, "--lab", lab, "--json", str(report), *TIMEOUT,
                   cwd=workspace)  # fmt: skip
        assert done.returncode in (0, 1), done.stdout + done.stderr
        labs |= from_report(json.loads(report.read_text(encoding="utf-8"))).labs
    return Verdict(labs, None)


def actions_job(manifest: Manifest, workspace: Path, scratch: Path) -> Verdict:
    """The Actions workflow's jobs, as ``practice 11 --actions`` writes them: every lab graded
    (``checkpoint 11 --json FILE``), then each lab's check run from ``--report FILE --lab ID``."""
    report = scratch / "actions.json"
    done = cli("checkpoint", CHAPTER, "--no-card", "--json", str(report), *TIMEOUT, cwd=workspace)
    assert done.returncode in (0, 1), done.stdout + done.stderr
    labs = {}
    for lab in required(manifest):
        shown = cli("checkpoint", CHAPTER, "--report", str(report), "--lab", lab, cwd=workspace)
        labs[lab] = "passed" if shown.returncode == 0 else "not passed"  # the check run
        if lab == "11.4":  # the job's summary says why a lab failing with 11.2 passes
            assert "credited" in shown.stdout and "Lab 11.2" in shown.stdout, shown.stdout
    return Verdict(labs, None)


def review(manifest: Manifest, workspace: Path, scratch: Path) -> Verdict:
    """``checkpoint 11 --review``'s evidence line: the counts, of the borrowing labs only (the
    line shows counts, not verdicts: a lab credited with another's failing test shows its own)."""
    done = cli("checkpoint", CHAPTER, "--review", *TIMEOUT, cwd=workspace)
    evidence = re.search(r"^Labs: (.*?)\s{2,}(\d+)/(\d+)$", done.stdout, re.M)
    assert evidence is not None, done.stdout + done.stderr
    counts = [c.partition("/") for c in evidence.group(1).split(" → ")]
    labs = {lab: "passed" if a == b else "not passed" for lab, (a, _, b) in zip(
        required(manifest), counts, strict=True
    )}  # fmt: skip
    return Verdict({lab: labs[lab] for lab in BORROWING}, None)


def watch(manifest: Manifest, workspace: Path, scratch: Path) -> Verdict:
    done = watch_once(workspace, *TIMEOUT)
    found = re.findall(r"^Lab (\S+)\s.*\s(passed|pending|failed|timeout|error)$", done.stdout, re.M)
    labs = {lab: status for lab, status in found if lab in required(manifest)}
    assert labs.keys() == set(required(manifest)), done.stdout + done.stderr
    return Verdict(labs, None)


def notebook(manifest: Manifest, workspace: Path, scratch: Path) -> Verdict:
    shown = check(CHAPTER, start=workspace / "notebooks", timeout=5)
    assert shown.result is not None, shown.problem
    labs = {lab.lab.id: str(lab.status) for lab in shown.result.required}
    return Verdict(labs, shown.result.score)


def gradescope(manifest: Manifest, workspace: Path, scratch: Path) -> Verdict:
    """``run_autograder``'s grading step, ``checkpoint 11 --gradescope ROOT``."""
    root = scratch / "autograder"
    (root / "results").mkdir(parents=True)
    shutil.copytree(workspace, root / "submission", symlinks=True)
    done = cli("checkpoint", CHAPTER, "--gradescope", str(root), *TIMEOUT)
    assert done.returncode == 0, done.stdout + done.stderr
    results = json.loads((root / "results" / "results.json").read_text(encoding="utf-8"))
    labs = {t["extra_data"]["lab"]: t["extra_data"]["status"] for t in results["tests"]}
    return Verdict(labs, results["score"])


def classroom_50(manifest: Manifest, workspace: Path, scratch: Path) -> Verdict:
    """Classroom 50's ``autograder.py``, run in the learner's checkout as the runner runs it."""
    script = scratch / "autograder.py"
    written = subprocess.run(
        [str(BIN / "course-kit"), "classroom50", CHAPTER, "-o", str(script)],
        capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert written.returncode == 0, written.stderr
    git = ["git", "-C", str(workspace), "-c", "user.name=ada", "-c", "user.email=a@example.com"]
    for step in (["init", "-q"], ["add", "-A"], ["commit", "-qm", "submit"]):
        subprocess.run([*git, *step], check=True, capture_output=True)
    environment = dict(os.environ, COURSE_KIT_BIN=str(BIN))
    ran = subprocess.run(
        [sys.executable, str(script)], cwd=workspace, env=environment,
        capture_output=True, text=True, timeout=600, check=False,
    )  # fmt: skip
    assert ran.returncode == 0, ran.stdout + ran.stderr
    result = json.loads((workspace / "result.json").read_text(encoding="utf-8"))
    labs = {t["test-name"].split()[1]: t["status"] for t in result["tests"]}
    credited = {t["test-name"].split()[1]: t["credit"] for t in result["tests"] if t["credit"]}
    assert credited["11.4"]["through"] == ["11.2"], credited  # what per-lab credit decided
    return Verdict(labs, result["score"])


Door = Callable[[Manifest, Path, Path], Verdict]
DOORS: dict[str, Door] = {
    "checkpoint 11 --practice DIR": practice,
    "checkpoint 11 in the workspace": in_the_workspace,
    "checkpoint 11 --lab ID": one_lab,
    "the Actions workflow's jobs": actions_job,
    "checkpoint 11 --review": review,
    "checkpoint 11 --watch": watch,
    "check() in a notebook": notebook,
    "checkpoint 11 --gradescope ROOT": gradescope,
    "Classroom 50's autograder.py": classroom_50,
}
"""Each door that grades a workspace one at a time (the roster's is below)."""


@pytest.fixture(scope="module")
def sandboxed(manifest: Manifest) -> None:
    bwrap, why = sandbox_status(kit_root(), (manifest.reference,))
    if bwrap is None:
        pytest.skip(f"the sandbox cannot start here ({why})")


def assert_nothing_earned(
    verdict: Verdict, door: str, how: str, borrowed: Sequence[str] = ()
) -> None:
    """The labs that borrow earn nothing (``borrowed``, else every lab); the others pass."""
    passed = sorted(lab for lab, status in verdict.labs.items() if status == "passed")
    earned = sorted(lab for lab in passed if not borrowed or lab in borrowed)
    assert not earned, f"{door}: the reference borrowed from {how} passed {earned}"
    honest = [lab for lab in verdict.labs if borrowed and lab not in borrowed]
    assert passed == honest, f"{door}: the labs written honestly: {verdict}"
    expected = 20 * len(honest)  # each required lab of chapter 11 is worth 20
    assert verdict.score in (None, expected), (
        f"{door}: the reference borrowed from {how}: {verdict}"
    )


@pytest.mark.parametrize("how", list(BORROWS))
@pytest.mark.parametrize("door", list(DOORS))
def test_a_lab_that_borrows_the_reference_earns_nothing_at_any_door(
    manifest: Manifest, tmp_path: Path, sandboxed: None, door: str, how: str
) -> None:
    workspace = borrowing(manifest, tmp_path / "roster", how, BORROWING)
    verdict = DOORS[door](manifest, workspace, tmp_path)
    shown = {lab: status for lab, status in verdict.labs.items() if lab in required(manifest)}
    assert_nothing_earned(Verdict(shown, verdict.score), door, how, BORROWING)


@pytest.fixture(scope="module")
def roster_rows(
    manifest: Manifest, tmp_path_factory: pytest.TempPathFactory, sandboxed: None
) -> dict[str, dict[str, Any]]:
    """One roster of both borrowing workspaces beside a complete one, as an instructor grades."""
    base = tmp_path_factory.mktemp("borrowing-roster")
    for how in BORROWS:
        borrowing(manifest, base / "roster", how)
    roster_workspace(manifest, base / "roster", "complete", solved=5)
    gradebook = base / "gradebook"
    where = ("--roster", str(base / "roster"), "--gradebook", str(gradebook))
    done = cli("checkpoint", CHAPTER, *where, *TIMEOUT)
    assert done.returncode in (0, 1), done.stdout + done.stderr
    book = json.loads((gradebook / "gradebook.json").read_text(encoding="utf-8"))
    return {row["learner"]: row for row in book["learners"]}


@pytest.mark.parametrize("how", list(BORROWS))
def test_a_lab_that_borrows_the_reference_earns_nothing_at_the_roster(
    roster_rows: dict[str, dict[str, Any]], how: str
) -> None:
    row = roster_rows[how]
    verdict = Verdict({lab["id"]: lab["status"] for lab in row["labs"]}, row["score"])
    assert_nothing_earned(verdict, "checkpoint 11 --roster", how)
    complete = roster_rows["complete"]
    assert (complete["score"], complete["passed"]) == (100, 14), "the honest row as before"


@pytest.fixture
def shared() -> Iterator[Path]:
    """A folder other users may enter, as ``/autograder`` is on Gradescope."""
    with enterable_folder() as folder:
        yield folder


@pytest.mark.parametrize("how", list(BORROWS))
def test_a_lab_that_borrows_the_reference_earns_nothing_in_gradescopes_fallback(
    manifest: Manifest, tmp_path: Path, shared: Path, how: str
) -> None:
    """Where bubblewrap cannot start (a container that makes no namespaces), a root grader
    runs learner code as an unprivileged host user: each graded copy is still all it reads."""
    if os.geteuid() != 0:
        pytest.skip("the fallback runs learner code as another user: only a root grader can")
    workspace = borrowing(manifest, tmp_path / "roster", how)
    no_bwrap = {"PATH": "/nonexistent"}
    root = shared / "autograder"
    (root / "results").mkdir(parents=True)
    shutil.copytree(workspace, root / "submission", symlinks=True)
    done = cli("checkpoint", CHAPTER, "--gradescope", str(root), *TIMEOUT, env=no_bwrap)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "isolation: bubblewrap cannot start in this container" in done.stdout, done.stdout
    results = json.loads((root / "results" / "results.json").read_text(encoding="utf-8"))
    labs = {t["extra_data"]["lab"]: t["extra_data"]["status"] for t in results["tests"]}
    assert_nothing_earned(Verdict(labs, results["score"]), "Gradescope's fallback", how)


def test_the_engine_grades_a_borrowing_lab_as_its_own_run_does(
    manifest: Manifest, kit: Path, tmp_path: Path, sandboxed: None
) -> None:
    """The engine itself (what every door asks): the borrowing workspace's every lab fails,
    each test's status the learner's own run's."""
    workspace = borrowing(manifest, tmp_path / "roster", "memory")
    options = engine.GradingOptions(sandbox="required")
    result = engine.evaluate(manifest, kit, workspace, (), Limits(), options)
    assert {str(lab.status) for lab in result.labs} == {"failed"}, result.evidence
    assert (result.passed, result.score) == (0, 0)
