"""Every door for a chapter that is not 11: the test chapter 12 (``tests/chapters/ch12``).

It is found through ``COURSE_CHAPTERS`` (this folder's conftest) and added with data and
chapter code alone: ``test_no_machinery_module_names_chapter_12`` keeps it so. A door is
driven the way its user drives it (the commands, a roster in the sandbox, Gradescope's
``run_autograder``, the Actions workflow's steps, Classroom 50's autograder), on the reference,
a starter workspace and a learner who solved Lab 12.1: each says what ``--practice`` says.
"""

from __future__ import annotations

import csv
import json
import os
import re
import shutil
import subprocess
import sys
import zipfile
from dataclasses import replace
from pathlib import Path

import pytest
from harness_support import cli, roster_workspace
from solutions import solve_lab
from test_architecture import CHAPTER_FREE_PACKAGES
from test_watch import Lines

from course.harness.kit import kit_root
from course.harness.manifest import CHAPTER_ROOTS, Manifest, load_manifest
from course.tools.starters import stale_starters

CHAPTER = "12"
CHAPTER_FOLDER = Path(__file__).resolve().parent / "ch12"
BIN = Path(sys.executable).parent
pytestmark = pytest.mark.costly  # handed to a worker first (tests/schedule.py)


@pytest.fixture(scope="module")
def manifest() -> Manifest:
    return load_manifest(CHAPTER)


@pytest.fixture(scope="module")
def kit() -> Path:
    return kit_root()


