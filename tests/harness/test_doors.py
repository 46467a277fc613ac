"""One verdict, every door: the same files get the same per-lab status and counts everywhere.

Each kind of workspace state is checked through every door a learner or an instructor uses:
``checkpoint 11`` inside the workspace, ``--practice`` from outside, ``--lab``, ``--watch``,
the notebook's ``check()``, ``--review`` and ``--roster``. The doors differ in isolation and
in presentation only, so their per-lab (status, tests passed, tests, cases agreed, cases) must
be identical. Three states from the middle of the progression add nothing new to compare, and go
through ``checkpoint`` and the roster only (``MIDDLE_OF_THE_PROGRESSION``).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import pytest
from harness_support import CHAPTER, HANGS, cli, lab_verdicts, replace_in, sabotage, watch_once
from solutions import replace_function, solve_lab

from course.cli.review import run_review
from course.display.notebook import check
from course.grading.verdict.engine import GradingOptions
from course.harness.manifest import Manifest
from course.harness.results import CheckpointResult
from course.harness.runner import Limits

pytestmark = pytest.mark.costly  # handed to a worker first (tests/schedule.py)

OWN_SOLUTIONS = Path(__file__).parent / "own_solutions"
SECONDS = 2.0
"""Every door's limit per test: a hang costs little, and the same limit everywhere."""
LIMITS = Limits(test_seconds=SECONDS)
Verdicts = dict[str, tuple[str, int, int, int, int]]
LAB_LINE = re.compile(
    r"^Lab (\S+)\s.*?\s(\d+)/(\d+) tests?(?: · (\d+)/(\d+) cases?)?\s+"
    r"(passed|pending|failed|timeout|error)\b"
)


def solve(manifest: Manifest, kit: Path, workspace: Path, labs: list[str]) -> None:
    for lab in labs:
        solve_lab(manifest, kit, workspace, lab)


def whitespace_goal(workspace: Path) -> None:
    """Lab 11.1 written, except that a goal of only white space is accepted."""
    replace_in(workspace / "pi_course" / "summary.py", "non_blank=True", "non_empty=True")


def groups_close_at_every_answer(workspace: Path) -> None:
    """Lab 11.2 written wrong: a group may end without a result for each call."""
    replace_in(
        workspace / "pi_course" / "groups.py",
        "        if call_id not in results:\n",
        "        if call_id not in results and not calls:\n",
    )


def estimates_eagerly(workspace: Path) -> None:
    """Lab 11.3 written another way: every group copied and estimated once, before choosing."""
    donor = (OWN_SOLUTIONS / "fourth" / "context.py").read_text(encoding="utf-8")
    module = workspace / "pi_course" / "context.py"
    source = module.read_text(encoding="utf-8")
    module.write_text(replace_function(source, donor, "select_groups"), encoding="utf-8")


def fails_at_import(workspace: Path) -> None:
    with (workspace / "pi_course" / "context.py").open("a", encoding="utf-8") as module:
        module.write('\nraise RuntimeError("context.py is half written")\n')


REQUIRED = ["11.1", "11.2", "11.3", "11.4", "11.5"]
STATES: dict[str, tuple[list[str], Callable[[Path], None] | None]] = {
    "fresh": ([], None),
    "lab-1": (REQUIRED[:1], None),
    "labs-1-2": (REQUIRED[:2], None),
    "labs-1-3": (REQUIRED[:3], None),
    "labs-1-4": (REQUIRED[:4], None),
    "all-but-optional": (REQUIRED, None),
    "whitespace-goal": (REQUIRED, whitespace_goal),
    "wrong-lab-2": (REQUIRED, groups_close_at_every_answer),
    "endless-loop": (
        REQUIRED,
        lambda w: sabotage(w, "groups", "split_interactions", HANGS),
    ),
    "fails-at-import": (REQUIRED, fails_at_import),
    "eager-estimation": (REQUIRED, estimates_eagerly),
}


MIDDLE_OF_THE_PROGRESSION = ("lab-1", "labs-1-3", "labs-1-4")
"""States graded by ``checkpoint`` (its JSON and its printed lines) and the roster only: each
shows the verdicts ``labs-1-2`` shows every door (labs passed beside labs pending), and
``test_lab_progression.py`` solves the labs one by one. The other states, one of each
verdict and an own design of Lab 11.3, go through every door."""


def lab_lines(text: str) -> Verdicts:
    """Per-lab verdicts from printed lab lines
    (``Lab 11.3  budget projection  3/3 tests · 51/53 cases  passed``)."""
    found: Verdicts = {}
    for line in text.splitlines():
        match = LAB_LINE.match(line)
        if match:
            lab, passed, total, agreed, cases, status = match.groups()
            counts = (int(passed), int(total), int(agreed or 0), int(cases or 0))
            found.setdefault(lab, (status, *counts))
    return found


