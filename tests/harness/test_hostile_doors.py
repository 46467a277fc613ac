"""Every door reads a workspace by the roster's rules: the watch, the marker, the review, practice.

Each attack is one a learner could plant in their own workspace before a teacher (or the
learner, as root) opens it with ``--practice``, ``--watch``, ``--review`` or a notebook's
``check()``. Each is refused with a one-line reason (never a traceback), and an honest workspace
beside it still opens.
"""

from __future__ import annotations

import io
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from harness_support import cli, lab_verdicts
from hostile import MODULE, append

from course.cli.review import render_review, run_review
from course.cli.watch import PROBE_NAME, WatchLoop, watch
from course.display.notebook import check
from course.grading.intake.safefs import Tree
from course.grading.intake.snapshot import workspace_snapshot
from course.grading.verdict.engine import GradingOptions
from course.harness.kit import kit_root
from course.harness.manifest import Manifest
from course.harness.results import CheckpointResult
from course.harness.runner import Limits
from course.harness.workspace import create_workspace
from course.sandboxed.marker import MARKER, MARKER_BYTES, WorkspaceError, read_workspace

"""Seconds a refusal may take at most (a bound: a refusal reads nothing big)."""


@pytest.fixture
def workspace(manifest: Manifest, tmp_path: Path) -> Path:
    folder = tmp_path / "practice"
    create_workspace(manifest, kit_root(), folder)
    return folder


def _set_marker_field(workspace: Path, key: str, value: str) -> None:
    marker = workspace / MARKER
    lines = marker.read_text(encoding="utf-8").splitlines()
    lines = [f"{key} = {value}" if line.startswith(f"{key} = ") else line for line in lines]
    marker.write_text("\n".join(lines) + "\n", encoding="utf-8")


def _refused(run: subprocess.CompletedProcess[str], said: str) -> None:
    """Exit 2, one short line naming what is wrong, no traceback."""
    output = run.stdout + run.stderr
    assert run.returncode == 2, output
    assert "Traceback" not in output, output
    assert said in run.stderr, run.stderr
    assert len(run.stderr) < 1000, f"{len(run.stderr)} characters: {run.stderr[:300]}…"


# --------------------------------------------------------------------------- the watch's probe


class KeysAfter:
    """Standard input that sends ``q`` once ``out`` shows the probe was decided."""

    def __init__(self, out: io.StringIO) -> None:
        self.out = out

    def isatty(self) -> bool:
        return False

    def __iter__(self) -> Iterator[str]:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            text = self.out.getvalue()
            if "File changes are picked up" in text or "No file change events" in text:
                break
            time.sleep(0.05)
        yield "q\n"


def test_the_watch_writes_nothing_through_a_learners_link_at_the_probe_path(
    manifest: Manifest, workspace: Path, tmp_path: Path
) -> None:
    outside = tmp_path / "precious.txt"
    outside.write_text("the instructor's file\n", encoding="utf-8")
    link = workspace / manifest.package / PROBE_NAME
    link.symlink_to(outside)
    out = io.StringIO()
    loop = WatchLoop(manifest, lambda: CheckpointResult(manifest.chapter, "", ()), out)
    package = workspace / manifest.package
    assert watch(loop, package, KeysAfter(out), 1.0, beside=workspace) == 0  # type: ignore[arg-type]
    assert "File changes are picked up" in out.getvalue() or "No file change" in out.getvalue()
    assert outside.read_text(encoding="utf-8") == "the instructor's file\n"
    assert link.is_symlink(), "the learner's link is left alone"
    left = [p.name for p in tmp_path.iterdir() if p.name.startswith(".checkpoint-watch")]
    assert left == [], "the watch removes its own folder"


# --------------------------------------------------------------------------- the marker's fields


