"""A term's bookkeeping: reasons an instructor can act on, one key per row, a CSV Excel reads,
and messages of several lines kept readable."""

from __future__ import annotations

import csv
import io
import json
from dataclasses import replace
from pathlib import Path

from course.grading.intake.folder import survey
from course.grading.intake.loose import LabFiles
from course.grading.records.feedback import feedback_text, write_feedback
from course.grading.records.gradebook import (
    gradebook_csv,
    gradebook_json,
    graded_row,
    lab_reason,
    ungraded_row,
    weaker_tests,
    with_unique_learners,
    write_gradebook,
)
from course.grading.roster import row_line
from course.grading.verdict.probes import AUDIT_MARK
from course.harness.manifest import Manifest
from course.harness.results import CheckpointResult, LabResult, ProbeSummary, TestOutcome
from course.sandboxed.marker import MARKER
from course.sandboxed.status import Status


def test_an_empty_folder_and_a_folder_without_lab_files_say_which(
    manifest: Manifest, tmp_path: Path
) -> None:
    (tmp_path / "ada").mkdir()
    (tmp_path / "ben").mkdir()
    for name in ("report.pdf", "context.py"):
        (tmp_path / "ben" / name).write_text("mine\n")
    (tmp_path / "cy").mkdir()
    for number in range(7):
        (tmp_path / "cy" / f"f{number}.py").write_text("\n")
    found = {
        entry.learner: entry for entry in survey(tmp_path, None, LabFiles.of(manifest)).submissions
    }
    assert {learner: entry.why for learner, entry in found.items()} == {
        "ada": "empty submission",
        "ben": "",  # a lab file: graded in the kit's scaffold
        "cy": f"no lab files and no practice workspace (no {MARKER}): f0.py, f1.py, f2.py, "
        "f3.py, f4.py and 2 more",
    }
    assert [found[name].kind for name in ("ada", "ben", "cy")] == ["skipped", "files", "skipped"]


def test_rows_named_alike_get_one_key_each_the_graded_one_keeping_the_name(
    manifest: Manifest,
) -> None:
    labs = manifest.required_labs
    older = ungraded_row("ben", "r/ben", labs, Status.SKIPPED, "an older submission of ben")
    graded = ungraded_row("ben", "r/ben.zip", labs, Status.ERROR, "refused")
    taken = ungraded_row("ben#2", "r/ben#2", labs, Status.ERROR, "refused")
    rows = with_unique_learners([older, taken, graded, older])
    assert [(row.learner, row.workspace, row.status) for row in rows] == [
        ("ben", "r/ben.zip", "error"),
        ("ben#3", "r/ben", "skipped"),
        ("ben#4", "r/ben", "skipped"),
        ("ben#2", "r/ben#2", "error"),
    ]


def test_the_csv_opens_with_a_byte_order_mark_and_the_json_without(tmp_path: Path) -> None:
    csv_path, json_path = write_gradebook(tmp_path, "learner\n李雷\n", "{}\n")
    assert csv_path.read_bytes() == "\ufefflearner\n李雷\n".encode()
    assert json_path.read_bytes() == b"{}\n"


def test_a_message_of_several_lines_stays_readable(manifest: Manifest) -> None:
    message = "AssertionError: the budget\nassert 31 == 29\n  where 31 = build()\x1b[0m"
    labs = tuple(
        LabResult(
            lab,
            tuple(
                TestOutcome(
                    f"t::{lab.id}-{n}",
                    f"test_{n}",
                    lab.id,
                    Status.FAILED if lab.id == "11.3" and n == 0 else Status.PASSED,
                    message if lab.id == "11.3" and n == 0 else "",
                )
                for n in range(lab.tests)
            ),
            lab.tests,
            ProbeSummary(1, 1, Status.PASSED),
        )
        for lab in manifest.required_labs
    )
    row = graded_row("ada", "ada", CheckpointResult(manifest.chapter, "practice", labs), ())
    said = "test_0: AssertionError: the budget\nassert 31 == 29\n  where 31 = build()\\x1b[0m"
    assert row.note == said
    data = json.loads(gradebook_json("11", [row], {}))["learners"][0]
    assert data["note"] == said
    [failed] = [test for test in data["tests"] if test["status"] == "failed"]
    assert failed["message"] == said.removeprefix("test_0: ")
    [cells] = csv.DictReader(io.StringIO(gradebook_csv(["11.3"], [row])))
    assert cells["note"] == said
    line = row_line(row)
    assert "\n" not in line and "the budget | assert 31 == 29 | where 31" in line
    assert "\n" not in row_line(replace(row, notes=("two\nlines",)))


