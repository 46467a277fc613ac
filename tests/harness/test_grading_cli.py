"""The instructor's side of ``checkpoint``: the sandbox requirement, empty rosters, hidden tests."""

from __future__ import annotations

import csv
import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

from harness_support import cli
from solutions import solve_lab

from course.harness.manifest import Manifest
from course.harness.workspace import create_workspace

NO_BWRAP = {**os.environ, "PATH": "/nonexistent"}
"""An environment in which bubblewrap cannot be found (Python is started by its full path)."""


def checkpoint(
    *args: str, env: dict[str, str] | None = None, cwd: Path | None = None
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "course.cli.checkpoint", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
        env=env,
    )


def solved(manifest: Manifest, kit: Path, folder: Path, labs: int) -> Path:
    create_workspace(manifest, kit, folder)
    for lab in manifest.required_labs[:labs]:
        solve_lab(manifest, kit, folder, lab.id)
    return folder


def test_an_empty_roster_exits_non_zero_and_says_what_it_found(tmp_path: Path) -> None:
    empty = cli("checkpoint", "11", "--roster", str(tmp_path))
    assert empty.returncode == 1
    assert "no practice workspace to grade (it is empty)" in empty.stderr
    (tmp_path / "notes").mkdir()
    (tmp_path / "alias").symlink_to("notes")
    strays = cli("checkpoint", "11", "--roster", str(tmp_path))
    assert strays.returncode == 1
    assert "alias: a symbolic link (to notes)" in strays.stderr
    assert "notes: empty submission" in strays.stderr
    assert not (tmp_path / "gradebook.csv").exists()


def test_the_roster_refuses_to_run_without_the_sandbox_unless_told(
    manifest: Manifest, kit: Path, tmp_path: Path
) -> None:
    roster = tmp_path / "roster"
    solved(manifest, kit, roster / "ada", 5)
    refused = checkpoint("11", "--roster", str(roster), env=NO_BWRAP)
    assert refused.returncode == 2
    assert "the sandbox cannot start (bubblewrap (bwrap) is not installed" in refused.stderr
    assert "--unsandboxed" in refused.stderr
    assert not (roster / "gradebook.csv").exists()
    run = checkpoint("11", "--roster", str(roster), "--unsandboxed", env=NO_BWRAP)
    assert run.returncode == 0, run.stdout + run.stderr
    assert "limits: no sandbox: learner code runs with the grader's own permissions" in run.stdout
    book = json.loads((roster / "gradebook.json").read_text(encoding="utf-8"))
    assert book["sandbox"]["sandboxed"] is False
    [ada] = book["learners"]
    assert (ada["status"], ada["passed"]) == ("passed", 14)
    assert any("not sandboxed (--unsandboxed)" in note for note in ada["notes"])


def test_a_learners_own_checkpoint_runs_without_the_sandbox_and_says_so(
    manifest: Manifest, kit: Path, tmp_path: Path
) -> None:
    """As an ordinary user; as root it refuses (learner code never runs as host root
    unconfined), saying how to run it anyway."""
    workspace = solved(manifest, kit, tmp_path / "mine", 1)
    run = checkpoint("11", "--lab", "11.1", env=NO_BWRAP, cwd=workspace)
    if os.geteuid() == 0:
        assert run.returncode == 2, run.stdout + run.stderr
        assert "as root, the code would run unconfined as host root" in run.stderr
        assert "--unsandboxed" in run.stderr
        run = checkpoint("11", "--lab", "11.1", "--unsandboxed", env=NO_BWRAP, cwd=workspace)
        assert run.returncode == 0, run.stdout + run.stderr
        assert "note: not sandboxed (--unsandboxed)" in run.stdout
        return
    assert run.returncode == 0, run.stdout + run.stderr
    assert "note: not sandboxed: bubblewrap (bwrap) is not installed or not on PATH" in run.stdout
    assert "\n3/3\n" in run.stdout, "the lab's evidence line"


