"""Grading where courses already grade: Gradescope's autograder and GitHub Classroom's workflow.

The autograder zip is built once with ``course-kit gradescope`` (with one instructor test),
unzipped into folders laid out as Gradescope lays out ``/autograder``, its ``setup.sh`` run
with ``COURSE_KIT_BIN`` pointing at this kit (the one step that needs no network), and its
``run_autograder`` run on a fresh, a solved (handed in as a zip), a wrong and a hostile
submission. Each ``results.json`` is checked against Gradescope's documented schema and against
``checkpoint 11 --practice``'s verdict of the same files. The Classroom workflow's steps are read
from the file ``practice 11 --classroom`` writes and run as the runner runs them.
"""

from __future__ import annotations

import base64
import json
import os
import shutil
import subprocess
import sys
import zipfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from harness_support import cli, replace_in, roster_workspace
from hostile import FORGE_RESULTS, MODULE, append
from packing import zip_folder
from solutions import solve_lab

from course.harness.manifest import Manifest

pytestmark = pytest.mark.costly  # handed to a worker first (tests/schedule.py)

BIN = Path(sys.executable).parent
INSTRUCTOR_TEST = (
    "import importlib\n\nimport pytest\n\n\n"
    '@pytest.mark.lab("11.1")\n'
    "def test_instructor_summary_goal(impl):\n"
    '    summary = importlib.import_module(f"{impl.package}.summary")\n'
    "    given = impl.fixtures.COMPACT_1_SUMMARY\n"
    '    assert summary.parse_summary(given).goal == given["goal"], "INSTRUCTOR-SECRET"\n'
)

# Gradescope's documented results.json (gradescope-autograders.readthedocs.io, "specs")
TOP_KEYS = {
    "score", "execution_time", "output", "output_format", "test_output_format",
    "test_name_format", "visibility", "stdout_visibility", "extra_data", "tests", "leaderboard",
}  # fmt: skip
TEST_KEYS = {
    "score", "max_score", "status", "name", "name_format", "number", "output",
    "output_format", "tags", "visibility", "extra_data",
}  # fmt: skip
VISIBILITY = {"hidden", "after_due_date", "after_published", "visible"}
STOLEN = base64.b64encode(INSTRUCTOR_TEST.encode()).decode()
"""The instructor test file as the thief's code prints it."""
THIEF = """
import base64 as _b64, pathlib as _pl, sys as _sys

def _stolen():
    for _base in [_pl.Path.cwd(), *map(_pl.Path, _sys.path)]:
        _found = _base / "tests" / "chapter11" / "test_instructor.py"
        if _found.is_file():
            return _b64.b64encode(_found.read_bytes()).decode()
    return "NOTHING-FOUND"

_STOLEN = _stolen()
print("STOLEN:" + _STOLEN)
_own_build_context = build_context

def build_context(*args, **kwargs):
    print("STOLEN:" + _STOLEN)
    _own_build_context(*args, **kwargs)
    raise AssertionError("STOLEN:" + _STOLEN)
"""
"""Learner code that reads the instructor test where it runs and puts it, base64, into what it
prints and into every failure of Lab 11.3."""


def schema_problems(data: Any) -> list[str]:
    """What in ``data`` Gradescope's results.json specification does not allow."""
    if not isinstance(data, dict):
        return ["not an object"]
    problems = [f"unknown key {key!r}" for key in data.keys() - TOP_KEYS]
    for key in ("visibility", "stdout_visibility"):
        if key in data and data[key] not in VISIBILITY:
            problems.append(f"{key}: {data[key]!r}")
    tests = data.get("tests", [])
    if not isinstance(tests, list):
        return [*problems, "tests: not a list"]
    if "score" not in data and any("score" not in t for t in tests):
        problems.append("no score at the top and not on every test")
    for index, test in enumerate(tests):
        where = f"tests[{index}]"
        problems += [f"{where}: unknown key {key!r}" for key in test.keys() - TEST_KEYS]
        for key in ("score", "max_score"):
            if key in test and not isinstance(test[key], int | float):
                problems.append(f"{where}.{key}: {test[key]!r}")
        if test.get("status", "passed") not in ("passed", "failed"):
            problems.append(f"{where}.status: {test['status']!r}")
        if test.get("visibility", "visible") not in VISIBILITY:
            problems.append(f"{where}.visibility: {test['visibility']!r}")
        for key in ("name", "output"):
            if not isinstance(test.get(key, ""), str):
                problems.append(f"{where}.{key}: not text")
    return problems