def test_feedback_shows_a_learner_their_labs_failing_cases_and_replays_only(
    manifest: Manifest,
) -> None:
    from test_class_summary import _result

    result = _result(manifest, {"11.3#001", "11.3#002", "11.3#003", "11.3#005"})
    row = graded_row("ada", "ada", result, ["copies: ada and ben share Lab 11.3"])
    row = replace(row, shown=result, notes=("also handed in ada.zip (older, not graded)",))
    text = feedback_text(manifest, row)
    # H5: the evidence and the grade labelled, and why 14/14 stands beside 80/100
    assert text.startswith(
        "Chapter 11 · ada\n"
        "focused tests  3/3 → 3/3 → 3/3 → 2/2 → 3/3 (14/14)\n"
        "grade          80/100: Lab 11.3's focused tests "
        "pass, but 4 of its 5 probe cases disagree with the\n"
        "               reference, so Lab 11.3 earns nothing\n"
    ), text
    assert "11.3#001" in text and "replay: checkpoint 11 --replay 11.3#001" in text
    assert "and 1 more probe case like these" in text
    assert "note: also handed in ada.zip" in text
    assert "copies" not in text and "ben" not in text
    absent = ungraded_row("cy", "", manifest.required_labs, Status.MISSING, "submitted nothing")
    assert "Not graded: submitted nothing" in feedback_text(manifest, absent)


def test_feedback_speaks_the_rosters_edition(manifest: Manifest, zh: None) -> None:
    from test_class_summary import _result

    result = _result(manifest, {"11.3#001"})
    row = replace(graded_row("ada", "ada", result, ()), shown=result)
    text = feedback_text(manifest, row)
    assert text.startswith(  # H5, in the review's words
        "第 11 章 · ada\n"
        "聚焦测试  3/3 → 3/3 → 3/3 → 2/2 → 3/3（14/14）\n"
        "成绩      80/100：Lab 11.3 的聚焦测试通过，但 "
        "5 个探针用例中有 1 个与参考实现不一致，这个 Lab 不得分\n"
    ), text
    assert "重新运行：checkpoint 11 --replay 11.3#001" in text
    assert "预算投影" in text and "budget projection" not in text, "the labs' titles too"


def test_feedback_files_are_one_per_learner_and_never_through_a_link(
    manifest: Manifest, tmp_path: Path
) -> None:
    labs = manifest.required_labs
    rows = [
        ungraded_row("gus/practice-11", "g", labs, Status.ERROR, "refused"),
        ungraded_row("gus_practice-11", "g", labs, Status.ERROR, "refused"),
        ungraded_row("ben#2", "b", labs, Status.SKIPPED, "an older submission of ben"),
    ]
    folder = write_feedback(tmp_path / "gradebook-feedback", manifest, rows)
    assert folder == tmp_path / "gradebook-feedback"
    assert sorted(p.name for p in folder.iterdir()) == [
        "gus_practice-11-2.txt",
        "gus_practice-11.txt",
    ]
    (tmp_path / "elsewhere").mkdir()
    (tmp_path / "gradebook-2-feedback").symlink_to(tmp_path / "elsewhere")
    assert write_feedback(tmp_path / "gradebook-2-feedback", manifest, rows) is None
    assert not any((tmp_path / "elsewhere").iterdir())