def test_someone_elses_workspace_never_runs_without_the_sandbox_unless_asked(
    manifest: Manifest, kit: Path, tmp_path: Path
) -> None:
    workspace = solved(manifest, kit, tmp_path / "theirs", 1)
    refused = checkpoint("11", "--practice", str(workspace), "--lab", "11.1", env=NO_BWRAP)
    assert refused.returncode == 2
    assert "the sandbox cannot start" in refused.stderr and "--unsandboxed" in refused.stderr
    asked = checkpoint(
        "11", "--practice", str(workspace), "--lab", "11.1", "--unsandboxed", env=NO_BWRAP
    )
    assert asked.returncode == 0, asked.stdout + asked.stderr
    assert "note: not sandboxed (--unsandboxed)" in asked.stdout


HIDDEN = """
import pytest


@pytest.mark.lab("11.1")
def test_hidden_parse_summary_keeps_an_empty_list(impl):
    summary = impl.session.parse_summary(dict(impl.fixtures.COMPACT_1_SUMMARY, unresolved=[]))
    assert summary.unresolved == []


@pytest.mark.lab("11.3")
@pytest.mark.parametrize("max_tokens", [31, 40])
def test_hidden_budget_keeps_the_newest_group(impl, max_tokens):
    path = [impl.session.parse_session_entry(e) for e in impl.fixtures.chapter_path_json()]
    options = impl.fixtures.CHAPTER_BUDGET.options() | {"max_tokens": max_tokens}
    result = impl.context.build_context(
        path, **options, estimate_tokens=impl.fixtures.chapter_estimator
    )
    assert result.kept_entry_ids[-1] == "a3"
"""


def test_instructor_tests_add_to_the_grade_and_stay_out_of_workspaces(
    manifest: Manifest, kit: Path, tmp_path: Path
) -> None:
    hidden = tmp_path / "hidden"
    hidden.mkdir()
    (hidden / "test_instructor.py").write_text(textwrap.dedent(HIDDEN))
    # the labs the instructor tests are in: 11.1's 3 + 1 and 11.3's 3 + 2
    report = tmp_path / "reference.json"
    reference = cli(
        "checkpoint", "11", "--hidden", str(hidden), "--no-card", "--lab", "11.1", "--lab", "11.3",
        "--json", str(report),
    )  # fmt: skip
    assert reference.returncode == 0, reference.stdout + reference.stderr
    data = json.loads(report.read_text(encoding="utf-8"))
    assert (data["passed"], data["total"]) == (9, 9), "three instructor tests on the reference"
    assert (data["score"], data["max_score"]) == (40, 40), "inside their labs' points"
    shown = "\nfocused tests  3/3 → 3/3 (6/6)\npoints         Lab 11.1 20/20, Lab 11.3 20/20\n"
    assert shown in reference.stdout, "two labs' run: their points, never a chapter's grade"
    roster = tmp_path / "roster"
    solved(manifest, kit, roster / "ada", 5)
    solved(manifest, kit, roster / "ben", 2)
    run = cli("checkpoint", "11", "--roster", str(roster), "--hidden", str(hidden))
    assert run.returncode == 0, run.stdout + run.stderr
    rows = {
        r["learner"]: r
        for r in csv.DictReader((roster / "gradebook.csv").open(encoding="utf-8-sig"))
    }
    assert (rows["ada"]["passed"], rows["ada"]["total"]) == ("17", "17")
    assert [rows[learner]["score"] for learner in ("ada", "ben")] == ["100", "40"]
    assert [rows["ada"][f"lab {i}"] for i in ("11.1", "11.3")] == ["4/4", "5/5"]
    assert [rows["ben"][f"lab {i}"] for i in ("11.1", "11.2", "11.3")] == ["4/4", "3/3", "0/5"]
    book = json.loads((roster / "gradebook.json").read_text(encoding="utf-8"))
    ada = next(row for row in book["learners"] if row["learner"] == "ada")
    assert sum(test["instructor"] for test in ada["tests"]) == 3
    assert not list(roster.rglob("test_instructor.py")), "learners never see them"


def test_instructor_tests_must_say_their_lab(tmp_path: Path) -> None:
    (tmp_path / "test_unmarked.py").write_text("def test_something(impl):\n    pass\n")
    run = cli("checkpoint", "11", "--hidden", str(tmp_path))
    assert run.returncode == 2
    assert "test_unmarked.py::test_something: needs exactly one @pytest.mark.lab" in run.stderr