def test_the_schema_check_catches_what_gradescope_refuses() -> None:
    assert schema_problems({"score": 1, "tests": []}) == []
    bad = {"tests": [{"name": 3, "status": "ok", "visibility": "soon", "points": 1}]}
    assert schema_problems(bad) == [
        "no score at the top and not on every test",
        "tests[0]: unknown key 'points'",
        "tests[0].status: 'ok'",
        "tests[0].visibility: 'soon'",
        "tests[0].name: not text",
    ]


@dataclass(frozen=True)
class Graded:
    """One submission through ``run_autograder``, and ``--practice``'s verdict of its files."""

    run: subprocess.CompletedProcess[str]
    results: dict[str, Any]
    practice: dict[str, Any]

    def labs(self) -> dict[str, dict[str, Any]]:
        return {t["extra_data"]["lab"]: t for t in self.results["tests"] if "extra_data" in t}


def run_script(script: Path, root: Path) -> subprocess.CompletedProcess[str]:
    environment = dict(os.environ, AUTOGRADER_ROOT=str(root), COURSE_KIT_BIN=str(BIN))
    return subprocess.run(
        ["bash", str(script)],
        cwd=root,
        env=environment,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )


@pytest.fixture(scope="module")
def autograder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The zip ``course-kit gradescope`` writes, with one instructor test."""
    base = tmp_path_factory.mktemp("gradescope")
    (base / "instructor").mkdir()
    (base / "instructor" / "test_instructor.py").write_text(INSTRUCTOR_TEST, encoding="utf-8")
    written = subprocess.run(
        [str(BIN / "course-kit"), "gradescope", "11", "-o", str(base / "autograder.zip"),
         "--hidden", str(base / "instructor"), "--timeout", "5"],
        capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert written.returncode == 0, written.stderr
    return base / "autograder.zip"


def lay_out(autograder: Path, root: Path, submission: Path) -> Path:
    """``root`` as Gradescope lays out ``/autograder``: the zip in ``source``, ``run_autograder``
    copied beside it, the learner's upload in ``submission``, an empty ``results``."""
    with zipfile.ZipFile(autograder) as archive:
        archive.extractall(root / "source")
    for name in ("setup.sh", "run_autograder"):
        (root / "source" / name).chmod(0o755)
    shutil.copy(root / "source" / "run_autograder", root / "run_autograder")
    (root / "results").mkdir()
    if submission.is_dir():
        shutil.copytree(submission, root / "submission", symlinks=True)
    else:
        (root / "submission").mkdir()
        shutil.copy(submission, root / "submission" / submission.name)
    return root


