"""The checkpoint's printed text: commands stay whole so they can be copied as printed."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from course.harness.kit import chapter_fingerprints
from course.harness.manifest import Manifest
from course.harness.report import (
    counts,
    counts_width,
    expected_evidence,
    lab_line,
    render_card,
    render_lab,
    render_summary,
)
from course.harness.results import CheckpointResult, LabResult, ProbeSummary, TestOutcome
from course.sandboxed.columns import columns
from course.sandboxed.status import Status


def _pending(manifest: Manifest) -> CheckpointResult:
    labs = tuple(
        LabResult(
            lab,
            tuple(
                TestOutcome(f"t{lab.id}-{n}", f"test_{n}", lab.id, Status.PENDING, "not yet")
                for n in range(lab.tests)
            ),
            lab.tests,
        )
        for lab in manifest.labs
    )
    return CheckpointResult(manifest.chapter, "practice", labs)


def test_the_rerun_command_is_one_line_however_long_the_path(manifest: Manifest) -> None:
    practice = "/tmp/" + "/".join(["a-rather-long-directory-name"] * 6) + "/learner"
    text = render_summary(manifest, _pending(manifest), practice)
    first = manifest.labs[0]
    expected = f"checkpoint {manifest.chapter} --practice {practice} --lab {first.id}"
    assert any(line.endswith(expected) for line in text.splitlines())


def test_a_path_with_spaces_is_quoted_for_the_shell(manifest: Manifest) -> None:
    text = render_summary(manifest, _pending(manifest), "/tmp/my labs/learner")
    assert "--practice '/tmp/my labs/learner' --lab" in text


def test_the_card_prints_commands_unwrapped(manifest: Manifest, kit: Path) -> None:
    card = render_card(manifest, chapter_fingerprints(manifest, kit))
    lines = card.splitlines()
    for command in (manifest.card.locate, manifest.card.practice, manifest.card.focused_run):
        assert any(line.endswith(command) for line in lines), command


def _lab(manifest: Manifest, lab_id: str, passing: int, probes: ProbeSummary | None) -> LabResult:
    """Lab ``lab_id`` with its first ``passing`` tests passed and the rest failed."""
    lab = manifest.lab(lab_id)
    tests = tuple(
        TestOutcome(
            f"t::test_{n}",
            f"test_{n}",
            lab_id,
            Status.PASSED if n < passing else Status.FAILED,
            "" if n < passing else "assert 1 == 2",
        )
        for n in range(lab.tests)
    )
    return LabResult(lab, tests, lab.tests, probes)


def test_a_lab_line_shows_its_tests_and_its_cases_apart(manifest: Manifest) -> None:
    disagree = ProbeSummary(53, 51, Status.FAILED, ("build_context: kept[0]: expected 1, got 2",))
    lab = _lab(manifest, "11.3", 3, disagree)
    line = lab_line(lab, title_width=0)
    assert line == "Lab 11.3  budget projection  3/3 tests · 51/53 cases  failed"
    assert (lab.passed, lab.earned, lab.status) == (3, 0, Status.FAILED)


def test_a_lab_without_probes_shows_its_tests_alone(manifest: Manifest) -> None:
    line = lab_line(_lab(manifest, "11.3", 2, None), title_width=0)
    assert line == "Lab 11.3  budget projection  2/3 tests  failed"


def test_counted_words_agree_with_their_number() -> None:
    assert counts(1, 1, 1, 1) == "1/1 test · 1/1 case"
    assert counts(0, 2, 0, 0) == "0/2 tests · 0/0 cases"
    assert counts(2, 2) == "2/2 tests"


def test_the_evidence_line_counts_passing_tests_whatever_the_probes_say(
    manifest: Manifest,
) -> None:
    """A lab whose cases disagree still shows its passing tests, and earns nothing."""
    agree = ProbeSummary(10, 10, Status.PASSED)
    disagree = ProbeSummary(10, 9, Status.FAILED, ("x: expected 1, got 2",))
    labs = tuple(
        _lab(manifest, lab.id, lab.tests, disagree if lab.id == "11.3" else agree)
        for lab in manifest.required_labs
    )
    result = CheckpointResult(manifest.chapter, "practice", labs)
    assert result.evidence == expected_evidence(manifest)
    assert (result.passed, result.earned) == (result.total, result.total - 3)
    assert not result.ok
    summary = render_summary(manifest, result, "/tmp/learner")
    assert "Next: Lab 11.3 budget projection (3/3 tests · 9/10 cases, failed)" in summary


def test_aligned_lab_lines_line_up_their_statuses(manifest: Manifest) -> None:
    agree = ProbeSummary(120, 120, Status.PASSED)
    labs = [_lab(manifest, "11.1", 3, agree), _lab(manifest, "11.4", 1, None)]
    width = counts_width(labs)
    lines = [render_lab(lab, counts_width=width).splitlines()[0] for lab in labs]
    ends = {columns(line) - columns(str(lab.status)) for line, lab in zip(lines, labs, strict=True)}
    assert len(ends) == 1, lines


def test_a_failed_test_shows_what_it_printed_under_its_failure(manifest: Manifest) -> None:
    lab = _pending(manifest).labs[1]
    failed = TestOutcome(
        "t::one",
        "test_one",
        lab.lab.id,
        Status.FAILED,
        "AssertionError: boom",
        output=("first \\x1b[2J", "second"),
        output_more=3,
    )
    pending = replace(lab.tests[1], output=("pending output",))
    text = render_lab(replace(lab, tests=(failed, pending, *lab.tests[2:])))
    lines = text.splitlines()
    at = lines.index("    failed   test_one: AssertionError: boom")
    assert lines[at + 1 : at + 5] == [
        "             test_one printed:",
        "               first \\x1b[2J",
        "               second",
        "               … 3 more lines",
    ], text
    assert "pending output" not in text, "a test that is only not written yet shows no output"