@pytest.fixture(scope="module")
def starter(manifest: Manifest, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A fresh chapter 12 workspace, as ``practice 12`` lays it out."""
    return roster_workspace(manifest, tmp_path_factory.mktemp("starter"), "practice-12")


@pytest.fixture(scope="module")
def halfway(manifest: Manifest, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A learner who solved Lab 12.1 and not yet Lab 12.2."""
    return roster_workspace(manifest, tmp_path_factory.mktemp("halfway"), "practice-12", 1)


def practice_report(workspace: Path, tmp_path: Path, *args: str) -> dict[str, str]:
    """Each lab's status as ``checkpoint 12 --practice`` gives it."""
    saved = tmp_path / f"practice-{workspace.parent.name}.json"
    done = cli("checkpoint", CHAPTER, "--practice", str(workspace), "--json", str(saved), *args)
    assert saved.is_file(), done.stdout + done.stderr
    report = json.loads(saved.read_text(encoding="utf-8"))
    return {lab["id"]: lab["status"] for lab in report["labs"]}


# --------------------------------------------------------------------------- the learner's doors


def test_practice_lays_out_chapter_11_given_and_the_chapter_12_files(tmp_path: Path) -> None:
    made = cli("practice", CHAPTER, str(tmp_path / "mine"))
    assert made.returncode == 0, made.stderr
    workspace = tmp_path / "mine"
    starter = (CHAPTER_FOLDER / "starters" / "12-tokens.py").read_text(encoding="utf-8")
    assert (workspace / "pi_course" / "tokens.py").read_text(encoding="utf-8") == starter
    context = (kit_root() / "course" / "context.py").read_text(encoding="utf-8")
    assert (workspace / "pi_course" / "context.py").read_text(encoding="utf-8") == context
    assert (workspace / "tests" / "chapter12" / "test_12_token_estimation.py").is_file()
    assert not (workspace / "tests" / "chapter11").exists(), "a parent's tests stay with it"
    notebooks = sorted(path.name for path in (workspace / "notebooks").iterdir())
    assert notebooks == ["12-token-estimation.ipynb"], "only the chapter's own notebooks"
    assert 'chapter = "12"' in (workspace / ".course-workspace.toml").read_text(encoding="utf-8")


def test_checkpoint_on_the_reference_passes_every_lab_with_its_evidence(tmp_path: Path) -> None:
    done = cli("checkpoint", CHAPTER, cwd=tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    lines = done.stdout.splitlines()
    assert re.search(r"^Lab 12\.1 +character estimate +3/3 tests · (\d+)/\1 cases +passed$",
                     done.stdout, re.M), done.stdout  # fmt: skip
    assert re.search(r"^Lab 12\.2 +budget with the estimate +2/2 tests · (\d+)/\1 cases +passed$",
                     done.stdout, re.M), done.stdout  # fmt: skip
    assert "evidence         5 tests, 3/3 → 2/2, cover the character count, its refusals," in (
        done.stdout
    )
    grade = ["focused tests  3/3 → 2/2 (5/5)", "grade          100/100"]
    assert [line for line in lines if line in grade] == grade


def test_checkpoint_in_a_starter_workspace_finds_every_lab_pending(starter: Path) -> None:
    done = cli("checkpoint", CHAPTER, cwd=starter)
    assert done.returncode == 1, done.stdout + done.stderr
    for lab, title in (("12.1", "character estimate"), ("12.2", "budget with the estimate")):
        [line] = [x for x in done.stdout.splitlines() if x.startswith(f"Lab {lab} ")]
        assert title in line and line.rstrip().endswith("pending"), line
    assert "0/3 → 0/2" in done.stdout and "0/5" in done.stdout


def test_one_lab_and_the_practice_verdict_agree(halfway: Path, tmp_path: Path) -> None:
    one = cli("checkpoint", CHAPTER, "--lab", "12.1", cwd=halfway)
    assert one.returncode == 0, one.stdout + one.stderr
    assert re.search(r"^Lab 12\.1 .*3/3 tests · (\d+)/\1 cases +passed$", one.stdout, re.M)
    assert not re.search(r"^Lab 12\.2 .* tests · ", one.stdout, re.M), "one lab only"
    assert "Next: Lab 12.2 budget with the estimate" in one.stdout
    assert practice_report(halfway, tmp_path) == {"12.1": "passed", "12.2": "pending"}


def test_watch_turns_a_saved_lab_green_and_moves_on(manifest: Manifest, tmp_path: Path) -> None:
    workspace = roster_workspace(manifest, tmp_path, "watched")
    process = subprocess.Popen(
        [sys.executable, "-m", "course.cli.checkpoint", CHAPTER, "--watch"],
        cwd=workspace, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
        text=True,
    )  # fmt: skip
    assert process.stdin is not None
    lines = Lines(process)
    try:
        lines.until("save a file to re-run Lab 12.1")
        solve_lab(manifest, kit_root(), workspace, "12.1")  # a real save of pi_course/tokens.py
        after = "".join(lines.until("Now: Lab 12.2"))
        assert "saved tokens.py" in after
        assert "focused tests  3/3 → 0/2 (3/5)" in after, after
        process.stdin.write("q\n")
        process.stdin.flush()
        assert process.wait(timeout=60) in (0, 1)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()


def test_replay_answers_one_case_on_the_saved_code(halfway: Path) -> None:
    agrees = cli("checkpoint", CHAPTER, "--replay", "12.1#001", cwd=halfway)
    assert agrees.returncode == 0, agrees.stdout + agrees.stderr
    assert "agrees with the reference" in agrees.stdout
    pending = cli("checkpoint", CHAPTER, "--replay", "12.2#001", cwd=halfway)
    assert pending.returncode == 1, pending.stdout + pending.stderr
    assert "12.2#001" in pending.stdout and "not implemented yet" in pending.stdout


def test_hints_come_from_the_manifest_and_a_missing_review_is_said(
    manifest: Manifest, tmp_path: Path
) -> None:
    starter = roster_workspace(manifest, tmp_path, "hinted")  # a hint opened is recorded there
    hint = cli("checkpoint", CHAPTER, "--hint", cwd=starter)
    assert hint.returncode == 0, hint.stdout + hint.stderr
    assert "In the chapter: the section “Estimating tokens by characters”" in hint.stdout
    review = cli("checkpoint", CHAPTER, "--review", cwd=starter)
    assert "chapter 12 has no closing review" in review.stdout + review.stderr


# --------------------------------------------------------------------------- the instructor's doors


def a_roster_of_two(manifest: Manifest, roster: Path) -> dict[str, dict[str, str]]:
    """The gradebook's rows of a roster in the sandbox: ada solved both labs, ben the first."""
    roster_workspace(manifest, roster, "ada", solved=2)
    roster_workspace(manifest, roster, "ben", solved=1)
    run = cli("checkpoint", CHAPTER, "--roster", str(roster), "--jobs", "1")
    assert run.returncode == 0, run.stdout + run.stderr
    book = json.loads((roster / "gradebook.json").read_text(encoding="utf-8"))
    assert book["sandbox"]["sandboxed"] is True and book["chapter"] == CHAPTER
    return {row["learner"]: row for row in csv.DictReader(
        (roster / "gradebook.csv").open(encoding="utf-8-sig"))}  # fmt: skip


def test_a_roster_of_two_grades_in_the_sandbox(manifest: Manifest, tmp_path: Path) -> None:
    rows = a_roster_of_two(manifest, tmp_path / "class")
    assert {name: (row["status"], row["score"], row["total"]) for name, row in rows.items()} == {
        "ada": ("passed", "100", "5"),
        "ben": ("pending", "60", "5"),
    }
    assert (rows["ben"]["lab 12.1"], rows["ben"]["lab 12.2"]) == ("3/3", "0/2")


def away_from_here(**more: str) -> dict[str, str]:
    """The environment a platform runs in: the kit's commands, and no ``COURSE_CHAPTERS`` (the
    autograder names the chapter's folder itself). ``COURSE_KIT_BIN`` is this kit's: issue 54
    makes the platform tests run the zip's own install instead."""
    environment = {k: v for k, v in os.environ.items() if k != CHAPTER_ROOTS}
    return environment | {"COURSE_KIT_BIN": str(BIN)} | more


def on_gradescope(submission: Path, tmp_path: Path) -> tuple[set[str], dict[str, tuple[int, int]]]:
    """The zip ``course-kit gradescope 12`` writes, laid out as Gradescope does, its
    ``setup.sh`` and ``run_autograder`` run there: the zip's names, and each lab's score."""
    from test_platforms import lay_out

    zipped = tmp_path / "autograder.zip"
    written = course_kit("gradescope", CHAPTER, "-o", str(zipped))
    assert written.returncode == 0, written.stderr
    root = lay_out(zipped, tmp_path / "autograder", submission)
    there = away_from_here(AUTOGRADER_ROOT=str(root))
    for script in (root / "source" / "setup.sh", root / "run_autograder"):
        run = subprocess.run(
            ["bash", str(script)], cwd=root, env=there,
            capture_output=True, text=True, timeout=600, check=False,
        )  # fmt: skip
        assert run.returncode == 0, f"{script.name}: {run.stdout}{run.stderr}"
    results = json.loads((root / "results" / "results.json").read_text(encoding="utf-8"))
    labs = {t["extra_data"]["lab"]: t for t in results["tests"] if "extra_data" in t}
    scores = {lab: (t["score"], t["max_score"]) for lab, t in labs.items()}
    return set(zipfile.ZipFile(zipped).namelist()), scores


def test_gradescope_grades_a_submission_as_practice_does(halfway: Path, tmp_path: Path) -> None:
    names, scores = on_gradescope(halfway, tmp_path)
    for name in ("chapter.toml", "probes.py", "tokens.py", "tests/test_12_token_estimation.py"):
        assert f"kit/chapters/ch12/{name}" in names, name  # its folder, wherever it is
    assert scores == {"12.1": (60, 60), "12.2": (0, 40)}
    assert practice_report(halfway, tmp_path) == {"12.1": "passed", "12.2": "pending"}


def test_the_actions_workflow_grades_each_chapter_12_lab_in_a_job(
    manifest: Manifest, tmp_path: Path
) -> None:
    """The workflow ``practice 12 DIR --actions`` writes: the chapter unpacked and graded once,
    then a job per lab whose report step, run as the runner runs it after the chapter's
    unpacking, passes where the lab passes."""
    from test_platforms import read_yaml

    workspace = tmp_path / "template"
    made = cli("practice", CHAPTER, str(workspace), "--actions")
    assert made.returncode == 0, made.stderr
    solve_lab(manifest, kit_root(), workspace, "12.1")
    text = (workspace / ".github" / "workflows" / "checkpoint.yml").read_text(encoding="utf-8")
    jobs = read_yaml(text)["jobs"]
    job = jobs["lab"]
    assert [lab["id"] for lab in job["strategy"]["matrix"]["lab"]] == ["12.1", "12.2"]
    grading = {step["name"]: step["run"] for step in jobs["grade"]["steps"] if "run" in step}
    steps = {step["name"]: step["run"] for step in job["steps"] if "run" in step}
    assert list(steps) == ["Unpack the kit", "Unpack the chapter", "Report the lab"]
    assert list(grading)[-2:] == ["Unpack the chapter", "checkpoint 12"]

    def run(step: str, environment: dict[str, str]) -> int:
        unpacked = subprocess.run(
            ["bash", "-e", "-c", steps["Unpack the chapter"]], cwd=workspace, env=environment,
            capture_output=True, text=True, timeout=60, check=False,
        )  # fmt: skip
        assert unpacked.returncode == 0, unpacked.stderr
        runner = Path(environment["RUNNER_TEMP"])
        named = (runner / "env").read_text(encoding="utf-8").strip()
        assert named == f"{CHAPTER_ROOTS}={runner}/chapters", "the steps after find the chapter"
        assert (runner / "chapters" / "ch12" / "chapter.toml").is_file()
        return subprocess.run(
            ["bash", "-e", "-c", step], cwd=workspace,
            env=environment | {CHAPTER_ROOTS: named.partition("=")[2]},
            capture_output=True, text=True, timeout=600, check=False,
        ).returncode  # fmt: skip

    def runner_environment(name: str, **more: str) -> dict[str, str]:
        runner = tmp_path / f"runner-{name}"
        runner.mkdir()
        return away_from_here(
            PATH=f"{BIN}{os.pathsep}{os.environ['PATH']}",
            RUNNER_TEMP=str(runner),
            GITHUB_ENV=str(runner / "env"),
            **more,
        )

    graded = runner_environment("grade")
    assert run(grading["checkpoint 12"], graded) == 0
    verdict = Path(graded["RUNNER_TEMP"]) / "checkpoint.json"
    passed = {}
    for lab in manifest.required_labs:
        environment = runner_environment(lab.id, LAB=lab.id, TITLE=lab.title)
        runner = Path(environment["RUNNER_TEMP"])
        shutil.copyfile(verdict, runner / "checkpoint.json")  # the artifact
        environment["GITHUB_STEP_SUMMARY"] = str(runner / "summary.md")
        passed[lab.id] = run(steps["Report the lab"], environment) == 0
        shown = (runner / "summary.md").read_text(encoding="utf-8")
        assert shown.startswith(f"### Lab {lab.id} · {lab.title}\n"), shown
    assert passed == {"12.1": True, "12.2": False}


def on_classroom_50(manifest: Manifest, tmp_path: Path) -> tuple[str, list[tuple[str, int, int]]]:
    """The ``autograder.py`` ``course-kit classroom50 12`` writes, run in a checkout of a
    learner who solved Lab 12.1: its text, and the tests of its ``result.json``."""
    script = tmp_path / "autograder.py"
    written = course_kit("classroom50", CHAPTER, "-o", str(script))
    assert written.returncode == 0, written.stderr
    checkout = roster_workspace(manifest, tmp_path, "checkout", solved=1)
    ran = subprocess.run(
        [sys.executable, str(script)], cwd=checkout, env=away_from_here(),
        capture_output=True, text=True, timeout=600, check=False,
    )  # fmt: skip
    assert ran.returncode == 0, ran.stdout + ran.stderr
    result = json.loads((checkout / "result.json").read_text(encoding="utf-8"))
    tests = [(t["test-name"], t["score"], t["max-score"]) for t in result["tests"]]
    return script.read_text(encoding="utf-8"), tests


def test_classroom_50_grades_a_checkout_of_chapter_12(manifest: Manifest, tmp_path: Path) -> None:
    _, tests = on_classroom_50(manifest, tmp_path)
    assert tests == [
        ("Lab 12.1 · character estimate", 60, 60),
        ("Lab 12.2 · budget with the estimate", 0, 40),
    ]


def test_the_zh_edition_speaks_the_chapters_own_catalog(tmp_path: Path) -> None:
    workspace = tmp_path / "zh"
    made = cli("practice", CHAPTER, str(workspace), "--lang", "zh")
    assert made.returncode == 0, made.stderr
    done = cli("checkpoint", CHAPTER, cwd=workspace)
    assert done.returncode == 1, done.stdout + done.stderr
    assert "下一步：Lab 12.1 字符估算（0/3 项测试" in done.stdout, done.stdout
    assert "实践 12.1 · 用字符数估算一条消息的 token" in done.stdout
    starter = (workspace / "pi_course" / "tokens.py").read_text(encoding="utf-8")
    assert "一条消息的 token 成本，只根据字符数计算（不用分词器）。" in starter


def course_kit(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(BIN / "course-kit"), *args], capture_output=True, text=True, timeout=600, check=False
    )


def test_the_maintainers_checks_cover_chapter_12() -> None:
    """``course-kit catalogs --check``, ``chapters``, ``starters --check`` and ``notebooks
    --check`` read chapter 12 too, where ``COURSE_CHAPTERS`` names its folder."""
    catalogs = course_kit("catalogs", "--check")
    assert catalogs.returncode == 0, catalogs.stdout + catalogs.stderr
    assert re.search(r"chapter 12 \d+\)", catalogs.stdout), catalogs.stdout
    contract = course_kit("chapters")
    assert contract.returncode == 0, contract.stdout + contract.stderr
    assert "12 (2 labs)" in contract.stdout
    for generated in ("starters", "notebooks"):
        checked = course_kit(generated, "--check")
        assert checked.returncode == 0, checked.stdout + checked.stderr


def test_a_stale_chapter_12_starter_is_named(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The starters' check reads chapter 12's starter where its folder is: an edited copy of
    the folder, found there, is named."""
    shutil.copytree(CHAPTER_FOLDER, tmp_path / "ch12", ignore=shutil.ignore_patterns("__pycache__"))
    monkeypatch.setenv(CHAPTER_ROOTS, str(tmp_path))
    copy = load_manifest(CHAPTER)
    starter = tmp_path / "ch12" / "starters" / "12-tokens.py"
    assert stale_starters(copy, kit_root()) == []
    starter.write_text(starter.read_text(encoding="utf-8") + "# edited\n", encoding="utf-8")
    assert stale_starters(copy, kit_root()) == [str(starter)]


def carried_by_the_site(manifest: Manifest, tmp_path: Path) -> dict[str, bytes]:
    """What the site's build does with the chapter without a download: it is among the site's
    chapters, gets a workspace per edition; what the kit's wheel carries of it."""
    from course.tools import lite

    assert CHAPTER in [chapter.chapter for chapter in lite.site_chapters()]
    lite.lay_workspaces(tmp_path, ["en", "zh"], [manifest])
    for edition in ("en", "zh"):
        workspace = tmp_path / "ch12" / edition
        assert (workspace / "pi_course" / "tokens.py").is_file(), edition
        assert (workspace / "notebooks" / "12-token-estimation.ipynb").is_file(), edition
    carried = lite.kit_sources(kit_root(), [manifest]) | lite.added_chapters(kit_root(), [manifest])
    for path in ("chapter.toml", "probes.py", "tokens.py", "locale/zh/LC_MESSAGES/chapter.mo"):
        assert f"course/curricula/ch12/{path}" in carried, path
    return carried


def test_the_zero_install_site_carries_chapter_12(manifest: Manifest, tmp_path: Path) -> None:
    """The wheel carries the chapter where the browser finds it, once: among the built-in
    chapters, its catalog compiled. The built site itself is driven by
    ``tests/browser/test_lite_site.py`` (``--lite-site``: it downloads npm and PyPI packages)."""
    carried = carried_by_the_site(manifest, tmp_path)
    assert not [path for path in carried if path.startswith("tests/chapters/")], "once, built in"


def test_a_reference_that_cannot_import_a_lab_module_draws_no_case(
    manifest: Manifest, kit: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Where the reference's lab module cannot be imported, the draw stops, saying so: no
    case keeps an ``ImportError`` as the reference's answer (nor reaches the kit's cache)."""
    from course.grading.verdict.probes import draw

    monkeypatch.delitem(sys.modules, "course.tokens", raising=False)
    inside = tuple(  # a reference said to be in the package, where there is none
        replace(file, reference="course/tokens.py") if file.path == "pi_course/tokens.py" else file
        for file in manifest.files
    )
    with pytest.raises(RuntimeError, match="cannot draw the probe cases"):
        draw(replace(manifest, files=inside), kit, manifest.probe_seed)


# --------------------------------------------------------------------------- the chapter is data


def test_the_manifest_inherits_chapter_11_and_lists_only_its_own_files(
    manifest: Manifest,
) -> None:
    own = [file.path for file in manifest.files if file.path.endswith(("tokens.py",)) or
           "chapter12" in file.path]  # fmt: skip
    assert own == [
        "pi_course/tokens.py",
        "tests/chapter12/conftest.py",
        "tests/chapter12/test_12_token_estimation.py",
    ]
    context = next(file for file in manifest.files if file.path == "pi_course/context.py")
    assert (context.role, context.starter) == ("given", "course/context.py")


CHAPTER_WORDS = re.compile(
    r"""["']12(\.\d)?["']|\bch(apter)?[ _-]?12\b|practice-12|\b12\.[12]\b|tests/chapters|"""
    r"""\btokens\.py\b|from \.?tokens import|\b(pi_)?course\.tokens\b|estimated_context|"""
    r"""TokenEstimateError|message_text|"""
    r"""token estimation|character estimate""",
    re.IGNORECASE,
)
"""How a machinery module would name chapter 12: its id, its folder, its modules and names."""


def test_no_machinery_module_names_chapter_12(kit: Path) -> None:
    found = []
    for package in CHAPTER_FREE_PACKAGES:
        for path in sorted((kit / "course" / package).rglob("*")):
            if path.suffix not in (".py", ".toml", ".cfg", ".md"):
                continue
            for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
                if CHAPTER_WORDS.search(line):
                    found.append(f"{path.relative_to(kit)}:{number}: {line.strip()}")
    assert found == [], "\n".join(found)


def test_a_planted_mention_is_found(tmp_path: Path) -> None:
    """The check above can fail: each way of naming the chapter is caught."""
    for line in ['load_manifest("12")', "from .tokens import x", "tests/chapters/ch12",
                 "practice-12", "Lab 12.2", "estimated_context(path)"]:  # fmt: skip
        assert CHAPTER_WORDS.search(line), line
    for line in ["short(full)[:12]", "width = 120", "11.2", "estimate_tokens(message)"]:
        assert not CHAPTER_WORDS.search(line), line
