"""check() in a notebook: the checkpoint's own verdict, rendered without timings or paths."""

from __future__ import annotations

import shutil
from dataclasses import replace
from pathlib import Path

from course.display.notebook import check
from course.display.verdict import VerdictView
from course.harness.manifest import load_manifest
from course.harness.report import render_lab
from course.harness.results import CheckpointResult, LabResult, ProbeSummary, TestOutcome
from course.sandboxed.status import Status
from course.sandboxed.verdicts import NOT_RUN, readable

LAB_2 = [
    "test_lab_11_2_groups_the_chapter_path_into_three_interactions",
    "test_lab_11_2_pairs_results_by_call_id_not_position",
    "test_lab_11_2_rejects_broken_tool_facts",
]
MANIFEST = load_manifest("11")


def verdict(
    statuses: list[Status], messages: list[str] | None = None, probes: ProbeSummary | None = None
) -> CheckpointResult:
    """A chapter 11 result holding Lab 11.2's three tests as given."""
    messages = messages or [""] * len(statuses)
    tests = tuple(
        TestOutcome(f"t::{name}", name, "11.2", status, message, duration=1.2345)
        for name, status, message in zip(LAB_2, statuses, messages, strict=True)
    )
    lab = LabResult(MANIFEST.lab("11.2"), tests, 3, probes)
    return CheckpointResult("11", "the reference (course) in /somewhere/on/disk", (lab,))


def test_a_lab_verdict_lists_each_test_with_its_status() -> None:
    result = verdict(
        [Status.PASSED, Status.PENDING, Status.FAILED],
        [
            "",
            "Lab 11.2 interaction groups not implemented yet (x): y",
            "AssertionError: groups must hold copies\nassert 1 == 2",
        ],
    )
    view = VerdictView(result, "11.2")
    text = view.text
    assert text.splitlines()[0] == "✗ Lab 11.2  interaction groups  1/3 tests  failed"
    assert f"✓ passed  {LAB_2[0]}" in text
    assert f"… pending {LAB_2[1]} — Lab 11.2 interaction groups not implemented yet" in text
    assert f"✗ failed  {LAB_2[2]} — AssertionError: groups must hold copies" in text
    assert "1.2345" not in text and "1.2345" not in view.html, "no durations"
    assert "/somewhere" not in text and "/somewhere" not in view.html, "no paths"
    assert "\n            assert 1 == 2" in text, "a message's next lines, indented under it"


def test_the_counts_shown_are_the_results_own() -> None:
    """A renderer never recounts: three passing tests and a disagreeing case show as such, and
    the lab fails; the ✓ lines agree with the headline's counts."""
    disagree = ProbeSummary(10, 9, Status.FAILED, ("parse_summary: goal 'x': expected ValueError",))
    view = VerdictView(verdict([Status.PASSED] * 3, probes=disagree), "11.2")
    lines = view.text.splitlines()
    assert lines[0] == "✗ Lab 11.2  interaction groups  3/3 tests · 9/10 cases  failed"
    assert [line.split()[:2] for line in lines[1:4]] == [["✓", "passed"]] * 3
    assert "probe    parse_summary: goal 'x': expected ValueError" in view.text
    assert "probe" in view.html and "3/3 tests · 9/10 cases" in VerdictView(view.result).html


def test_a_lab_reads_the_same_in_a_notebook_and_on_a_terminal() -> None:
    """One renderer of a lab: a chapter check shows each lab as ``render_lab`` does."""
    disagree = ProbeSummary(10, 9, Status.FAILED, ("parse_summary: goal 'x': expected ValueError",))
    result = verdict([Status.PASSED, Status.FAILED, Status.PASSED], ["", "boom", ""], disagree)
    [lab] = result.labs
    terminal = render_lab(lab, title_width=len(lab.lab.title))
    shown = [line.removeprefix("  ") for line in VerdictView(result).text.splitlines()[1:]]
    assert shown == terminal.splitlines()


def test_a_test_that_never_ran_says_so_in_the_readers_words(zh: None) -> None:
    """The ``not run`` marker is shown in the edition's words, as the terminal shows it."""
    result = verdict([Status.ERROR] * 3, [f"{NOT_RUN}the package failed at import"] * 3)
    text = VerdictView(result, "11.2").text
    assert readable(f"{NOT_RUN}x").removesuffix("x") in text
    assert NOT_RUN not in text


