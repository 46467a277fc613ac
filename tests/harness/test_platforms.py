"""Grading where courses already grade: Gradescope's autograder and GitHub Classroom's workflow.

The autograder zip is built once with ``course-kit gradescope`` (with one instructor test) and its
own ``setup.sh`` run once, as Gradescope builds the image: the kit the zip bundles installed into
its ``kit/.venv``, which every run then uses (never this development kit, which holds files the zip
may lack). The zip is unzipped into folders laid out as Gradescope lays out ``/autograder``, and its
``run_autograder`` run on a fresh, a solved (handed in as a zip), a wrong and a hostile submission,
and on uploads without a workspace. Each ``results.json`` is checked against Gradescope's documented
schema and against ``checkpoint 11 --practice``'s verdict of the same files. The Classroom
workflow's steps are read from the file ``practice 11 --classroom`` writes and run as the runner
runs them.
"""

from __future__ import annotations

import base64
import json
import os
import re
import shutil
import subprocess
import sys
import tomllib
import zipfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from harness_support import cli, enterable_folder, replace_in, roster_workspace
from hostile import FORGE_RESULTS, MODULE, append
from packing import zip_folder, zip_members
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


@dataclass(frozen=True)
class Autograder:
    """The zip ``course-kit gradescope`` writes, and where its own ``setup.sh`` installed the kit
    it bundles (``kit/.venv/bin``)."""

    zip: Path
    bin: Path

    def __fspath__(self) -> str:
        return str(self.zip)


