"""A probe case that disagrees is one a learner can see and replay, at every door.

Every door names a failing probe case with its input and a replay command; the command
reproduces the case on the saved code. (That plain pytest in a workspace fails on the cases
``checkpoint`` names, for every curated mutant, is in test_mutants.py, which grades each once.)
"""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest
from harness_support import (
    CHAPTER,
    Check,
    MakeWorkspace,
    cli,
    failure_ids,
    plain_pytest,
    sabotage,
    watch_once,
    with_mutant,
    words,
)
from mutants import MUTANTS
from solutions import solve_lab

from course.display.notebook import check as notebook_check
from course.harness.catalog import kit_catalog
from course.harness.manifest import Manifest

PROBE_FILE = "tests/chapter11/test_11_probe_cases.py"
REPLAY = re.compile(r"replay: (\S*checkpoint 11 --replay (\d+\.\w+#[\w-]+))")
"""A replay line: the command as printed (the full path into .venv where ``checkpoint`` is not on
PATH) and the case it names."""


MARGIN = next(m for m in MUTANTS if m.name == "forgets_the_safety_margin")
"""The mutant whose Lab 11.3 probe failures the doors name."""


def as_printed(
    command: str, *more: str, cwd: Path | None = None
) -> subprocess.CompletedProcess[str]:
    """Run a printed command in a shell, exactly as a learner would paste it: a bare
    ``checkpoint`` (as feedback files print it) finds the kit's commands on PATH, as in a
    learner's shell with the kit's environment active."""
    path = os.environ.get("PATH", "")
    if command.startswith("checkpoint "):  # printed bare: the kit's environment is active
        path = os.pathsep.join([str(Path(sys.executable).parent), path])
    return subprocess.run(
        ["bash", "-c", " ".join([command, *more])],
        cwd=cwd,
        env={**os.environ, "PATH": path},
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )


def test_the_probe_cases_file_counts_in_no_lab(manifest: Manifest, kit: Path) -> None:
    catalog = kit_catalog(manifest, kit)
    assert not [t for t in catalog.tests if t.file == PROBE_FILE]
    assert [lab.tests for lab in manifest.required_labs] == [3, 3, 3, 2, 3]
    shipped = {f.path for f in manifest.files_with_role("test")}
    assert {PROBE_FILE, "tests/chapter11/probe_cases.json"} <= shipped


@dataclass(frozen=True)
class Graded:
    workspace: Path
    run: subprocess.CompletedProcess[str]
    report: str


@pytest.fixture(scope="module")
def in_the_workspace(manifest: Manifest, kit: Path, make_workspace: MakeWorkspace) -> Graded:
    """``checkpoint 11 --lab 11.3 --no-card --json REPORT`` once in the mutant's workspace:
    the terminal test reads what it printed, the ``--json`` door its report."""
    workspace = with_mutant(manifest, kit, make_workspace, MARGIN)
    report = workspace.parent / "report.json"
    run = cli(
        "checkpoint", CHAPTER, "--lab", "11.3", "--no-card", "--json", str(report), cwd=workspace
    )
    assert report.exists(), run.stdout + run.stderr
    return Graded(workspace, run, report.read_text(encoding="utf-8"))


def test_every_probe_failure_at_the_terminal_replays(in_the_workspace: Graded) -> None:
    workspace, run = in_the_workspace.workspace, in_the_workspace.run
    assert run.returncode == 1, run.stdout + run.stderr
    replays = REPLAY.findall(run.stdout)
    assert len(replays) == 3, run.stdout
    for command, case in replays:
        again = as_printed(command, cwd=workspace)
        assert again.returncode == 1, again.stdout + again.stderr
        described = again.stdout.split("\n", 1)[1]
        assert case in described.splitlines()[0]
        budget = next(line for line in described.splitlines() if "system_prompt=" in line)
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
    # the notebook wraps a long line (a rule's id is long): the same words, in order
    assert f"({case})" in first and words(first) in words(view.text), (first, view.text)
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


def test_a_case_that_fails_only_after_other_cases_replays_as_state_kept_between_calls(
    manifest: Manifest, kit: Path, make_workspace: MakeWorkspace, check: Check
) -> None:
    workspace = make_workspace("stateful")
    for lab in manifest.labs:
        solve_lab(manifest, kit, workspace, lab.id)
    # summary_message answers every call as it answered its first: state kept between calls
    sabotage(
        workspace,
        "compaction",
        "summary_message",
        "return _was_summary_message(*globals().setdefault('_FIRST', args))",
    )
    result = check(workspace, labs=["11.5"])
    summary = result.labs[0].probes
    assert summary is not None and not summary.agree
    # named where it is first seen: the failure's first line, at every door (issue 55)
    first = summary.failures[0].splitlines()[0]
    said = "(11.5#005): look for state kept between calls: asked alone, it agrees; after the "
    assert f"{said}cases asked before it, message.content: expected" in first, first
    case = failure_ids(summary)[0]
    alone = cli("checkpoint", CHAPTER, "--replay", case, cwd=workspace)
    assert alone.returncode == 1, alone.stdout + alone.stderr
    assert "passes alone; failed after other cases" in alone.stdout, alone.stdout
    assert "look for state kept between calls" in alone.stdout, alone.stdout
    assert "agrees with the reference" not in alone.stdout, alone.stdout


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
    """What one door shows of a workspace's Lab 11.3 (its printout or gradebook); the ``--json``
    door's report is ``in_the_workspace``'s."""
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
    door: str,
    manifest: Manifest,
    kit: Path,
    make_workspace: MakeWorkspace,
    tmp_path: Path,
    in_the_workspace: Graded,
) -> None:
    if door == "--json":
        workspace, text = in_the_workspace.workspace, in_the_workspace.report
    else:
        workspace = with_mutant(manifest, kit, make_workspace, MARGIN)
        text = door_text(door, workspace, tmp_path)
    if door in ("--json", "--roster"):
        text = text.replace("\\n", "\n").replace('\\"', '"')
    found = REPLAY.search(text)
    assert found is not None, text[-3000:]
    assert "path:" in text and "max_tokens=" in text, text[-3000:]
    command, case = found.groups()
    again = as_printed(command, "--practice", shlex.quote(str(workspace)))
    assert again.returncode == 1, again.stdout + again.stderr
    first = again.stdout.splitlines()[1]
    assert f"({case})" in first
    assert words(first) in words(text.replace(" | ", "\n")), (first, text[-3000:])
