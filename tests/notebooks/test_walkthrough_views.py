"""The notebooks' views of the chapter, run against the reference and against unfinished code."""

from __future__ import annotations

from dataclasses import replace
from types import SimpleNamespace

import pytest

from course.display import experiments
from course.display import walk_compaction as compaction
from course.display import walkthrough as walk
from course.display.notebook import Implementation
from course.display.views import attempt, describe_error


def test_groups_and_costs(reference: Implementation) -> None:
    assert walk.groups_view(reference).text.splitlines() == [
        "group 1 = [u1, a1]  7 tokens",
        "group 2 = [u2, a2]  7 tokens",
        "group 3 = [u3, calls, r-test, r-read, a3]  15 tokens",
    ]


def test_only_the_two_group_boundaries_are_allowed_cuts(reference: Implementation) -> None:
    rows = walk.cut_points_view(reference).text.splitlines()[2:]
    allowed = [row.split()[0] for row in rows if "✓ allowed" in row]
    assert allowed == ["a1/u2", "a2/u3"]
    assert len(rows) == 8, "one row per pair of neighbouring entries"
    calls_cut = next(row for row in rows if row.startswith("calls/r-test"))
    assert "r-test, r-read would lose calls" in calls_cut


def test_the_sweep_has_four_outcomes(reference: Implementation) -> None:
    rows = [row.split() for row in walk.sweep_view(reference).text.splitlines()[2:]]
    assert [(row[0], row[-1]) for row in rows] == [
        ("0–23", "single_group_overflow"),
        ("24–30", "trimmed"),
        ("31–37", "trimmed"),
        ("38–44", "within_budget"),
    ]


def test_the_selection_walk_matches_build_context(reference: Implementation) -> None:
    lines = walk.selection_view(reference, 31).text.splitlines()
    assert lines[1:4] == [
        "group 3 (u3 … a3): 0 + 15 = 15 ≤ 22 → keep",
        "group 2 (u2, a2): 15 + 7 = 22 ≤ 22 → keep",
        "group 1 (u1, a1): 22 + 7 = 29 > 22 → stop",
    ]
    assert lines[4] == "build_context kept: u2, a2, u3, calls, r-test, r-read, a3"


def test_the_path_diagram_points_from_the_compaction_to_first_kept() -> None:
    ids = ["u1", "a1", "u2", "a2", "u3", "calls", "r-test", "r-read", "a3", "compact-1"]
    chain, arrows, under = compaction.path_diagram(ids, "compact-1", "u2").splitlines()
    assert arrows.index("↑") == chain.index("u2") == under.index("└")
    assert arrows.index("│") == under.index("┘")
    assert chain.index("compact-1") < arrows.index("│") < chain.index("compact-1") + 9
    assert "firstKeptEntryId = u2" in under


def test_broken_inputs_are_rejected_and_a_moved_result_is_not(
    reference: Implementation,
) -> None:
    text = compaction.broken_inputs_view(reference).text
    assert "✓ compact-1 with summary.files instead of changedFiles: rejected:" in text
    assert "summary.files" in text
    assert "✓ r-test answering unknown-1: rejected: InteractionError:" in text
    assert "group 3 = [u3, r-test, calls, r-read, a3]" in text


def test_resume_renders_one_summary_and_compact_2_replaces_it(
    reference: Implementation,
) -> None:
    resumed = compaction.resume_view(reference).text
    assert "kept: u2, a2, u3, calls, r-test, r-read, a3, u4, a4" in resumed
    assert reference.fixtures.COMPACT_1_SUMMARY["goal"] in resumed
    second = compaction.compact_2_view(reference).text
    assert "kept: u3, calls, r-test, r-read, a3, u4, a4" in second
    assert "✗" not in second and "not so" not in second


def test_every_check_in_the_compaction_views_holds(reference: Implementation) -> None:
    for view in (
        compaction.parse_view(reference),
        compaction.stores_view(reference),
        compaction.create_view(reference),
        compaction.repeat_view(reference),
    ):
        assert "✓" in view.text and "✗" not in view.text and "not so" not in view.text


def test_slice_minus_three_loses_u3_and_calls_and_fails_lab_11_3(
    reference: Implementation,
) -> None:
    text = experiments.slice_experiment_view(reference).text
    assert "kept:  r-test, r-read, a3" in text
    assert "lost from the newest group: u3, calls" in text
    assert "Lab 11.3 against the patched copy: 0/3 passed" in text
    assert "Lab 11.3 against the reference: 3/3 passed" in text


def test_the_patch_refuses_source_it_does_not_recognise() -> None:
    with pytest.raises(experiments.ExperimentError):
        experiments.sliced_source("def build_context(): pass\n")


def test_the_budget_report_agrees_with_build_context(reference: Implementation) -> None:
    text = experiments.budget_report_cases_view(reference).text
    assert text.count("✓ agrees with build_context's selection") == 4
    assert "overflow" in text


def not_yet(*args: object, **kwargs: object) -> object:
    raise NotImplementedError("Lab 11.2 interaction groups not implemented yet (x): hint")


def test_unfinished_labs_show_their_message(reference: Implementation) -> None:
    stub = SimpleNamespace(
        group_interactions=not_yet,
        build_context=not_yet,
        create_compaction_entry=not_yet,
        budget_report=not_yet,
    )
    starter = replace(reference, context=stub)  # type: ignore[arg-type]
    for view in (
        walk.groups_view(starter),
        walk.cut_points_view(starter),
        walk.projection_view(starter),
        compaction.create_view(starter),
        compaction.resume_view(starter),
        experiments.budget_report_cases_view(starter),
    ):
        assert view.text.startswith("… pending: Lab 11.2 interaction groups not implemented yet")
    del stub.budget_report
    assert experiments.budget_report_cases_view(starter).text.startswith("· optional exercise")


def test_errors_become_one_line_messages() -> None:
    assert describe_error(ValueError("x: bad")) == "ValueError: x: bad"
    assert describe_error(NotImplementedError()) == "pending: not implemented yet"
    failed = attempt(lambda: 1 / 0)
    assert not failed.ok and failed.problem == "ZeroDivisionError: division by zero"
