"""A probe case that disagrees is one a learner can see and replay, at every door.

Every door names a failing probe case with its input and a replay command; the command
reproduces the case on the saved code. In a workspace, plain pytest runs the manifest's seed's
probe cases beside the focused tests and fails on the cases ``checkpoint --lab`` names.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import pytest
from harness_support import (
    CHAPTER,
    Check,
    MakeWorkspace,
    cli,
    replace_in,
    sabotage,
    watch_once,
)
from mutants import MUTANTS, Mutant
from solutions import solve_lab

from course.display.notebook import check as notebook_check
from course.harness.catalog import kit_catalog
from course.harness.manifest import Manifest
from course.harness.results import ProbeSummary
from course.locale import ENVIRONMENT

PROBE_FILE = "tests/chapter11/test_11_probe_cases.py"
FAILED = re.compile(r"^FAILED tests/chapter11/test_11_probe_cases\.py::\w+\[([^\]]+)\]", re.M)
REPLAY = re.compile(r"replay: (\S*checkpoint 11 --replay (\d+\.\w+#\d+))")
"""A replay line: the command as printed (the full path into .venv where ``checkpoint`` is not on
PATH) and the case it names."""


def as_printed(
    command: str, *more: str, cwd: Path | None = None
) -> subprocess.CompletedProcess[str]:
    """Run a printed command in a shell, exactly as a learner would paste it."""
    return subprocess.run(
        ["bash", "-c", " ".join([command, *more])],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )


def words(text: str) -> str:
    """``text`` with every run of whitespace one space (terminals wrap long lines), and
    without the ``E`` pytest puts before each line of an exception's message."""
    return " ".join(re.sub(r"(?m)^E +", "", text).split())


def plain_pytest(workspace: Path, select: str) -> subprocess.CompletedProcess[str]:
    """``python -m pytest -k SELECT`` in the workspace, as LEARNING.md says to run one lab."""
    env = {k: v for k, v in os.environ.items() if k not in ("COURSE_LAB_PACKAGE", "PYTEST_ADDOPTS")}
    env[ENVIRONMENT] = "en"
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-rf", "-k", select],
        cwd=workspace,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )


def with_mutant(manifest: Manifest, kit: Path, make: MakeWorkspace, mutant: Mutant) -> Path:
    """A workspace with every lab solved, then the mutant's mistake made in it."""
    workspace = make(f"mutant-{mutant.name}")
    for lab in manifest.labs:
        solve_lab(manifest, kit, workspace, lab.id)
    replace_in(workspace / "pi_course" / mutant.module, mutant.old, mutant.new)
    return workspace


def failure_ids(summary: ProbeSummary) -> list[str]:
    """The case ids the summary names, from each failure's first line (``… (11.3#007): …``)."""
    found = [re.search(r"\((\d+\.\w+#\d+)\)", f.splitlines()[0]) for f in summary.failures]
    return [m.group(1) for m in found if m is not None]


def test_the_probe_cases_file_counts_in_no_lab(manifest: Manifest, kit: Path) -> None:
    catalog = kit_catalog(manifest, kit)
    assert not [t for t in catalog.tests if t.file == PROBE_FILE]
    assert [lab.tests for lab in manifest.required_labs] == [3, 3, 3, 2, 3]
    shipped = {f.path for f in manifest.files_with_role("test")}
    assert {PROBE_FILE, "tests/chapter11/probe_cases.json"} <= shipped


@dataclass(frozen=True)
class BothDoors:
    mutant: Mutant
    pytest: subprocess.CompletedProcess[str]
    summary: ProbeSummary


