"""The grade line a learner reads right (issue 55 item 4, review H5), in both editions.

A lab scores only when its focused tests and its probe cases all pass: the line labels the
evidence and the grade, and where ``14/14`` stands beside ``80/100`` it says why. A run of some
labs shows their points, never a total that reads as the chapter's grade. Each door prints the
one ``gradeline.grade_lines``: the terminal's summary, a saved report's labs (a lab's job on
GitHub Actions), the notebook's card, a feedback file and Gradescope's output.
"""

from __future__ import annotations

from dataclasses import replace

import pytest

from course.display.verdict import VerdictView
from course.grading.platforms.gradescope import results
from course.grading.records.feedback import feedback_text
from course.grading.records.gradebook import graded_row
from course.harness.gradeline import covers_chapter, grade_lines
from course.harness.learning import render_learning
from course.harness.manifest import Manifest
from course.harness.report import render_note, render_summary
from course.harness.results import CheckpointResult, Credit, LabResult, ProbeSummary, TestOutcome
from course.sandboxed.columns import columns
from course.sandboxed.status import Status


def _lab(manifest: Manifest, lab_id: str, agreed: int = 71, cases: int = 71) -> LabResult:
    lab = manifest.lab(lab_id)
    tests = tuple(
        TestOutcome(f"t::{lab_id}-{n}", f"test_{n}", lab_id, Status.PASSED)
        for n in range(lab.tests)
    )
    status = Status.PASSED if agreed == cases else Status.FAILED
    return LabResult(lab, tests, lab.tests, ProbeSummary(cases, agreed, status))


def _h5(manifest: Manifest) -> CheckpointResult:
    """H5's run: every focused test passes, 6 of Lab 11.2's 71 cases disagree."""
    labs = [_lab(manifest, lab.id) for lab in manifest.required_labs]
    labs[1] = _lab(manifest, "11.2", agreed=65)
    return CheckpointResult(manifest.chapter, "practice", tuple(labs))


def test_the_chapter_s_grade_line_says_why_its_tests_and_its_grade_differ(
    manifest: Manifest,
) -> None:
    result = _h5(manifest)
    assert grade_lines(result.labs, whole=True, width=100) == [
        "focused tests  3/3 → 3/3 → 3/3 → 2/2 → 3/3 (14/14)",
        "grade          80/100: Lab 11.2's focused tests "
        "pass, but 6 of its 71 probe cases disagree with the",
        "               reference, so Lab 11.2 earns nothing",
    ]  # fmt: skip
    summary = render_summary(manifest, result)
    assert "focused tests  3/3 → 3/3 → 3/3 → 2/2 → 3/3 (14/14)\ngrade          80/100: " in summary


def test_the_chapter_s_grade_line_in_chinese(zh: None, manifest: Manifest) -> None:
    lines = grade_lines(_h5(manifest).labs, whole=True, width=100)
    assert lines == [  # H5, as the review asks
        "聚焦测试  3/3 → 3/3 → 3/3 → 2/2 → 3/3（14/14）",
        "成绩      80/100：Lab 11.2 "
        "的聚焦测试通过，但 71 个探针用例中有 6 个与参考实现不一致，这个 Lab 不",
        "          得分",
    ]  # fmt: skip
    assert all(columns(line) <= 100 for line in lines)


def test_a_grade_that_agrees_with_the_tests_needs_no_why(manifest: Manifest) -> None:
    labs = [_lab(manifest, lab.id) for lab in manifest.required_labs]
    assert grade_lines(labs, whole=True)[1] == "grade          100/100"
    failing = replace(labs[0], tests=tuple(replace(t, status=Status.FAILED) for t in labs[0].tests))
    assert grade_lines([failing, *labs[1:]], whole=True)[1] == "grade          80/100"


def test_a_single_lab_s_run_shows_that_lab_s_points_never_a_total(manifest: Manifest) -> None:
    one = [_lab(manifest, "11.2", agreed=65)]
    assert not covers_chapter(manifest, one)
    assert grade_lines(one, whole=False, width=100) == [
        "focused tests  3/3",
        "points         Lab 11.2 0/20: Lab 11.2's focused"
        " tests pass, but 6 of its 71 probe cases disagree",
        "               with the reference, so Lab 11.2 earns nothing",
    ]  # fmt: skip
    assert grade_lines([_lab(manifest, "11.1")], whole=False)[1] == "points         Lab 11.1 20/20"
    summary = render_summary(manifest, CheckpointResult(manifest.chapter, "practice", tuple(one)))
    assert "grade" not in summary and "0/20" in summary


def test_a_single_lab_s_points_in_chinese(zh: None, manifest: Manifest) -> None:
    [tests, points] = grade_lines([_lab(manifest, "11.1")], whole=False)
    assert (tests, points) == ("聚焦测试  3/3", "得分      Lab 11.1 20/20")


