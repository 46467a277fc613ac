"""The explorer's pure model and renderers, on the chapter's numbers and on crafted projections."""

from __future__ import annotations

import pytest

from course.display.budget_view import (
    Budget,
    BudgetModel,
    GroupBar,
    Projection,
    bars_html,
    deduction_rows,
    fmt,
    is_suffix,
    kept_ids_text,
    kept_range,
    stop_note,
    summary_text,
    with_system_cost,
)
from course.display.notebook import Implementation


def model(reference: Implementation) -> BudgetModel:
    return BudgetModel(reference.chapter_path, reference.estimator(), reference.context)


def test_the_model_labels_groups_by_what_build_context_kept(reference: Implementation) -> None:
    chapter = model(reference)
    assert chapter.costs == [7, 7, 15]
    projection = chapter.project(Budget(max_tokens=31))
    assert [(bar.number, bar.tokens, bar.state) for bar in projection.groups] == [
        (1, 7, "trimmed"),
        (2, 7, "kept"),
        (3, 15, "kept"),
    ]
    assert (projection.available, projection.messages, projection.total) == (22, 22, 31)
    assert projection.kept_ids == ("u2", "a2", "u3", "calls", "r-test", "r-read", "a3")


def test_the_deduction_rows_never_go_below_zero(reference: Implementation) -> None:
    rows = deduction_rows(model(reference).project(Budget(max_tokens=5)))
    assert rows[:4] == [
        ("max_tokens", "5", "5"),
        ("system prompt", "3", "2"),
        ("reserved_output", "4", "0"),
        ("safety_margin", "2", "0"),
    ]
    assert rows[4] == ("kept groups (1)", "15", "-15"), "an overflow shows the shortfall"


def test_the_system_slider_replaces_only_the_system_estimate() -> None:
    estimate = with_system_cost(lambda message: 5, 42)
    assert estimate({"role": "system", "content": "sys"}) == 42
    assert estimate({"role": "user", "content": "sys"}) == 5


def bars(*states: str) -> Projection:
    groups = tuple(
        GroupBar(i, (f"u{i}",), float(i), state)  # type: ignore[arg-type]
        for i, state in enumerate(states, start=1)
    )
    kept = tuple(g.entry_ids[0] for g in groups if g.state in ("kept", "overflow"))
    return Projection(Budget(), groups, kept, "trimmed", available=10, messages=5, total=14)


def test_a_gap_in_the_kept_groups_is_called_out() -> None:
    assert is_suffix(bars("trimmed", "kept", "kept"))
    assert is_suffix(bars("summarized", "trimmed", "kept"))
    gapped = bars("kept", "trimmed", "kept")
    assert not is_suffix(gapped)
    assert kept_range(gapped) == "2 groups between 1 and 3 of 3"
    assert "not a suffix" in summary_text(gapped)
    assert stop_note(gapped) == ""


def test_long_id_lists_are_abbreviated() -> None:
    ids = [f"e{i}" for i in range(30)]
    assert kept_ids_text(ids[:3]) == "e0, e1, e2"
    assert kept_ids_text(ids) == "e0 … e29 (30 entries)"
    assert kept_ids_text([]) == "(none)"


@pytest.mark.parametrize(
    ("value", "shown"), [(22, "22"), (22.0, "22"), (2.5, "2.5"), (1234, "1,234"), (None, "—")]
)
def test_token_counts_print_without_noise(value: float | None, shown: str) -> None:
    assert fmt(value) == shown


def test_many_groups_are_drawn_as_one_strip() -> None:
    few = bars(*(["trimmed"] * 3 + ["kept"] * 3))
    many = bars(*(["trimmed"] * 40 + ["kept"] * 10))
    assert bars_html(few).count("<tr") == 6
    assert "display:flex" in bars_html(many) and "<tr" not in bars_html(many)
