"""The checkpoint's printed text: commands stay whole so they can be copied as printed."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from course.harness.kit import chapter_fingerprints
from course.harness.manifest import Manifest
from course.harness.report import render_card, render_lab, render_summary
from course.harness.results import CheckpointResult, LabResult, TestOutcome
from course.harness.status import Status


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