def from_json(manifest: Manifest, path: Path) -> Verdicts:
    return lab_verdicts(CheckpointResult.from_json(json.loads(path.read_text("utf-8")), manifest))


@dataclass(frozen=True)
class Place:
    """A workspace and what its doors need: ``lab`` is the one ``--lab`` asks for."""

    manifest: Manifest
    kit: Path
    workspace: Path
    lab: str
    reports: Path


Door = Callable[[Place], dict[str, Verdicts]]
"""A door's per-lab verdicts on a workspace."""
TIMEOUT = ["--timeout", f"{SECONDS:g}"]


def inside(at: Place) -> dict[str, Verdicts]:
    saved = at.reports / f"{at.workspace.name}-inside.json"
    run = cli("checkpoint", CHAPTER, "--no-card", "--json", str(saved), *TIMEOUT, cwd=at.workspace)
    assert saved.is_file(), run.stdout + run.stderr
    return {
        "checkpoint": from_json(at.manifest, saved),
        "checkpoint (printed)": lab_lines(run.stdout),
    }


def practice(at: Place) -> dict[str, Verdicts]:
    saved = at.reports / f"{at.workspace.name}-practice.json"
    cli("checkpoint", CHAPTER, "--practice", str(at.workspace), "--json", str(saved), *TIMEOUT)
    return {"--practice": from_json(at.manifest, saved)}


def one_lab(at: Place) -> dict[str, Verdicts]:
    saved = at.reports / f"{at.workspace.name}-lab.json"
    cli("checkpoint", CHAPTER, "--lab", at.lab, "--json", str(saved), *TIMEOUT, cwd=at.workspace)
    return {"--lab": from_json(at.manifest, saved)}


def watching(at: Place) -> dict[str, Verdicts]:
    return {"--watch": lab_lines(watch_once(at.workspace, *TIMEOUT).stdout)}


def notebook(at: Place) -> dict[str, Verdicts]:
    view = check(CHAPTER, start=at.workspace / "notebooks", timeout=SECONDS)
    assert view.result is not None, view.text
    return {"check()": lab_verdicts(view.result)}


def review(at: Place) -> dict[str, Verdicts]:
    review = run_review(at.manifest, at.kit, at.workspace, LIMITS, GradingOptions())
    return {"--review": lab_verdicts(review.verdict)}


EVERY_DOOR: tuple[Door, ...] = (inside, practice, one_lab, watching, notebook, review)
"""The doors but the roster, which grades a class of workspaces at once (``roster_verdicts``).
A door only reads its workspace, so the doors of one workspace may run side by side."""


def roster_verdicts(manifest: Manifest, roster: Path) -> dict[str, Verdicts]:
    gradebook = roster.parent / "gradebook"
    run = cli(
        "checkpoint",
        CHAPTER,
        "--roster",
        str(roster),
        "--gradebook",
        str(gradebook),
        "--timeout",
        f"{SECONDS:g}",
    )
    data = json.loads((gradebook / "gradebook.json").read_text("utf-8"))
    assert data["learners"], run.stdout + run.stderr
    return {
        row["learner"]: {
            lab["id"]: (lab["status"], lab["passed"], lab["total"], lab["agreed"], lab["cases"])
            for lab in row["labs"]
        }
        for row in data["learners"]
    }


def every_door(
    manifest: Manifest, kit: Path, folder: Path, states: tuple[str, ...]
) -> dict[str, dict[str, Verdicts]]:
    """Each of ``states`` through every door: state → door → verdicts."""
    from course.harness.workspace import create_workspace

    roster = folder / "class"
    reports = folder / "reports"
    reports.mkdir()
    places = {}
    for name in states:
        labs, change = STATES[name]
        workspace = roster / name
        create_workspace(manifest, kit, workspace)
        solve(manifest, kit, workspace, labs)
        if change is not None:
            change(workspace)
        lab = REQUIRED[list(STATES).index(name) % len(REQUIRED)]
        places[name] = Place(manifest, kit, workspace, lab, reports)
    jobs = [
        (name, door)
        for name in states
        for door in (EVERY_DOOR[:1] if name in MIDDLE_OF_THE_PROGRESSION else EVERY_DOOR)
    ]
    seen: dict[str, dict[str, Verdicts]] = {name: {} for name in states}
    with ThreadPoolExecutor(max_workers=2) as pool:  # a slow state's doors go side by side
        for name, verdicts in pool.map(lambda job: (job[0], job[1](places[job[0]])), jobs):
            seen[name].update(verdicts)
    for name, rows in roster_verdicts(manifest, roster).items():
        seen[name]["--roster"] = rows
    return seen