@pytest.mark.parametrize(
    ("value", "said"),
    [
        ('"../elsewhere"', "must be a plain word"),
        ('"pi-course"', "must be a plain Python identifier"),
        ('"/tmp"', "must be a plain word"),
        ('"pi_course/.."', "must be a plain word"),
        ('"class"', "must be a plain Python identifier"),
        ('"grader_tmp"', "the marker names package grader_tmp"),
    ],
)
def test_a_marker_package_outside_the_chapters_folder_is_refused(
    manifest: Manifest, workspace: Path, value: str, said: str
) -> None:
    _set_marker_field(workspace, "package", value)
    with pytest.raises(WorkspaceError, match=said):
        read_workspace(workspace, manifest)


def test_the_watch_pointed_at_another_folder_by_a_link_is_refused(
    manifest: Manifest, workspace: Path, tmp_path: Path
) -> None:
    elsewhere = tmp_path / "grader-temp"
    elsewhere.mkdir()
    package = workspace / manifest.package
    package.rename(tmp_path / "moved")
    package.symlink_to(elsewhere, target_is_directory=True)
    run = cli("checkpoint", "11", "--watch", "--practice", str(workspace), "--timeout", "2")
    _refused(run, "must be a folder inside the workspace, not a link")


def test_a_huge_chapter_is_cut_in_the_refusal(manifest: Manifest, workspace: Path) -> None:
    _set_marker_field(workspace, "chapter", '"' + "1" * 60_000 + '"')
    run = cli("checkpoint", "11", "--practice", str(workspace), "--no-card")
    _refused(run, "chapter: must be a plain word")


def test_a_marker_nested_3000_deep_is_refused_quickly(manifest: Manifest, workspace: Path) -> None:
    marker = workspace / MARKER
    text = marker.read_text(encoding="utf-8").replace("[checksums]", "")
    marker.write_text("deep = " + "[" * 3000 + "]" * 3000 + "\n" + text, encoding="utf-8")
    run = cli("checkpoint", "11", "--practice", str(workspace), "--no-card")
    _refused(run, "nested too deeply")
    view = check("11.1", start=workspace)
    assert view.result is None and "nested too deeply" in str(view.problem), view.problem


def test_a_sparse_256_mib_marker_is_refused_without_reading_it(
    manifest: Manifest, workspace: Path
) -> None:
    with (workspace / MARKER).open("r+b") as marker:
        marker.truncate(256 * 1024 * 1024)
    probe = (
        "import sys\n"
        "from pathlib import Path\n"
        "from course.harness.manifest import load_manifest\n"
        "from course.sandboxed.marker import WorkspaceError, read_workspace\n"
        "try:\n"
        "    read_workspace(Path(sys.argv[1]), load_manifest('11'))\n"
        "except WorkspaceError as error:\n"
        "    print(error)\n"
        # VmHWM is this program's own peak: ru_maxrss would keep the peak of the forking
        # pytest worker, which exec does not reset
        "status = open('/proc/self/status').read().splitlines()\n"
        "print(next(int(l.split()[1]) for l in status if l.startswith('VmHWM')) // 1024)\n"
    )
    run = subprocess.run(
        [sys.executable, "-c", probe, str(workspace)], capture_output=True, text=True, check=False
    )
    said, peak_mb = run.stdout.splitlines()
    assert f"larger than {MARKER_BYTES // 1024} KiB" in said, run.stdout + run.stderr
    assert int(peak_mb) < 200, f"the reader peaked at {peak_mb} MB"
    _refused(cli("checkpoint", "11", "--practice", str(workspace), "--no-card"), "larger than")


def test_a_linked_marker_is_not_a_workspace(
    manifest: Manifest, workspace: Path, tmp_path: Path
) -> None:
    real = tmp_path / "real-marker.toml"
    (workspace / MARKER).rename(real)
    (workspace / MARKER).symlink_to(real)
    with pytest.raises(WorkspaceError, match="a symbolic link"):
        read_workspace(workspace, manifest)
    _refused(cli("checkpoint", "11", "--practice", str(workspace)), "a symbolic link")


def test_an_honest_marker_still_opens_at_every_door(manifest: Manifest, workspace: Path) -> None:
    opened = read_workspace(workspace, manifest)
    assert (opened.chapter, opened.package) == (manifest.chapter, manifest.package)
    run = cli("checkpoint", "11", "--practice", str(workspace), "--lab", "11.1", "--timeout", "2")
    assert run.returncode == 1 and "Lab 11.1" in run.stdout, run.stdout + run.stderr
    view = check("11.1", start=workspace / "notebooks", timeout=2)
    assert view.result is not None, view.problem
    assert lab_verdicts(view.result)["11.1"][0] == "pending"