def test_the_rosters_reasons_and_closing_lines_speak_the_instructors_edition(
    tmp_path: Path, zh: None
) -> None:
    (tmp_path / "ada").mkdir()
    (tmp_path / "notes.txt").write_text("\n")
    (tmp_path / ".hidden").mkdir()
    found = survey(tmp_path)
    assert [entry.why for entry in found.submissions] == ["空提交"]
    closing = found.closing(1)
    assert closing[0] == "未列入成绩表（2 项）："
    assert closing[-1] == "提交目录：成绩表共 1 行；另有 2 项未收录（见上）"
    assert "隐藏项" in closing[1] and "不是提交的文件" in closing[2]


def test_feedback_of_a_run_with_instructor_tests_shows_the_kits_verdict_text_only(
    manifest: Manifest,
) -> None:
    labs = tuple(
        LabResult(
            lab,
            tuple(
                TestOutcome(f"t::{lab.id}-{n}", f"test_{n}", lab.id, Status.FAILED, "SECRET x")
                for n in range(lab.tests)
            ),
            lab.tests,
            ProbeSummary(1, 1, Status.PASSED),
        )
        for lab in manifest.required_labs
    )
    result = CheckpointResult(manifest.chapter, "practice", labs, problems=("SECRET y",))
    row = replace(graded_row("ada", "ada", result, ()), shown=result)
    assert "SECRET" in feedback_text(manifest, row)
    withheld = feedback_text(manifest, row, instructor=True)
    assert "SECRET" not in withheld and "Lab 11.3" in withheld


def _disagreeing(manifest: Manifest, failing: tuple[str, ...]) -> LabResult:
    """Lab 11.3 with its tests passing and ``failing`` cases (two shipped ones disagreeing)."""
    lab = manifest.lab("11.3")
    tests = tuple(
        TestOutcome(f"t::{n}", f"test_{n}", lab.id, Status.PASSED) for n in range(lab.tests)
    )
    described = tuple(f"build_context: a case ({case}): value differs" for case in failing[:3])
    probes = ProbeSummary(58, 56, Status.FAILED, described, failing)
    return LabResult(lab, tests, lab.tests, probes)


def test_a_note_names_the_cases_it_counts(manifest: Manifest) -> None:
    """Before: '2 of 58 cases disagree: 11.3#001, 11.3#004, 11.3#005', an audit case among
    the three ids (and its id with the assignment's seed in the Chinese edition's note). An
    audit case's id carries the assignment's mark (``@audit`` since issue 53, no seed)."""
    lab = _disagreeing(manifest, ("11.3#001", f"11.3#004{AUDIT_MARK}", "11.3#005"))
    assert weaker_tests(lab) == (
        "Lab 11.3: focused tests pass; 2 of 58 cases disagree: 11.3#001, 11.3#005; "
        "and of the cases drawn for the assignment: 11.3#004"
    )
    many = _disagreeing(manifest, tuple(f"11.3#{n:03d}" for n in range(12)))
    assert weaker_tests(replace(many, probes=replace(many.probes, agreed=46))).endswith(
        "12 of 58 cases disagree: 11.3#000, 11.3#001, 11.3#002, 11.3#003, 11.3#004, "
        "11.3#005, 11.3#006, 11.3#007, 11.3#008, 11.3#009 and 2 more"
    )


def test_every_note_speaks_the_learners_edition(manifest: Manifest, zh: None) -> None:
    """Before: the Chinese note ended in a colon with no ids (its parenthesis is full-width),
    and 'the test report says … but probes failed' stayed English in every zh file."""
    lab = _disagreeing(manifest, ("11.3#001", "11.3#005"))
    note = weaker_tests(lab)
    assert note.endswith("11.3#001、11.3#005"), note
    reason = lab_reason(lab)
    assert "test report says" not in reason and "probes" not in reason, reason
    assert reason.startswith("测试报告"), reason