def expect(state: str, verdict: Verdicts) -> None:
    """What the chapter says ``state`` is (so the comparison of the doors compares something)."""
    cases = {lab: counts[4] for lab, counts in verdict.items()}
    assert all(cases[lab] > 0 for lab in REQUIRED), cases
    labs, change = STATES[state]
    if change is None:  # a progression state: the labs written pass whole, the rest wait
        for lab in labs:
            status, passed, tests, agreed, _ = verdict[lab]
            assert (status, passed, agreed) == ("passed", tests, cases[lab]), (state, lab)
        assert all(verdict[lab][0] == "pending" for lab in verdict if lab not in labs), verdict
    if state == "fresh":
        assert verdict["11.1"] == ("pending", 0, 3, 0, cases["11.1"])
    elif state == "lab-1":
        assert verdict["11.1"] == ("passed", 3, 3, cases["11.1"], cases["11.1"])
        assert verdict["11.2"] == ("pending", 0, 3, 0, cases["11.2"])
    elif state == "all-but-optional":
        assert verdict["11.opt"][:3] == ("pending", 0, 3)
    elif state == "whitespace-goal":
        assert verdict["11.1"][0] == "failed"
        assert verdict["11.1"][3] < cases["11.1"], "a case disagrees"
    elif state == "wrong-lab-2":
        assert verdict["11.2"][0] == "failed"
        assert verdict["11.2"][1] < 3
    elif state == "endless-loop":
        assert verdict["11.2"][0] == "timeout"
    elif state == "fails-at-import":
        assert verdict["11.3"][0] == "error"
    elif state == "eager-estimation":  # the chapter leaves when to estimate open: a bound holds
        for lab in REQUIRED:
            status, passed, tests, agreed, _ = verdict[lab]
            assert (status, passed, agreed) == ("passed", tests, cases[lab]), (state, lab)


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    """A class's tests run on its own states."""
    if "state" in metafunc.fixturenames and metafunc.cls is not None:
        metafunc.parametrize("state", metafunc.cls.STATES)


class EveryDoor:
    """Its STATES through every door, on one worker (pytest-xdist, ``--dist loadscope``, keeps
    a class on one worker, so the two halves of the states share the workers)."""

    STATES: tuple[str, ...] = ()

    @pytest.fixture(scope="class")
    @classmethod
    def doors(
        cls, manifest: Manifest, kit: Path, tmp_path_factory: pytest.TempPathFactory
    ) -> dict[str, dict[str, Verdicts]]:
        return every_door(manifest, kit, tmp_path_factory.mktemp("doors"), cls.STATES)

    def test_every_door_shows_the_same_verdict(
        self, doors: dict[str, dict[str, Verdicts]], state: str
    ) -> None:
        seen = doors[state]
        reference = seen["checkpoint"]
        assert set(reference) == {"11.1", "11.2", "11.3", "11.4", "11.5", "11.opt"}
        assert "--roster" in seen, "the roster graded every state"
        if state not in MIDDLE_OF_THE_PROGRESSION:
            assert len(seen) == 8, f"{state} went through every door: {sorted(seen)}"
        for door, verdicts in seen.items():
            shown = {lab: verdicts[lab] for lab in verdicts}
            expected = {lab: reference[lab] for lab in shown}
            assert shown == expected, f"{state}: {door} differs from checkpoint"
            if door == "--roster":  # a gradebook holds the labs that count
                assert set(shown) == set(REQUIRED), f"{state}: the gradebook holds every lab"
            elif door != "--lab":
                assert set(shown) == set(reference), f"{state}: {door} shows every lab"

    def test_the_state_gives_the_verdict_the_chapter_expects(
        self, doors: dict[str, dict[str, Verdicts]], state: str
    ) -> None:
        expect(state, doors[state]["checkpoint"])


class TestEveryDoorOnHalfTheStates(EveryDoor):
    STATES = ("fresh", "labs-1-2", "labs-1-3", "labs-1-4", "endless-loop")


class TestEveryDoorOnTheOtherHalf(EveryDoor):
    STATES = ("lab-1", "all-but-optional", "whitespace-goal", "wrong-lab-2", "fails-at-import")


class TestEveryDoorOnAnOwnDesign(EveryDoor):
    STATES = ("eager-estimation",)


def test_the_two_halves_hold_every_state_once() -> None:
    halves = TestEveryDoorOnHalfTheStates.STATES + TestEveryDoorOnTheOtherHalf.STATES
    halves += TestEveryDoorOnAnOwnDesign.STATES
    assert sorted(halves) == sorted(STATES)
