"""Reading learner folders without trusting them, finding learners, and writing the gradebook."""

from __future__ import annotations

import csv
import errno
import io
import json
import os
from dataclasses import replace
from pathlib import Path

import pytest

from course.grading.intake import safefs
from course.grading.intake.folder import survey
from course.grading.intake.safefs import Tree, UnsafePath, atomic_write
from course.grading.records.gradebook import (
    clean,
    gradebook_csv,
    graded_row,
    is_gradebook_name,
    ungraded_row,
    write_gradebook,
)
from course.grading.roster import grade_entry
from course.grading.verdict.engine import GradingOptions
from course.grading.verdict.probes import AUDIT_MARK
from course.harness.manifest import Manifest
from course.harness.report import render_summary
from course.harness.results import CheckpointResult, LabResult, ProbeSummary, TestOutcome
from course.harness.runner import Limits
from course.harness.workspace import create_workspace
from course.sandboxed.marker import MARKER, WorkspaceError
from course.sandboxed.status import Status


def test_a_link_anywhere_on_the_way_is_refused_not_followed(tmp_path: Path) -> None:
    (tmp_path / "bob" / "pkg").mkdir(parents=True)
    (tmp_path / "bob" / "pkg" / "code.py").write_text("bob's work\n")
    (tmp_path / "eve").mkdir()
    (tmp_path / "eve" / "pkg").symlink_to("../bob/pkg")
    (tmp_path / "eve" / "own.py").symlink_to("../bob/pkg/code.py")
    eve = Tree(tmp_path, ("eve",))
    with pytest.raises(UnsafePath, match=r"^eve/pkg: a symbolic link"):
        eve.read("pkg/code.py")
    with pytest.raises(UnsafePath, match=r"^eve/own.py: a symbolic link"):
        eve.read("own.py")
    assert eve.kind("pkg") == "symlink" and Tree(tmp_path, ("bob",)).kind("pkg") == "directory"
    assert Tree(tmp_path, ("bob",)).read("pkg/code.py") == b"bob's work\n"


def test_only_regular_files_of_a_bounded_size_are_read(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "pipe")
    (tmp_path / "big").write_bytes(b"x" * 2048)
    tree = Tree(tmp_path)
    with pytest.raises(UnsafePath, match="pipe: not a regular file"):
        tree.read("pipe")
    with pytest.raises(UnsafePath, match="big: larger than 1 KiB"):
        tree.read("big", limit=1024)
    with pytest.raises(UnsafePath, match="gone: missing"):
        tree.read("gone")
    with pytest.raises(UnsafePath, match="not a relative path"):
        tree.read("../outside")