@pytest.fixture(scope="module")
def graded(
    manifest: Manifest, autograder: Path, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[dict[str, Graded]]:
    base = tmp_path_factory.mktemp("submissions")
    workspaces = base / "workspaces"
    fresh = roster_workspace(manifest, workspaces, "fresh")
    solved = roster_workspace(manifest, workspaces, "solved", solved=5)
    wrong = roster_workspace(manifest, workspaces, "wrong", solved=5)
    replace_in(  # Lab 11.3 drops a group that fits the budget exactly
        wrong / "pi_course" / "context.py",
        "if used + cost > available:",
        "if used + cost >= available:",
    )
    hostile = roster_workspace(manifest, workspaces, "hostile")
    hostile_root = base / "autograder-hostile"
    append(  # learner code that tries to write the platform's results itself
        hostile,
        MODULE,
        f"try:\n    open({str(hostile_root / 'results' / 'results.json')!r}, 'w')"
        ".write('{\"score\": 100}')\nexcept OSError:\n    pass",
    )
    append(hostile, MODULE, FORGE_RESULTS)
    thief = roster_workspace(manifest, workspaces, "thief", solved=5)
    append(thief, "pi_course/context.py", THIEF)
    submissions = {
        "fresh": fresh,
        "solved": zip_folder(solved, base / "solved.zip", prefix="practice-11/"),
        "wrong": wrong,
        "hostile": hostile,
        "thief": thief,
    }
    found: dict[str, Graded] = {}
    for name, submission in submissions.items():
        root = lay_out(autograder, base / f"autograder-{name}", submission)
        if name == "fresh":
            setup = run_script(root / "source" / "setup.sh", root)
            assert setup.returncode == 0, setup.stdout + setup.stderr
            assert "using the kit installed in" in setup.stdout
        run = run_script(root / "run_autograder", root)
        assert run.returncode == 0, run.stdout + run.stderr
        results = json.loads((root / "results" / "results.json").read_text(encoding="utf-8"))
        report = base / f"{name}.json"
        workspace = workspaces / name
        practice = cli(
            "checkpoint", "11", "--practice", str(workspace), "--hidden",
            str(root / "source" / "instructor"), "--json", str(report), "--timeout", "5",
        )  # fmt: skip
        assert practice.returncode in (0, 1), practice.stderr
        found[name] = Graded(run, results, json.loads(report.read_text(encoding="utf-8")))
    yield found


AUDITED = "one of the assignment's own cases"
"""In a lab's output: a case of the assignment's audit seed disagrees (its input withheld)."""
SUBMISSIONS = ["fresh", "solved", "wrong", "hostile"]
LABS = ["11.1", "11.2", "11.3", "11.4", "11.5"]
EXPECTED = {
    "fresh": dict.fromkeys(LABS, "pending"),
    "solved": dict.fromkeys(LABS, "passed"),
    "wrong": {"11.1": "passed", "11.2": "passed", "11.3": "failed", "11.4": "passed"},
    # a report forging the kit's tests, which the probes contradict; it leaves out the
    # instructor's test of Lab 11.1, which is therefore an error
    "hostile": {"11.1": "error"} | dict.fromkeys(LABS[1:], "pending"),
}
"""Each lab's status (the wrong submission's Lab 11.5, which uses Lab 11.3, as --practice says)."""


@pytest.mark.parametrize("name", SUBMISSIONS)
def test_results_follow_gradescopes_schema(graded: dict[str, Graded], name: str) -> None:
    results = graded[name].results
    assert schema_problems(results) == [], json.dumps(results, indent=2)[:3000]
    assert results["stdout_visibility"] == "hidden"


@pytest.mark.parametrize("name", SUBMISSIONS)
def test_each_lab_is_the_verdict_practice_gives_the_same_files(
    manifest: Manifest, graded: dict[str, Graded], name: str
) -> None:
    one = graded[name]
    practice = {lab["id"]: lab for lab in one.practice["labs"] if not lab["optional"]}
    labs = one.labs()
    assert list(labs) == [lab.id for lab in manifest.required_labs]
    keys = ("status", "passed", "total", "agreed", "cases")
    got = {lab: tuple(test["extra_data"][k] for k in keys) for lab, test in labs.items()}
    expected = {lab: tuple(data[k] for k in keys) for lab, data in practice.items()}
    # The autograder also draws cases of a seed no workspace holds (the assignment's, kept in
    # the zip): where they catch what the shipped cases let pass (Lab 11.5 using the wrong Lab
    # 11.3, say), the lab fails with the same counts, naming the case without its input.
    audited = {lab for lab, test in labs.items() if AUDITED in test["output"]}
    expected = {lab: ("failed", *c[1:]) if lab in audited else c for lab, c in expected.items()}
    assert got == expected, f"{name}: autograder {got}\npractice {expected}"
    statuses = {lab: labs[lab]["extra_data"]["status"] for lab in EXPECTED[name]}
    assert statuses == EXPECTED[name], name
    for lab in manifest.required_labs:
        test = labs[lab.id]
        earned = lab.points if expected[lab.id][0] == "passed" else 0
        assert (test["score"], test["max_score"]) == (earned, lab.points), test
        assert test["status"] == ("passed" if earned else "failed")
    assert one.results["score"] == sum(t.get("score", 0) for t in one.results["tests"])
    grade = (one.results["extra_data"]["score"], one.results["extra_data"]["max_score"])
    assert grade == (one.results["score"], 100), "one scale"
    if not audited:  # the grade --practice gives the same files, on the same scale
        assert grade == (one.practice["score"], one.practice["max_score"])


def test_a_failing_lab_shows_learners_its_failing_cases(graded: dict[str, Graded]) -> None:
    lab = graded["wrong"].labs()["11.3"]
    assert lab["output"].startswith("Lab 11.3"), lab["output"]
    assert "probe" in lab["output"], lab["output"]
    assert "checkpoint 11 --replay 11.3#" in lab["output"], lab["output"]
    assert "/bin/checkpoint" not in lab["output"], "a command by its plain name, as learners run it"
    fresh = graded["fresh"].labs()["11.1"]["output"]
    assert "not implemented yet" in fresh, fresh
    solved = graded["solved"].results["output"]
    assert solved.startswith("Evidence: 3/3 → 3/3 → 3/3 → 2/2 → 3/3\nGrade: 100/100"), solved


def test_instructor_tests_wait_for_the_due_date(graded: dict[str, Graded]) -> None:
    for name, expected in (("solved", "passed"), ("fresh", "failed")):
        hidden = [t for t in graded[name].results["tests"] if "extra_data" not in t]
        assert [(t["visibility"], t["status"]) for t in hidden] == [("after_due_date", expected)], (
            hidden
        )
        assert "test_instructor_summary_goal" in hidden[0]["name"]
    shown = graded["fresh"].labs()["11.1"]["output"]
    assert "0/3 tests" in shown and "instructor" not in shown, "the chapter's counts only"
    assert "parse_summary(given)" not in shown, shown


def test_learner_code_printing_the_instructor_test_shows_learners_nothing_of_it(
    graded: dict[str, Graded],
) -> None:
    """The thief's code reads the instructor test and prints it, base64, and raises it in every
    Lab 11.3 failure: what learners see of results.json at once holds none of it."""
    thief = graded["thief"]
    messages = " ".join(test["message"] for test in thief.practice["tests"])
    assert f"STOLEN:{STOLEN}" in messages, "the attack did read the file where it ran"
    results = thief.results
    assert schema_problems(results) == []
    visible = [results["output"]]
    for test in results["tests"]:
        if test.get("visibility", "visible") == "visible":
            visible += [test["name"], test.get("output", "")]
    seen = "\n".join(visible)
    for start in range(0, len(STOLEN) - 16, 8):
        assert STOLEN[start : start + 16] not in seen, seen
    assert "STOLEN" not in seen and "INSTRUCTOR-SECRET" not in seen, seen
    lab = thief.labs()["11.3"]
    assert (lab["score"], lab["extra_data"]["status"]) == (0, "failed"), lab
    assert "withheld: this run held instructor tests" in lab["output"], lab["output"]


def test_the_instructor_sees_the_limits_and_the_flags(graded: dict[str, Graded]) -> None:
    out = graded["hostile"].run.stdout
    assert "limits:" in out and "probes: seed 11" in out, out
    assert "a forged report: its functions are the starter's stubs" in out, out
    assert graded["hostile"].results["score"] == 0


def ungraded(autograder: Path, root: Path, upload: Path) -> dict[str, Any]:
    """``results.json`` of a submission that holds no one workspace."""
    laid = lay_out(autograder, root, upload)
    run = run_script(laid / "run_autograder", laid)
    assert run.returncode == 0, run.stderr
    results = json.loads((laid / "results" / "results.json").read_text(encoding="utf-8"))
    assert schema_problems(results) == []
    assert results["score"] == 0, results
    assert {t["extra_data"]["status"] for t in results["tests"]} == {"error"}, results
    return results


def test_a_submission_without_a_workspace_is_every_lab_an_error(
    autograder: Path, tmp_path: Path
) -> None:
    upload = tmp_path / "upload"
    upload.mkdir()
    (upload / "notes.txt").write_text("my answers\n", encoding="utf-8")
    results = ungraded(autograder, tmp_path / "autograder", upload)
    assert "not a practice workspace" in results["output"], results["output"]


def test_a_submission_of_two_workspaces_is_every_lab_an_error(
    manifest: Manifest, autograder: Path, tmp_path: Path
) -> None:
    upload = tmp_path / "upload"
    roster_workspace(manifest, upload, "mine")
    roster_workspace(manifest, upload, "a-friends")
    results = ungraded(autograder, tmp_path / "autograder", upload)
    said = "the submission holds 2 workspaces (submission/a-friends, submission/mine); hand in one"
    assert said in results["output"], results["output"]


def test_a_saved_report_that_was_edited_or_lacks_the_lab_is_refused(tmp_path: Path) -> None:
    report = tmp_path / "report.json"
    made = cli("checkpoint", "11", "--lab", "11.1", "--no-card", "--json", str(report))
    assert made.returncode == 0, made.stdout + made.stderr
    shown = cli("checkpoint", "11", "--report", str(report), "--lab", "11.1")
    assert shown.returncode == 0 and shown.stdout.startswith("Lab 11.1"), shown.stdout
    missing = cli("checkpoint", "11", "--report", str(report), "--lab", "11.2")
    assert missing.returncode == 2 and "no lab 11.2 in the report" in missing.stderr
    data = json.loads(report.read_text(encoding="utf-8"))
    data["labs"][0]["probes"]["agreed"] = 0  # a pass claimed without its cases
    data["labs"][0]["probes"]["status"] = "failed"
    report.write_text(json.dumps(data), encoding="utf-8")
    edited = cli("checkpoint", "11", "--report", str(report), "--lab", "11.1")
    assert edited.returncode == 2, edited.stdout + edited.stderr
    assert "its counts do not follow from its tests and probes" in edited.stderr


# --------------------------------------------------------------------------- GitHub Classroom


def read_yaml(text: str) -> Any:
    """The block YAML ``practice --classroom`` writes: keys, JSON scalars, ``|`` blocks, lists."""
    lines = [line for line in text.splitlines() if line.strip() and not line.startswith("#")]

    def block(at: int, indent: int) -> tuple[Any, int]:
        items: Any = [] if lines[at].lstrip().startswith("- ") else {}
        while at < len(lines) and len(lines[at]) - len(lines[at].lstrip()) == indent:
            line = lines[at].strip()
            if isinstance(items, list):
                try:
                    items.append(json.loads(line[2:]))  # a scalar item
                    at += 1
                    continue
                except ValueError:  # a mapping item: its first key on the dash's line
                    lines[at] = " " * (indent + 2) + line[2:]
                value, at = block(at, indent + 2)
                items.append(value)
                continue
            key, _, rest = line.partition(":")
            key, rest, at = json.loads(key) if key.startswith('"') else key, rest.strip(), at + 1
            if rest == "|":
                body = []
                while at < len(lines) and lines[at].startswith(" " * (indent + 2)):
                    body.append(lines[at][indent + 2 :])
                    at += 1
                items[key] = "\n".join(body)
            elif rest:
                items[key] = json.loads(rest)
            else:
                nested = len(lines[at]) - len(lines[at].lstrip())
                items[key], at = block(at, nested)
        return items, at

    return block(0, 0)[0]


def test_the_classroom_workflow_scores_each_lab_as_practice_does(
    manifest: Manifest, kit: Path, tmp_path: Path
) -> None:
    workspace = tmp_path / "template"
    made = cli("practice", "11", str(workspace), "--classroom")
    assert made.returncode == 0, made.stderr
    assert ".github/workflows/classroom.yml" in made.stdout
    text = (workspace / ".github" / "workflows" / "classroom.yml").read_text(encoding="utf-8")
    steps = read_yaml(text)["jobs"]["run-autograding-tests"]["steps"]
    for lab in manifest.required_labs[:2]:  # a learner on the way: two labs done
        solve_lab(manifest, kit, workspace, lab.id)
    environment = dict(os.environ, PATH=f"{BIN}{os.pathsep}{os.environ['PATH']}")

    def run(command: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            ["bash", "-e", "-c", command], cwd=workspace, env=environment,
            capture_output=True, text=True, timeout=600, check=False,
        )  # fmt: skip

    grading = next(s for s in steps if s["name"] == "checkpoint 11")
    ran = run(grading["run"])
    assert ran.returncode == 0, ran.stdout + ran.stderr
    graders = [s for s in steps if "autograding-command-grader" in s.get("uses", "")]
    points = {}
    for step in graders:
        scored = run(step["with"]["command"])
        points[step["id"]] = step["with"]["max-score"] if scored.returncode == 0 else 0
    reporter = next(s for s in steps if "grading-reporter" in s.get("uses", ""))
    assert reporter["with"]["runners"].split(",") == list(points)
    assert set(reporter["env"]) == {f"{step.upper()}_RESULTS" for step in points}
    report = tmp_path / "practice.json"
    practice = cli("checkpoint", "11", "--practice", str(workspace), "--json", str(report))
    assert practice.returncode == 1, practice.stderr
    verdict = json.loads(report.read_text(encoding="utf-8"))
    expected = {
        f"lab-{lab['id'].replace('.', '-')}": lab["score"]
        for lab in verdict["labs"]
        if not lab["optional"]
    }
    assert points == expected
    assert sum(points.values()) == verdict["score"] == 40, points
    assert verdict["max_score"] == sum(lab.points for lab in manifest.required_labs) == 100
    assert "\ngrade 40/100\n" in practice.stdout, practice.stdout


def test_the_zip_keeps_one_audit_seed_for_every_submission(
    manifest: Manifest, autograder: Path, tmp_path: Path
) -> None:
    """Issue 43: identical files resubmitted once moved from 80 to 60, each run drawing a fresh
    audit seed. The zip carries the assignment's (made with it) and every run reads it."""
    with zipfile.ZipFile(autograder) as archive:
        kept = archive.read("assignment-11.toml").decode("utf-8")
        script = archive.read("run_autograder").decode("utf-8")
    assert '--assignment "$root/source/assignment-11.toml"' in script, script
    seed = int(kept.rpartition("audit_seed = ")[2])
    workspace = roster_workspace(manifest, tmp_path / "workspaces", "wrong", solved=5)
    replace_in(
        workspace / "pi_course" / "context.py",
        "if used + cost > available:",
        "if used + cost >= available:",
    )
    outputs = []
    for attempt in ("first", "again"):
        root = lay_out(autograder, tmp_path / attempt, workspace)
        run = run_script(root / "run_autograder", root)
        assert run.returncode == 0, run.stdout + run.stderr
        assert f"audit seed {seed}," in run.stdout, run.stdout
        outputs.append(json.loads((root / "results" / "results.json").read_text(encoding="utf-8")))
    assert outputs[0] == outputs[1]
    shown = json.dumps(outputs[0], ensure_ascii=False)
    assert f"seed {seed}" not in shown and f"@{seed}" not in shown, "learners never see it"