def test_a_lab_that_keeps_its_points_through_another_s_code_says_so(manifest: Manifest) -> None:
    labs = [_lab(manifest, lab.id) for lab in manifest.required_labs]
    failed = tuple(replace(t, status=Status.FAILED) for t in labs[2].tests)
    labs[2] = replace(labs[2], tests=failed, credit=Credit(("11.2",)))
    said = " ".join(" ".join(grade_lines(labs, whole=True)).split())
    assert "grade 100/100: what fails in Lab 11.3 passes with the reference's Lab 11.2" in said


@pytest.mark.parametrize("edition", ["en", "zh"])
def test_every_door_shows_the_one_grade_line(
    edition: str, manifest: Manifest, request: pytest.FixtureRequest
) -> None:
    if edition == "zh":
        request.getfixturevalue("zh")
    result = _h5(manifest)
    lines = grade_lines(result.labs, whole=True, width=100)
    view = VerdictView(result)
    assert view.text.endswith("\n".join(f"  {line}" for line in lines)), view.text
    assert lines[1].split()[1] in view.html
    row = replace(graded_row("ada", "ada", result, ()), shown=result)
    assert "\n".join(lines) in feedback_text(manifest, row)
    assert results(manifest, row, "visible")["output"].startswith("\n".join(lines))
    one = VerdictView(result, lab="11.2").text  # check("11.2"): that lab's points
    assert "0/20" in one and "80/100" not in one, one


def test_learning_md_says_a_lab_scores_only_when_its_tests_and_cases_pass(
    manifest: Manifest,
) -> None:
    en = " ".join(render_learning(manifest, "0" * 64, ["notebooks"], edition="en").split())
    assert (
        "Each lab is worth 20 points and scores them only when its focused tests and its probe "
        "cases all pass: a lab at 3/3 whose probe cases do not all agree with the reference is "
        "still failed"
    ) in en
    zh = render_learning(manifest, "0" * 64, ["notebooks"], edition="zh")
    assert "每个 Lab 20 分，只有聚焦测试和探针用例全部通过才得分；" in zh
    assert "聚焦测试 3/3 而探针用例未全部与参考实现一致时，这个 Lab 仍记为“失败”" in zh


def test_a_credit_note_wraps_under_its_text_in_both_editions(
    manifest: Manifest, request: pytest.FixtureRequest
) -> None:
    note = (
        "Lab 11.3 passes with the reference's Lab 11.2 and keeps its points; with your Lab 11.2 "
        "it fails, so Lab 11.2 loses its own. First to fail: 11.3#039."
    )
    lines = render_note(note, width=100)
    assert (
        len(lines) == 2
        and lines[1] == " " * 6 + "fails, so Lab 11.2 loses its own. First to fail: 11.3#039."
    )
    request.getfixturevalue("zh")
    said = (
        "Lab 11.3 换用参考实现的 Lab 11.2 "
        "时通过，照常得分；与你的 Lab 11.2 一起运行时不通过，因此由 "
        "Lab 11.2 失去自己的分数。最先失败的是 11.3#039。"
    )  # fmt: skip
    lines = render_note(said, width=100)
    assert lines[0].startswith("注意：Lab 11.3 换用") and lines[1].startswith(" " * 6)
    assert all(columns(line) <= 100 for line in lines), lines


@pytest.mark.parametrize("edition", ["en", "zh"])
def test_a_case_that_agrees_alone_names_state_kept_between_calls_on_its_first_line(
    edition: str, request: pytest.FixtureRequest
) -> None:
    """Issue 55: a state bug is named where it is first seen, not only by ``--replay``."""
    from test_class_summary import PROBES

    from course.grading.verdict import probes as probing

    if edition == "zh":
        request.getfixturevalue("zh")
    answers = {str(case["id"]): {"value": 2} for case in PROBES.cases}
    [suspect] = probing.alone_suspects(PROBES, answers)  # the one the verdict names first
    assert suspect == "11.3#001"
    alone = {suspect: {"value": 1}}
    [summary] = probing.compare(PROBES, answers, alone=alone).values()
    first, second = (failure.splitlines()[0] for failure in summary.failures[:2])
    said = {
        "en": "(11.3#001): look for state kept between calls: asked alone, it agrees; after the "
        "cases asked before it, the result: expected 1, got 2",
        "zh": "（11.3#001）：请检查调用之间保留的状态：单独调用时与参考实现一致；在它之前的用例运行"
        "之后，返回值：应为 1，实际为 2",
    }[edition]
    assert first.endswith(said), first
    assert "state" not in second and "状态" not in second, "a case that was not asked alone"
    [plain] = probing.compare(PROBES, answers, alone={suspect: {"value": 2}}).values()
    assert "state" not in plain.failures[0] and "状态" not in plain.failures[0]