@pytest.fixture(scope="module")
def both_doors(
    manifest: Manifest, kit: Path, tmp_path_factory: pytest.TempPathFactory
) -> dict[str, BothDoors]:
    """Every curated mutant's lab through plain pytest and through ``checkpoint --lab``'s
    engine (two mutants at a time: each is a few processes)."""
    from course.grading import probes
    from course.grading.engine import GradingOptions, evaluate
    from course.harness.commands import shell_commands
    from course.harness.runner import Limits

    drawn = probes.prepare(manifest, kit, manifest.labs, manifest.probe_seed)
    folder = tmp_path_factory.mktemp("both-doors")

    def make(name: str) -> Path:
        from course.harness.workspace import create_workspace

        create_workspace(manifest, kit, folder / name)
        return folder / name

    def run(mutant: Mutant) -> BothDoors:
        workspace = with_mutant(manifest, kit, make, mutant)
        lab = manifest.lab(mutant.lab)
        ran = plain_pytest(workspace, lab.select)
        options = GradingOptions(probes=drawn, commands=shell_commands())
        result = evaluate(manifest, kit, workspace, [lab.id], Limits(), options)
        summary = next(r.probes for r in result.labs if r.lab.id == lab.id)
        assert summary is not None
        return BothDoors(mutant, ran, summary)

    with ThreadPoolExecutor(max_workers=2) as pool:
        return {done.mutant.name: done for done in pool.map(run, MUTANTS)}


@pytest.mark.parametrize("mutant", MUTANTS, ids=[m.name for m in MUTANTS])
def test_plain_pytest_fails_on_the_cases_checkpoint_lab_names(
    mutant: Mutant, both_doors: dict[str, BothDoors]
) -> None:
    done = both_doors[mutant.name]
    output = done.pytest.stdout + done.pytest.stderr
    failed = FAILED.findall(done.pytest.stdout)
    assert not [i for i in failed if not i.startswith(f"{mutant.lab}#")], output
    disagreeing = done.summary.cases - done.summary.agreed
    assert len(failed) == disagreeing, (
        f"checkpoint: {disagreeing} of {done.summary.cases} cases disagree; "
        f"pytest failed {len(failed)}: {failed}\n{output[-3000:]}"
    )
    named = failure_ids(done.summary)
    assert set(named) <= set(failed), (named, failed)
    shown = words(output)
    for failure in done.summary.failures:
        assert words(failure) in shown, f"pytest does not say what checkpoint says:\n{failure}"


def test_every_probe_failure_at_the_terminal_replays(
    manifest: Manifest, kit: Path, make_workspace: MakeWorkspace
) -> None:
    mutant = next(m for m in MUTANTS if m.name == "forgets_the_safety_margin")
    workspace = with_mutant(manifest, kit, make_workspace, mutant)
    run = cli("checkpoint", CHAPTER, "--lab", "11.3", "--no-card", cwd=workspace)
    assert run.returncode == 1, run.stdout + run.stderr
    replays = REPLAY.findall(run.stdout)
    assert len(replays) == 3, run.stdout
    for command, case in replays:
        again = as_printed(command, cwd=workspace)
        assert again.returncode == 1, again.stdout + again.stderr
        described = again.stdout.split("\n", 1)[1]
        assert case in described.splitlines()[0]
        budget = next(line for line in described.splitlines() if "budget:" in line)
        assert "path:" in described and "max_tokens=" in budget, described
        assert words(described) in words(run.stdout), (described, run.stdout)


def test_a_probe_failure_in_a_notebook_check_replays(
    manifest: Manifest, kit: Path, make_workspace: MakeWorkspace
) -> None:
    mutant = next(m for m in MUTANTS if m.lab == "11.2")
    workspace = with_mutant(manifest, kit, make_workspace, mutant)
    view = notebook_check("11.2", start=workspace / "notebooks")
    replays = REPLAY.findall(view.text)
    assert replays, view.text
    command, case = replays[0]
    again = as_printed(command, cwd=workspace)
    assert again.returncode == 1, again.stdout + again.stderr
    first = again.stdout.splitlines()[1]
    assert f"({case})" in first and first in view.text, (first, view.text)
    assert words(again.stdout.split("\n", 1)[1]) in words(view.text)