def test_a_file_that_cannot_be_read_is_named_with_the_reason(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "locked.py").write_text("secret\n")
    real = os.open

    def refuse(path: str, flags: int, *args: object, **kwargs: object) -> int:
        if path == "locked.py":
            raise PermissionError(errno.EACCES, "Permission denied")
        return real(path, flags, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(safefs.os, "open", refuse)
    with pytest.raises(UnsafePath, match=r"locked.py: cannot be read \(Permission denied\)"):
        Tree(tmp_path).read("locked.py")


def test_an_unreadable_workspace_is_an_error_row_not_the_end_of_the_run(
    manifest: Manifest, kit: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    roster = tmp_path / "roster"
    create_workspace(manifest, kit, roster / "alice")
    real = os.open

    def refuse(path: str, flags: int, *args: object, **kwargs: object) -> int:
        if path == MARKER:
            raise PermissionError(errno.EACCES, "Permission denied")
        return real(path, flags, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(safefs.os, "open", refuse)
    [entry] = list(survey(roster).submissions)
    row = grade_entry(
        manifest, kit, roster, entry, manifest.required_labs, Limits(), GradingOptions(), ()
    )
    assert (row.status, row.passed) == ("error", 0)
    assert f"alice/{MARKER}: cannot be read (Permission denied)" in row.note


def test_an_output_file_replaces_a_link_and_never_a_folder(tmp_path: Path) -> None:
    victim = tmp_path / "victim"
    victim.write_text("precious\n")
    (tmp_path / "out.csv").symlink_to(victim)
    atomic_write(tmp_path / "out.csv", b"grades\n")
    assert victim.read_text() == "precious\n"
    assert not (tmp_path / "out.csv").is_symlink()
    assert (tmp_path / "out.csv").read_text() == "grades\n"
    (tmp_path / "folder.json").mkdir()
    with pytest.raises(IsADirectoryError):
        atomic_write(tmp_path / "folder.json", b"{}")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["folder.json", "out.csv", "victim"]


def test_the_gradebook_moves_aside_when_a_folder_holds_its_name(tmp_path: Path) -> None:
    (tmp_path / "gradebook.json").mkdir()
    (tmp_path / "gradebook-2.csv").mkdir()
    paths = write_gradebook(tmp_path, "learner\n", "{}\n")
    assert [p.name for p in paths] == ["gradebook-3.csv", "gradebook-3.json"]
    assert json.loads(paths[1].read_text()) == {}
    assert is_gradebook_name("gradebook-12.json") and not is_gradebook_name("gradebook.txt")


def test_only_folders_with_a_marker_are_learners_and_links_are_listed(
    manifest: Manifest, kit: Path, tmp_path: Path
) -> None:
    roster = tmp_path / "roster"
    create_workspace(manifest, kit, roster / "alice")
    create_workspace(manifest, kit, roster / "gus" / "term-1" / "practice-11")
    (roster / "mallory").symlink_to("alice")
    (roster / "zed").symlink_to("/")
    (roster / "gus" / "elsewhere").symlink_to(roster / "alice")
    (roster / "notes").mkdir()
    (roster / ".git").mkdir()
    (roster / "gradebook.csv").symlink_to(tmp_path / "victim")
    (roster / "readme.txt").write_text("hello\n")
    found = {entry.learner: entry for entry in list(survey(roster).submissions)}
    assert sorted(found) == ["alice", "gus/term-1/practice-11", "mallory", "notes", "zed"]
    assert {name: e.kind for name, e in found.items()} == {
        "alice": "workspace",
        "gus/term-1/practice-11": "workspace",
        "mallory": "symlink",
        "notes": "skipped",
        "zed": "symlink",
    }
    assert "to alice" in found["mallory"].why
    with pytest.raises(WorkspaceError, match="is itself a workspace"):
        list(survey(roster / "alice").submissions)


def test_learner_text_never_reaches_a_terminal_or_a_file_with_control_characters(
    manifest: Manifest,
) -> None:
    name = "eve\x1b]0;owned\x07\nada,passed"
    row = ungraded_row(name, "/roster/x", manifest.required_labs, "error", "why\x1b[2J")
    assert row.learner == "eve\\x1b]0;owned\\x07\\x0aada,passed"
    assert row.note == "why\\x1b[2J"
    text = gradebook_csv(["11.1"], [row])
    assert "\x1b" not in text and text.count("\n") == 2
    assert clean("Ünïcode ok") == "Ünïcode ok"


LAB_IDS = ["11.1", "11.2", "11.3", "11.4", "11.5"]


def _claimed(manifest: Manifest, probes: ProbeSummary) -> CheckpointResult:
    """Every required lab's tests reported passed, its probe cases as given."""
    labs = tuple(
        LabResult(
            lab,
            tuple(
                TestOutcome(f"t::{lab.id}-{n}", f"test_{n}", lab.id, Status.PASSED)
                for n in range(lab.tests)
            ),
            lab.tests,
            probes,
        )
        for lab in manifest.required_labs
    )
    return CheckpointResult(manifest.chapter, "practice", labs)


def test_a_test_report_the_probes_deny_earns_nothing(manifest: Manifest) -> None:
    """The row shows what the report claims and what the probes found, apart; it scores 0."""
    denied = ProbeSummary(10, 0, Status.PENDING, ("parse_summary: not implemented",))
    row = graded_row("eve", "eve", _claimed(manifest, denied), ())
    assert (row.status, row.score, row.passed, row.total) == ("pending", 0, 14, 14)
    assert [(lab.score, lab.agreed, lab.cases) for lab in row.labs] == [(0, 0, 10)] * 5
    # the gradebook accuses nothing of itself: a lab whose functions are the starter's stubs is
    # flagged by the engine, which reads the code (forgery.py); the reason says the rest
    assert row.flags == () and row.notes == ()
    [line] = csv.DictReader(io.StringIO(gradebook_csv(LAB_IDS, [row])))
    assert (line["status"], line["score"], line["max_score"]) == ("pending", "0", "100")
    assert line["passed"] == "14"
    assert (line["lab 11.3"], line["cases 11.3"], line["status 11.3"]) == ("3/3", "0/10", "pending")
    data = row.to_json()
    assert (data["score"], data["passed"], data["agreed"], data["cases"]) == (0, 14, 0, 50)
    assert data["max_score"] == 100


def test_a_lab_earns_its_points_when_its_tests_pass_and_its_cases_agree(
    manifest: Manifest,
) -> None:
    agree = ProbeSummary(10, 10, Status.PASSED)
    row = graded_row("ada", "ada", _claimed(manifest, agree), ())
    assert (row.status, row.score, row.max_score, row.passed) == ("passed", 100, 100, 14)
    assert [lab.score for lab in row.labs] == [lab.points for lab in manifest.required_labs]


def test_one_scale_in_the_row_its_csv_its_json_and_the_terminal(manifest: Manifest) -> None:
    """Lab 11.4 fails one test of two: 12 of 14 tests, and 80 of 100 points everywhere."""
    result = _claimed(manifest, ProbeSummary(10, 10, Status.PASSED))
    lab = result.labs[3]
    failing = replace(lab.tests[0], status=Status.FAILED, message="AssertionError")
    result = replace(
        result,
        labs=(*result.labs[:3], replace(lab, tests=(failing, *lab.tests[1:])), result.labs[4]),
    )
    assert (result.passed, result.total, result.score, result.max_score) == (13, 14, 80, 100)
    row = graded_row("ada", "ada", result, ())
    assert (row.score, row.max_score) == (result.score, result.max_score) == (80, 100)
    [line] = csv.DictReader(io.StringIO(gradebook_csv(LAB_IDS, [row])))
    assert (line["score"], line["max_score"], line["passed"]) == ("80", "100", "13")
    data = row.to_json()
    assert (data["score"], data["max_score"]) == (80, 100)
    assert [lab["score"] for lab in data["labs"]] == [20, 20, 20, 0, 20]
    report = result.to_json()
    assert (report["score"], report["max_score"]) == (80, 100)
    assert CheckpointResult.from_json(report, manifest) == result
    summary = render_summary(manifest, result).splitlines()
    at = summary.index("focused tests  3/3 → 3/3 → 3/3 → 1/2 → 3/3 (13/14)")
    assert summary[at + 1] == "grade          80/100"


def test_a_row_with_a_problem_is_an_error_whatever_its_labs_say(manifest: Manifest) -> None:
    agree = ProbeSummary(10, 10, Status.PASSED)
    result = replace(_claimed(manifest, agree), problems=("the tests could not run",))
    row = graded_row("ada", "ada", result, ())
    assert row.status == Status.ERROR


def test_a_skipped_folder_is_a_skipped_row(manifest: Manifest) -> None:
    row = ungraded_row("notes", "notes", manifest.required_labs, Status.SKIPPED, "no marker")
    assert row.status == Status.SKIPPED and row.status.label == "skipped"
    assert {lab.status for lab in row.labs} == {Status.SKIPPED} and row.score == 0
    assert Status.read("skipped") == Status.ERROR, "a report never says skipped"


def test_focused_tests_weaker_than_the_probes_are_a_note_not_a_flag(manifest: Manifest) -> None:
    """Issue 43: an honest learner whose 2/2 tests pass while 1 of 40 cases disagrees was
    flagged as if the report were forged; now it reads as what it is, naming the cases."""
    one = ProbeSummary(
        40,
        39,
        Status.FAILED,
        ("create_compaction_entry: a valid record (11.4#025): got 1\n  input",),
        ("11.4#025",),
    )
    row = graded_row("ada", "ada", _claimed(manifest, one), ())
    assert row.flags == ()
    assert "Lab 11.4: focused tests pass; 1 of 40 cases disagrees: 11.4#025" in row.notes
    audit = "select_groups: 2 interactions (11.3#004, one of the assignment's own cases): failed"
    only_audit = ProbeSummary(40, 40, Status.FAILED, (audit,), (f"11.3#004{AUDIT_MARK}",))
    row = graded_row("ada", "ada", _claimed(manifest, only_audit), ())
    said = "Lab 11.3: focused tests pass and every shipped case agrees; cases drawn for the "
    assert said + "assignment disagree: 11.3#004" in row.notes and row.flags == ()