def run_script(script: Path, root: Path, kit_bin: Path) -> subprocess.CompletedProcess[str]:
    environment = dict(os.environ, AUTOGRADER_ROOT=str(root), COURSE_KIT_BIN=str(kit_bin))
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
def autograder(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Autograder]:
    """The zip ``course-kit gradescope`` writes, with one instructor test, and its kit installed
    by its own ``setup.sh`` (in a folder other users may enter, as ``/autograder`` is: the
    fallback runs learner code, and so the kit's Python, as another user)."""
    base = tmp_path_factory.mktemp("gradescope")
    (base / "instructor").mkdir()
    (base / "instructor" / "test_instructor.py").write_text(INSTRUCTOR_TEST, encoding="utf-8")
    written = subprocess.run(
        [str(BIN / "course-kit"), "gradescope", "11", "-o", str(base / "autograder.zip"),
         "--hidden", str(base / "instructor"), "--timeout", "5"],
        capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert written.returncode == 0, written.stderr
    with enterable_folder() as image:
        with zipfile.ZipFile(base / "autograder.zip") as archive:
            archive.extractall(image / "source")
        environment = {k: v for k, v in os.environ.items() if k != "COURSE_KIT_BIN"}
        environment["PATH"] = os.pathsep.join(  # a system's PATH: not this kit's .venv
            part for part in environment["PATH"].split(os.pathsep) if Path(part) != BIN
        )
        setup = subprocess.run(
            ["bash", str(image / "source" / "setup.sh")], cwd=image, env=environment,
            capture_output=True, text=True, timeout=900, check=False,
        )  # fmt: skip
        assert setup.returncode == 0, setup.stdout + setup.stderr
        assert "setup.sh: chapter 11's autograder is ready" in setup.stdout, setup.stdout
        yield Autograder(base / "autograder.zip", image / "source" / "kit" / ".venv" / "bin")


def lay_out(autograder: Autograder, root: Path, submission: Path) -> Path:
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
    manifest: Manifest, autograder: Autograder, tmp_path_factory: pytest.TempPathFactory
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
        run = run_script(root / "run_autograder", root, autograder.bin)
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


def ungraded(autograder: Autograder, root: Path, upload: Path) -> dict[str, Any]:
    """``results.json`` of a submission that holds no one workspace."""
    laid = lay_out(autograder, root, upload)
    run = run_script(laid / "run_autograder", laid, autograder.bin)
    assert run.returncode == 0, run.stderr
    results = json.loads((laid / "results" / "results.json").read_text(encoding="utf-8"))
    assert schema_problems(results) == []
    assert results["score"] == 0, results
    assert {t["extra_data"]["status"] for t in results["tests"]} == {"error"}, results
    return results


def test_a_submission_without_a_workspace_is_every_lab_an_error(
    autograder: Autograder, tmp_path: Path
) -> None:
    upload = tmp_path / "upload"
    upload.mkdir()
    (upload / "notes.txt").write_text("my answers\n", encoding="utf-8")
    results = ungraded(autograder, tmp_path / "autograder", upload)
    said = "no lab files and no practice workspace (no .course-workspace.toml): notes.txt"
    assert said in results["output"], results["output"]


def test_a_submission_of_two_workspaces_is_every_lab_an_error(
    manifest: Manifest, autograder: Autograder, tmp_path: Path
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


def unclipped(value: Any) -> Any:
    """``value`` with each text's final newline cut, as ``read_yaml`` reads a literal block."""
    if isinstance(value, dict):
        return {key: unclipped(item) for key, item in value.items()}
    if isinstance(value, list):
        return [unclipped(item) for item in value]
    return value.removesuffix("\n") if isinstance(value, str) else value


def test_the_actions_workflow_grades_each_lab_in_a_check_run_of_its_own(
    manifest: Manifest, kit: Path, tmp_path: Path
) -> None:
    """A job per lab (a check run each): its steps, run as the runner runs them, pass where
    --practice says the lab passed, and write the lab to the job's summary."""
    workspace = tmp_path / "template"
    made = cli("practice", "11", str(workspace), "--actions")
    assert made.returncode == 0, made.stderr
    assert ".github/workflows/checkpoint.yml (GitHub Actions)" in made.stdout
    text = (workspace / ".github" / "workflows" / "checkpoint.yml").read_text(encoding="utf-8")
    document = read_yaml(text)
    yaml = pytest.importorskip("yaml")  # a YAML parser of its own (a dev dependency's) agrees
    assert unclipped(yaml.safe_load(text)) == document  # but for a block's final newline
    job = document["jobs"]["lab"]
    assert job["runs-on"] == "ubuntu-latest" and job["strategy"]["fail-fast"] is False
    matrix = job["strategy"]["matrix"]["lab"]
    assert [lab["id"] for lab in matrix] == [lab.id for lab in manifest.required_labs]
    # the kit installed and the chapter graded once per push (before: once in each of the five
    # jobs), both handed on to the labs' jobs
    assert job["needs"] == "grade"
    grade_job = {step["name"]: step for step in document["jobs"]["grade"]["steps"]}
    assert list(grade_job) == [
        "Checkout code", "Let bubblewrap make namespaces", "Install the kit", "checkpoint 11",
        "Keep the kit and the verdict for the labs' jobs",
    ]  # fmt: skip
    assert 'scripts/setup" --grading' in grade_job["Install the kit"]["run"]
    kept = grade_job["Keep the kit and the verdict for the labs' jobs"]
    assert kept["uses"] == "actions/upload-artifact@v4"
    steps = {step["name"]: step for step in job["steps"]}
    assert list(steps) == [
        "Checkout code", "Fetch the kit and the verdict of this push", "Unpack the kit",
        "Report the lab",
    ]  # fmt: skip
    assert not any("scripts/setup" in str(step) for step in job["steps"]), "installed once"
    fetched = steps["Fetch the kit and the verdict of this push"]
    assert fetched["uses"] == "actions/download-artifact@v4"
    assert fetched["with"]["name"] == kept["with"]["name"]
    steps |= grade_job
    userns = "sudo sysctl -w kernel.apparmor_restrict_unprivileged_userns=0"
    assert userns in steps["Let bubblewrap make namespaces"]["run"]
    for lab in manifest.required_labs[:2]:  # a learner on the way: two labs done
        solve_lab(manifest, kit, workspace, lab.id)
    report = tmp_path / "practice.json"
    practice = cli("checkpoint", "11", "--practice", str(workspace), "--json", str(report))
    assert practice.returncode == 1, practice.stderr
    expected = {lab["id"]: lab["status"] == "passed" for lab in json.loads(
        report.read_text(encoding="utf-8"))["labs"] if not lab["optional"]}  # fmt: skip

    def run(command: str, environment: dict[str, str]) -> int:
        return subprocess.run(
            ["bash", "-e", "-c", command], cwd=workspace, env=environment,
            capture_output=True, text=True, timeout=600, check=False,
        ).returncode  # fmt: skip

    graded = tmp_path / "runner-grade"
    graded.mkdir()
    on_path = dict(os.environ, PATH=f"{BIN}{os.pathsep}{os.environ['PATH']}")
    assert run(steps["checkpoint 11"]["run"], on_path | {"RUNNER_TEMP": str(graded)}) == 0
    passed = {}
    for lab in matrix:
        runner = tmp_path / f"runner-{lab['id']}"
        runner.mkdir()
        shutil.copyfile(graded / "checkpoint.json", runner / "checkpoint.json")  # the artifact
        summary = runner / "summary.md"
        environment = on_path | {
            "RUNNER_TEMP": str(runner), "GITHUB_STEP_SUMMARY": str(summary), "LAB": lab["id"],
            "TITLE": lab["title"],
        }  # fmt: skip
        passed[lab["id"]] = run(steps["Report the lab"]["run"], environment) == 0
        shown = summary.read_text(encoding="utf-8")
        assert shown.startswith(f"### Lab {lab['id']} · {lab['title']}\n\n```text\nLab {lab['id']}")
        points = manifest.lab(lab["id"]).points
        earned = points if expected[lab["id"]] else 0
        assert f"grade {earned}/{points}" in shown, shown
    assert passed == expected, passed
    assert list(passed.values()) == [True, True, False, False, False]


def test_the_retired_classroom_option_says_classroom_is_sunset(tmp_path: Path) -> None:
    made = cli("practice", "11", str(tmp_path / "template"), "--classroom")
    assert made.returncode == 0, made.stderr
    assert "GitHub Classroom is sunset (discontinued 28 August 2026)" in made.stderr
    assert (tmp_path / "template" / ".github" / "workflows" / "checkpoint.yml").is_file()
    assert not (tmp_path / "template" / ".github" / "workflows" / "classroom.yml").exists()


RESULT_FIELDS = {
    "schema", "classroom", "assignment", "submission", "commit", "release", "review",
    "datetime", "graded_at", "score", "max-score", "tests",
}  # fmt: skip
"""What Classroom 50's result.json contract asks an autograder for (the runner stamps
``owner`` and ``assignment_type``): its wiki's "Advanced Autograding"."""
INSTANT = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ")


def contract_problems(result: Any) -> list[str]:
    """What in ``result`` Classroom 50's ``classroom50/result/v1`` contract does not allow."""
    if not isinstance(result, dict):
        return ["not an object"]
    problems = [f"missing {key}" for key in sorted(RESULT_FIELDS - result.keys())]
    if result.get("schema") != "classroom50/result/v1":
        problems.append(f"schema: {result.get('schema')!r}")
    for key in ("datetime", "graded_at"):
        if not INSTANT.fullmatch(str(result.get(key, ""))):
            problems.append(f"{key}: {result.get(key)!r} is not a UTC ISO 8601 instant")
    tests = result.get("tests")
    if not isinstance(tests, list):
        return [*problems, "tests: not a list"]
    for index, test in enumerate(tests):
        if not isinstance(test.get("test-name"), str) or not isinstance(test.get("passed"), bool):
            problems.append(f"tests[{index}]: test-name or passed")
        for key in ("score", "max-score"):
            if type(test.get(key)) is not int:
                problems.append(f"tests[{index}].{key}: {test.get(key)!r} is not an int")
    for key in ("score", "max-score"):
        if result.get(key) != sum(test.get(key, 0) for test in tests):
            problems.append(f"{key}: not the sum of the tests'")
    return problems


def test_the_contract_check_catches_what_classroom_50_refuses() -> None:
    good = {key: "" for key in RESULT_FIELDS} | {
        "schema": "classroom50/result/v1", "datetime": "2026-06-01T14:32:01Z",
        "graded_at": "2026-06-01T14:33:11Z", "score": 4, "max-score": 5,
        "tests": [{"test-name": "a", "passed": True, "score": 4, "max-score": 5}],
    }  # fmt: skip
    assert contract_problems(good) == []
    bad = good | {"schema": "v1", "score": 3, "datetime": "yesterday"}
    del bad["review"]
    assert contract_problems(bad) == [
        "missing review", "schema: 'v1'", "datetime: 'yesterday' is not a UTC ISO 8601 instant",
        "score: not the sum of the tests'",
    ]  # fmt: skip


def test_the_classroom_50_autograder_grades_a_checkout_into_the_result_contract(
    manifest: Manifest, kit: Path, tmp_path: Path
) -> None:
    """``course-kit classroom50`` writes autograder.py; run as the runner runs it (in the
    learner's checkout, its variables set), it writes result.json: the contract's fields, a
    test per lab, the grade --practice gives the same files."""
    written = subprocess.run(
        [str(BIN / "course-kit"), "classroom50", "11", "-o",
         str(tmp_path / "autograders" / "chapter-11" / "autograder.py"),
         "--kit", "https://example.invalid/kit.git", "--kit-ref", "term-2026"],
        capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert written.returncode == 0, written.stderr
    script = tmp_path / "autograders" / "chapter-11" / "autograder.py"
    checkout = roster_workspace(manifest, tmp_path, "checkout", solved=2)
    git = ["git", "-C", str(checkout), "-c", "user.name=ada", "-c", "user.email=ada@example.com"]
    subprocess.run([*git, "init", "-q"], check=True)
    subprocess.run([*git, "add", "-A"], check=True)
    when = "2026-06-01T14:32:05+00:00"
    committed = dict(os.environ, GIT_COMMITTER_DATE=when, GIT_AUTHOR_DATE=when)
    subprocess.run([*git, "commit", "-qm", "submit"], check=True, env=committed)
    environment = dict(
        os.environ, CLASSROOM="cs-2026", ASSIGNMENT="chapter-11", USERNAME="ada", OWNER="ada",
        SUBMISSION_TAG="submit/2026-06-01T14-32-05Z-abc", COMMIT_URL="https://example.invalid/c",
        RELEASE_URL="https://example.invalid/r", COURSE_KIT_BIN=str(BIN),
    )  # fmt: skip
    ran = subprocess.run(
        [sys.executable, str(script)], cwd=checkout, env=environment,
        capture_output=True, text=True, timeout=600, check=False,
    )  # fmt: skip
    assert ran.returncode == 0, ran.stdout + ran.stderr
    result = json.loads((checkout / "result.json").read_text(encoding="utf-8"))
    assert contract_problems(result) == [], result
    assert result["datetime"] == "2026-06-01T14:32:05Z", "the commit's instant, not the run's"
    assert (result["classroom"], result["assignment"]) == ("cs-2026", "chapter-11")
    assert result["review"] == "https://example.invalid/c"
    report = tmp_path / "practice.json"
    practice = cli("checkpoint", "11", "--practice", str(checkout), "--json", str(report))
    assert practice.returncode == 1, practice.stderr
    verdict = json.loads(report.read_text(encoding="utf-8"))
    labs = [lab for lab in verdict["labs"] if not lab["optional"]]
    assert [(t["test-name"], t["score"], t["max-score"], t["passed"]) for t in result["tests"]] == [
        (
            f"Lab {lab['id']} · {lab['title']}",
            lab["score"],
            lab["points"],
            lab["status"] == "passed",
        )
        for lab in labs
    ]
    assert (result["score"], result["max-score"]) == (verdict["score"], verdict["max_score"])
    assert result["score"] == 40
    # the Release the learner opens (before: the runner's table, pass or fail per lab): each
    # lab as their terminal shows it, with why it did not pass
    body = (checkout / "release-body.md").read_text(encoding="utf-8")
    assert body.startswith("```text\nLab 11.1") and body.endswith("\n```\n"), body
    for lab in labs:
        assert f"Lab {lab['id']}  {lab['title']}" in body, body
    assert "not implemented yet" in body and "grade 40/100" in body, body
    text = script.read_text(encoding="utf-8")
    assert 'KIT_REPOSITORY = "https://example.invalid/kit.git"' in text
    assert 'KIT_REF = "term-2026"' in text


# --------------------------------------------------------------------------- Gradescope as it runs

FAKE_BWRAP = "#!/bin/sh\necho 'bwrap: No permissions to create new namespace' >&2\nexit 1\n"
"""bubblewrap as it fails in a Docker container that may not make user namespaces."""
NO_WRITE = """
import pathlib as _pl
for _target in {targets!r}:
    try:
        with open(_target, "a", encoding="utf-8") as _file:
            _file.write("WRITTEN-BY-LEARNER")
    except OSError:
        pass
"""
"""Learner code that tries to write the platform's results and the kit's files."""
NO_READ = """
for _secret in {secrets!r}:
    try:
        open(_secret, "rb").read(1)
    except OSError:
        pass
    else:
        raise RuntimeError("READ " + _secret)
"""
"""Learner code that fails every lab if it can read the reference or the instructor tests."""


@pytest.fixture
def shared() -> Iterator[Path]:
    """A folder other users may enter, as ``/autograder`` is on Gradescope."""
    with enterable_folder() as folder:
        yield folder


def docker_like(tmp_path: Path) -> dict[str, str]:
    """An environment whose ``bwrap`` fails as Docker's does."""
    fake = tmp_path / "fake-bin"
    fake.mkdir()
    (fake / "bwrap").write_text(FAKE_BWRAP, encoding="utf-8")
    (fake / "bwrap").chmod(0o755)
    return {"PATH": f"{fake}{os.pathsep}{os.environ['PATH']}"}


def autograde(
    autograder: Autograder, root: Path, upload: Path, env: dict[str, str] | None = None
) -> tuple[subprocess.CompletedProcess[str], dict[str, Any] | None]:
    """``run_autograder`` on ``upload``, and its results.json (None when none is written)."""
    laid = lay_out(autograder, root, upload)
    kit = str(autograder.bin)
    environment = dict(os.environ, AUTOGRADER_ROOT=str(laid), COURSE_KIT_BIN=kit, **env or {})
    run = subprocess.run(
        ["bash", str(laid / "run_autograder")], cwd=laid, env=environment,
        capture_output=True, text=True, timeout=600, check=False,
    )  # fmt: skip
    found = laid / "results" / "results.json"
    results = json.loads(found.read_text(encoding="utf-8")) if found.exists() else None
    return run, results


def statuses(results: dict[str, Any]) -> dict[str, str]:
    return {
        t["extra_data"]["lab"]: t["extra_data"]["status"]
        for t in results["tests"]
        if "extra_data" in t
    }


def test_the_zip_keeps_one_audit_seed_for_every_submission(
    manifest: Manifest, autograder: Autograder, tmp_path: Path
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
        run = run_script(root / "run_autograder", root, autograder.bin)
        assert run.returncode == 0, run.stdout + run.stderr
        assert f"audit seed {seed}," in run.stdout, run.stdout
        outputs.append(json.loads((root / "results" / "results.json").read_text(encoding="utf-8")))
    assert outputs[0] == outputs[1]
    shown = json.dumps(outputs[0], ensure_ascii=False)
    assert f"seed {seed}" not in shown and f"@{seed}" not in shown, "learners never see it"


TWO_SOLVED = {"11.1": "passed", "11.2": "passed"} | dict.fromkeys(LABS[2:], "pending")


def test_lab_files_uploaded_loose_are_graded_in_the_kits_scaffold(
    manifest: Manifest, autograder: Autograder, tmp_path: Path
) -> None:
    """The natural upload: the files a learner edited, at the top, with a stray file."""
    solved = roster_workspace(manifest, tmp_path / "workspaces", "solved", solved=2)
    upload = tmp_path / "upload"
    upload.mkdir()
    for name in ("summary.py", "groups.py", "context.py"):
        shutil.copy(solved / "pi_course" / name, upload / name)
    (upload / "report.pdf").write_bytes(b"%PDF-1.4\n")
    run, results = autograde(autograder, tmp_path / "autograder", upload)
    assert run.returncode == 0, run.stdout + run.stderr
    assert results is not None and schema_problems(results) == []
    assert statuses(results) == TWO_SOLVED, results
    assert results["score"] == sum(lab.points for lab in manifest.required_labs[:2])
    said = results["output"]
    put = "lab files put in the kit's scaffold (no workspace handed in): summary.py → "
    assert put + "pi_course/summary.py" in said, said
    assert "not handed in, so the starter's: pi_course/compaction.py" in said, said
    assert "also uploaded, not graded: report.pdf" in said, said
    assert re.search(r"submission +pending +40/100", run.stdout), run.stdout


def test_a_zip_of_the_package_folder_is_graded_as_loose_files(
    manifest: Manifest, autograder: Autograder, tmp_path: Path
) -> None:
    solved = roster_workspace(manifest, tmp_path / "workspaces", "solved", solved=2)
    package = tmp_path / "package"
    shutil.copytree(solved / "pi_course", package / "pi_course")
    zipped = zip_folder(package, tmp_path / "labs.zip")
    run, results = autograde(autograder, tmp_path / "autograder", zipped)
    assert run.returncode == 0, run.stdout + run.stderr
    assert results is not None and statuses(results) == TWO_SOLVED, results
    put = "lab files put in the kit's scaffold (no workspace handed in): pi_course/summary.py, "
    assert put in results["output"], results["output"]


def test_an_empty_upload_says_so(autograder: Autograder, tmp_path: Path) -> None:
    upload = tmp_path / "upload"
    upload.mkdir()
    results = ungraded(autograder, tmp_path / "autograder", upload)
    assert results["output"].startswith("the submission is empty"), results["output"]


def test_an_empty_zip_says_so(autograder: Autograder, tmp_path: Path) -> None:
    """Before: every lab an error, 'refused archive' in the instructor's stdout."""
    empty = zip_members(tmp_path / "practice-11.zip", {})
    run, results = autograde(autograder, tmp_path / "autograder", empty)
    assert run.returncode == 0, run.stdout + run.stderr
    assert results is not None and schema_problems(results) == [] and results["score"] == 0
    assert "practice-11.zip: empty submission" in results["output"], results["output"]
    assert "refused archive" not in run.stdout, run.stdout


def test_a_zip_that_lost_its_marker_is_graded_from_its_lab_files(
    manifest: Manifest, autograder: Autograder, tmp_path: Path
) -> None:
    """A workspace zipped by a file manager, which leaves hidden files out. Before, with the
    zip's own kit: exit 2 and no results.json (the kit it bundles has no notebooks, which
    building a fresh workspace read)."""
    solved = roster_workspace(manifest, tmp_path / "workspaces", "practice-11", solved=2)
    stripped = tmp_path / "practice-11.zip"
    with zipfile.ZipFile(stripped, "w") as archive:
        for path in sorted(solved.rglob("*")):
            inside = path.relative_to(solved).as_posix()
            if path.is_file() and not any(part.startswith(".") for part in inside.split("/")):
                archive.write(path, inside)
    run, results = autograde(autograder, tmp_path / "autograder", stripped)
    assert run.returncode == 0, run.stdout + run.stderr
    assert results is not None and statuses(results) == TWO_SOLVED, results
    assert "lab files put in the kit's scaffold" in results["output"], results["output"]


def test_where_bubblewrap_cannot_start_learner_code_runs_as_another_user_and_says_so(
    manifest: Manifest, autograder: Autograder, tmp_path: Path, shared: Path
) -> None:
    """Docker's refusal: the fallback grades as --practice does, learner code as an
    unprivileged user who writes neither the results nor the kit, and stdout says so."""
    root = shared / "autograder"  # learner code could enter it, but for the autograder's guard
    workspace = roster_workspace(manifest, tmp_path / "workspaces", "solved", solved=2)
    targets = [str(root / "results" / "results.json"), str(root / "source" / "kit" / "README.md")]
    append(workspace, MODULE, NO_WRITE.format(targets=targets))
    secrets = [root / "source" / "kit" / "course" / "summary.py"]
    secrets.append(root / "source" / "instructor" / "test_instructor.py")
    append(workspace, MODULE, NO_READ.format(secrets=[str(path) for path in secrets]))
    run, results = autograde(autograder, root, workspace, docker_like(tmp_path))
    assert run.returncode == 0, run.stdout + run.stderr
    assert results is not None and schema_problems(results) == []
    assert statuses(results) == TWO_SOLVED, results
    assert "isolation: bubblewrap cannot start in this container" in run.stdout, run.stdout
    assert "No permissions to create new namespace" in run.stdout, run.stdout
    assert re.search(r"learner code runs as host user 655\d\d \(not root\)", run.stdout), run.stdout
    assert "WRITTEN-BY-LEARNER" not in (root / "source" / "kit" / "README.md").read_text("utf-8")
    assert "WRITTEN-BY-LEARNER" not in (root / "results" / "results.json").read_text("utf-8")


def test_where_nothing_can_confine_learner_code_the_autograder_fails_visibly(
    manifest: Manifest, autograder: Autograder, tmp_path: Path, shared: Path
) -> None:
    """No namespaces, and the user learner code would run as could write the autograder's own
    folder: no results.json and a non-zero exit, which Gradescope shows as an autograder
    failure, never a zero."""
    root = shared / "autograder"
    root.mkdir()
    root.chmod(0o777)  # a platform folder anyone may write: dropping to another user is no guard
    workspace = roster_workspace(manifest, tmp_path / "workspaces", "solved", solved=2)
    run, results = autograde(autograder, root, workspace, docker_like(tmp_path))
    assert run.returncode != 0, run.stdout + run.stderr
    assert results is None, results
    assert "cannot confine learner code here, so it graded nothing" in run.stdout, run.stdout
    assert "No permissions to create new namespace" in run.stdout, run.stdout
    assert f"user 65534 could write {root}" in run.stdout, run.stdout
    assert "Gradescope shows the autograder failed" in run.stdout


def test_setup_installs_what_grading_needs_and_nothing_else(
    autograder: Autograder, kit: Path
) -> None:
    """setup.sh runs the kit's setup for grading: the project's own dependencies (no extra, so
    none of the notebooks' Jupyter stack), bubblewrap and setpriv."""
    with zipfile.ZipFile(autograder) as archive:
        setup = archive.read("setup.sh").decode()
    assert 'bash "$here/kit/scripts/setup" --grading' in setup
    script = (kit / "scripts" / "setup").read_text(encoding="utf-8")
    assert 'if [ "$extra" = grading ]; then target="."; else target=".[$extra]"; fi' in script
    assert "util-linux" in script  # setpriv, for the fallback where bubblewrap cannot start
    project = tomllib.loads((kit / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    needed = {
        re.split(r"[<>=\[ ]", dependency)[0].lower() for dependency in project["dependencies"]
    }
    assert needed == {"pytest", "watchfiles", "hypothesis", "babel"}, needed
    unused = ("jupyterlab", "ipywidgets", "ipykernel", "nbval", "playwright")
    assert not needed & set(unused)
    refused = subprocess.run(
        ["bash", str(kit / "scripts" / "setup"), "--bogus"], capture_output=True, text=True,
        check=False,
    )  # fmt: skip
    assert refused.returncode == 2 and "--grading" in refused.stderr, refused.stderr


def test_a_workspace_uploaded_without_its_hidden_marker_is_graded_from_its_lab_files(
    manifest: Manifest, autograder: Autograder, tmp_path: Path
) -> None:
    """A workspace folder dragged into the upload (or zipped by a file manager) without the
    hidden .course-workspace.toml: its lab files are found in its folder and graded."""
    solved = roster_workspace(manifest, tmp_path / "workspaces", "practice-11", solved=2)
    (solved / ".course-workspace.toml").unlink()
    upload = tmp_path / "upload"
    upload.mkdir()
    shutil.copytree(solved, upload / "practice-11")
    run, results = autograde(autograder, tmp_path / "autograder", upload)
    assert run.returncode == 0, run.stdout + run.stderr
    assert results is not None and statuses(results) == TWO_SOLVED, results
    said = results["output"]
    assert "practice-11/pi_course/summary.py → pi_course/summary.py" in said, said
    assert "edited" not in said and "edited" not in run.stdout, run.stdout