def _link_the_package(manifest: Manifest, workspace: Path) -> None:
    elsewhere = workspace.parent / "grader-temp"
    elsewhere.mkdir()
    (workspace / manifest.package).rename(workspace.parent / "moved")
    (workspace / manifest.package).symlink_to(elsewhere, target_is_directory=True)


def _nest_the_marker(manifest: Manifest, workspace: Path) -> None:
    with (workspace / MARKER).open("a", encoding="utf-8") as marker:
        marker.write("[deep]\nvalue = " + "[" * 3000 + "]" * 3000 + "\n")


def _grow_the_marker(manifest: Manifest, workspace: Path) -> None:
    with (workspace / MARKER).open("r+b") as marker:
        marker.truncate(256 * 1024 * 1024)


@pytest.mark.parametrize(
    ("plant", "said"),
    [
        (_link_the_package, "must be a folder inside the workspace, not a link"),
        (_nest_the_marker, "nested too deeply"),
        (_grow_the_marker, f"larger than {MARKER_BYTES // 1024} KiB"),
    ],
)
def test_the_roster_refuses_what_the_doors_refuse(
    manifest: Manifest, workspace: Path, plant: Callable[[Manifest, Path], None], said: str
) -> None:
    plant(manifest, workspace)
    with pytest.raises(WorkspaceError, match=said):
        read_workspace(workspace, manifest)
    with pytest.raises(WorkspaceError, match=said):
        workspace_snapshot(manifest, kit_root(), Tree(workspace.parent, (workspace.name,)))


# --------------------------------------------------------------------------- the review


FORGE_REVIEW = """
import atexit as _atexit, json as _json, sys as _sys


def _forge_review():
    argv = _sys.argv
    if "--course-results" not in argv:
        return
    results = argv[argv.index("--course-results") + 1]
    names = [
        "test_review_shows_the_groups", "test_review_shows_the_budget",
        "test_review_shows_compact_1", "test_review_shows_the_resume",
        "test_review_returned_copies_are_isolated",
        "test_review_second_compaction_resumes_from_the_latest",
    ]
    with open(results, "a", encoding="utf-8") as out:
        for name in names:
            nodeid = "tests/chapter11/review_11.py::" + name
            end = {"event": "end", "nodeid": nodeid, "status": "passed", "message": "",
                   "duration": 0.0, "shown": ["FORGED ANSWER"]}
            out.write(_json.dumps(end) + "\\n")


_atexit.register(_forge_review)
"""


def test_the_review_counts_the_reports_the_grade_counts(
    manifest: Manifest, workspace: Path
) -> None:
    append(workspace, MODULE, FORGE_REVIEW)
    result = run_review(
        manifest, kit_root(), workspace, Limits(test_seconds=5), GradingOptions(sandbox="auto")
    )
    shown = render_review(result)
    assert result.held == 0 and not result.ok, shown
    assert "FORGED ANSWER" not in shown, shown
    # written at exit, after the session's end: the reader counts none of them (and flags them
    # when it is still reading then: the grade's flags are the review's)
    flags = [line for line in shown.splitlines() if line.startswith("flag: ")]
    assert all("after the test run ended" in line or "never started" in line for line in flags)
    assert "Review: 0/2 demonstrations hold" in shown, shown


# --------------------------------------------------------------------------- practice and check()


def test_practice_and_check_read_the_marker_by_the_same_rules(
    manifest: Manifest, workspace: Path
) -> None:
    _set_marker_field(workspace, "edition", '"' + "z" * 5000 + '"')
    said = "edition: must be a plain word"
    _refused(cli("checkpoint", "11", "--practice", str(workspace), "--no-card"), said)
    view = check("11.1", start=workspace)
    assert view.result is None and said in str(view.problem), view.problem
    assert len(str(view.problem)) < 1000