def test_a_replay_shows_the_learner_s_frames_when_their_code_raises(
    manifest: Manifest, kit: Path, make_workspace: MakeWorkspace, check: Check
) -> None:
    workspace = make_workspace("raises")
    for lab in manifest.labs:
        solve_lab(manifest, kit, workspace, lab.id)
    sabotage(workspace, "groups", "check_tool_pairs", "raise KeyError('lost the call id')")
    result = check(workspace, labs=["11.2"])
    summary = result.labs[0].probes
    assert summary is not None and not summary.agree
    case = failure_ids(summary)[0]
    again = cli("checkpoint", CHAPTER, "--replay", case, cwd=workspace)
    assert again.returncode == 1, again.stdout + again.stderr
    assert "KeyError: 'lost the call id'" in again.stdout, again.stdout
    assert "raised in your code:" in again.stdout
    assert "pi_course/groups.py:" in again.stdout, again.stdout
    ran = plain_pytest(workspace, f"lab_11_2_probe and {case.replace('#', ' and ')}")
    assert "pi_course/groups.py" in ran.stdout and "lost the call id" in ran.stdout, ran.stdout


def test_a_case_that_agrees_replays_as_agreeing_and_an_unknown_one_is_named(
    manifest: Manifest, kit: Path, make_workspace: MakeWorkspace
) -> None:
    workspace = make_workspace("solved")
    for lab in manifest.labs:
        solve_lab(manifest, kit, workspace, lab.id)
    agrees = cli("checkpoint", CHAPTER, "--replay", "11.3#001", cwd=workspace)
    assert agrees.returncode == 0 and "agrees with the reference" in agrees.stdout, agrees
    unknown = cli("checkpoint", CHAPTER, "--replay", "11.3#999", cwd=workspace)
    assert unknown.returncode == 2 and "11.3#999" in unknown.stderr, unknown


def test_a_roster_draws_the_instructor_s_seed_and_the_gradebook_records_it(
    manifest: Manifest, tmp_path: Path
) -> None:
    from harness_support import roster_workspace

    roster = tmp_path / "roster"
    roster_workspace(manifest, roster, "ada", solved=5)
    run = cli("checkpoint", CHAPTER, "--roster", str(roster), "--lab", "11.1", "--seed", "4242")
    assert run.returncode == 0, run.stdout + run.stderr
    book = json.loads((roster / "gradebook.json").read_text(encoding="utf-8"))
    assert book["probes"]["seed"] == 4242, book["probes"]
    assert book["probes"]["cases"] > 0


def door_text(door: str, workspace: Path, tmp_path: Path) -> str:
    """What one door shows of a workspace's Lab 11.3 (its printout, report or gradebook)."""
    if door == "--json":
        report = tmp_path / "report.json"
        cli("checkpoint", CHAPTER, "--lab", "11.3", "--json", str(report), cwd=workspace)
        return report.read_text(encoding="utf-8")
    if door == "--practice":
        return cli("checkpoint", CHAPTER, "--practice", str(workspace), "--lab", "11.3").stdout
    if door == "--watch":
        return watch_once(workspace, "--lab", "11.3").stdout
    roster = tmp_path / "roster"
    roster.mkdir()
    shutil.copytree(workspace, roster / "ada", symlinks=True)
    cli("checkpoint", CHAPTER, "--roster", str(roster), "--lab", "11.3")
    return (roster / "gradebook.json").read_text(encoding="utf-8")


@pytest.mark.parametrize("door", ["--json", "--practice", "--watch", "--roster"])
def test_every_door_names_a_failing_case_with_its_input_and_a_replay_that_reproduces_it(
    door: str, manifest: Manifest, kit: Path, make_workspace: MakeWorkspace, tmp_path: Path
) -> None:
    mutant = next(m for m in MUTANTS if m.name == "forgets_the_safety_margin")
    workspace = with_mutant(manifest, kit, make_workspace, mutant)
    text = door_text(door, workspace, tmp_path)
    if door in ("--json", "--roster"):
        text = text.replace("\\n", "\n").replace('\\"', '"')
    found = REPLAY.search(text)
    assert found is not None, text[-3000:]
    assert "path:" in text and "budget:" in text, text[-3000:]
    command, case = found.groups()
    again = as_printed(command, "--practice", shlex.quote(str(workspace)))
    assert again.returncode == 1, again.stdout + again.stderr
    first = again.stdout.splitlines()[1]
    assert f"({case})" in first
    assert words(first) in words(text.replace(" | ", "\n")), (first, text[-3000:])