def test_identical_pending_messages_are_shown_once() -> None:
    message = "Lab 11.2 interaction groups not implemented yet (group_interactions): hint"
    text = VerdictView(verdict([Status.PENDING] * 3, [message] * 3), "11.2").text
    assert text.count("not implemented yet") == 1
    assert text.splitlines()[0] == "… Lab 11.2  interaction groups  0/3 tests  pending"


def test_a_problem_is_a_message() -> None:
    view = VerdictView(None, "11.2", "chapter 11 has no lab 11.9")
    assert "no result — chapter 11 has no lab 11.9" in view.text


def test_a_chapter_verdict_summarises_labs_and_lists_only_broken_tests() -> None:
    result = verdict(
        [Status.PASSED, Status.PENDING, Status.ERROR],
        ["", "Lab 11.2 … not implemented yet", "RuntimeError: crashed"],
    )
    view = VerdictView(result)
    text = view.text
    assert text.splitlines()[0] == "✗ Chapter 11: 1/3 tests  error"
    assert text.splitlines()[1] == "  Lab 11.2  interaction groups  1/3 tests  error"
    assert LAB_2[0] not in text and LAB_2[1] not in text
    assert f"error    {LAB_2[2]}: RuntimeError: crashed" in text
    assert "Lab 11.2" in view.html


def test_an_unknown_lab_is_a_message_not_an_exception() -> None:
    view = check("11.9", start=Path(__file__).parent)
    assert view.result is None and "no lab 11.9 (labs: 11.1" in view.text


def test_the_real_check_grades_the_reference() -> None:
    view = check("11.2", start=Path(__file__).parent)
    assert not view.problem and view.result is not None
    lab = view.result.lab("11.2")
    assert lab is not None and [(t.name, t.status) for t in lab.tests] == [
        (n, "passed") for n in LAB_2
    ]
    cases = lab.cases
    assert cases > 0 and lab.agreed == cases
    expected = f"✓ Lab 11.2  interaction groups  3/3 tests · {cases}/{cases} cases  passed"
    assert view.text.splitlines()[0] == expected


def test_the_real_check_reports_a_fresh_workspace_as_pending(fresh_workspace: Path) -> None:
    view = check("11.3", start=fresh_workspace / "notebooks")
    assert view.result is not None
    lab = view.result.lab("11.3")
    assert lab is not None and [t.status for t in lab.tests] == ["pending"] * 3
    assert "Lab 11.3 budget projection not implemented yet" in view.text
    assert str(fresh_workspace) not in view.text


def test_a_failed_test_shows_what_the_code_printed_under_its_message() -> None:
    result = verdict([Status.PASSED, Status.PENDING, Status.FAILED], ["", "not yet", "boom"])
    lab = result.labs[0]
    printed = ("looking at <b>3</b> groups", "\\x1b[2J")
    failed = replace(lab.tests[2], output=printed, output_more=4)
    pending = replace(lab.tests[1], output=("pending output",))
    result = replace(result, labs=(replace(lab, tests=(lab.tests[0], pending, failed)),))
    view = VerdictView(result, "11.2")
    lines = view.text.splitlines()
    at = lines.index(f"  ✗ failed  {LAB_2[2]} — boom")
    assert lines[at + 1 : at + 5] == [
        f"            {LAB_2[2]} printed:",
        "              looking at <b>3</b> groups",
        "              \\x1b[2J",
        "              … 4 more lines",
    ], view.text
    assert "pending output" not in view.text, "only a broken test's output is shown"
    assert "looking at &lt;b&gt;3&lt;/b&gt; groups" in view.html and "<b>3</b>" not in view.html


def test_the_real_check_shows_what_a_failing_test_printed(
    solved_workspace: Path, tmp_path: Path
) -> None:
    workspace = tmp_path / "printing"
    shutil.copytree(solved_workspace, workspace)
    groups = workspace / "pi_course" / "groups.py"
    text = groups.read_text(encoding="utf-8")
    head = "def split_interactions("
    assert text.count(head) == 1
    sabotage = "def split_interactions(*args, **kwargs):\n    print('seen', len(args[0]))\n"
    sabotage += "    raise ValueError('no groups today')\n\n\ndef _was_split_interactions("
    groups.write_text(text.replace(head, sabotage), encoding="utf-8")
    view = check("11.2", start=workspace / "notebooks")
    assert view.result is not None
    lab = view.result.lab("11.2")
    assert lab is not None
    broken = [t for t in lab.tests if t.status.broken]
    assert broken and all(t.output and t.output[0].startswith("seen ") for t in broken), lab.tests
    assert f"{broken[0].name} printed:" in view.text and "  seen " in view.text, view.text
