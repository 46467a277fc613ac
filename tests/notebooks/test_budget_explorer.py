"""The budget explorer's widgets, driven without a kernel: set controls, read what is shown."""

from __future__ import annotations

import dataclasses
import re
from types import SimpleNamespace
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from course.context import build_context
from course.curricula.ch11.explorer import BudgetExplorer
from course.fixtures import CHAPTER_BUDGET, chapter_estimator, chapter_path
from course.groups import group_interactions
from course.labs import LabNotImplemented

SECOND_AND_THIRD = "u2, a2, u3, calls, r-test, r-read, a3"
THIRD = "u3, calls, r-test, r-read, a3"
ALL_NINE = "u1, a1, " + SECOND_AND_THIRD


def table_rows(html: str) -> list[list[str]]:
    """The cells of each body row of the deduction table."""
    body = html.split("<tbody>")[1].split("</tbody>")[0]
    return [re.findall(r"<td[^>]*>(.*?)</td>", row) for row in body.split("</tr>") if row]


def chapter_explorer(build: Any = build_context) -> BudgetExplorer:
    path = chapter_path()
    return BudgetExplorer(
        path,
        build,
        estimate_tokens=chapter_estimator,
        budget=CHAPTER_BUDGET,
        groups=group_interactions(path),
    )


def test_the_chapter_budget_keeps_the_second_and_third_group() -> None:
    explorer = chapter_explorer()
    assert explorer.kept.value == SECOND_AND_THIRD
    assert explorer.reason.value == "trimmed"
    assert table_rows(explorer.table.value) == [
        ["max_tokens", "31"],
        ["system prompt", "3"],
        ["reserved_output", "4"],
        ["safety_margin", "2"],
        ["left for messages", "22"],
    ]
    assert "group 1 left out" in explorer.bars.value and "group 3 kept" in explorer.bars.value


def test_nineteen_tokens_send_the_newest_group_whole_and_38_keep_everything() -> None:
    explorer = chapter_explorer()
    explorer.max_tokens.value = 19
    assert (explorer.kept.value, explorer.reason.value) == (THIRD, "single_group_overflow")
    explorer.max_tokens.value = 38
    assert (explorer.kept.value, explorer.reason.value) == (ALL_NINE, "within_budget")


def test_every_control_reaches_build_context_and_nothing_else_decides() -> None:
    calls: list[dict[str, Any]] = []

    def recording(path: Any, **options: Any) -> Any:
        calls.append(options)
        return build_context(path, **options)

    explorer = chapter_explorer(recording)
    explorer.reserved_output.value = 11
    explorer.safety_margin.value = 0
    explorer.system_prompt.value = "a longer system prompt than the chapter's three letters"
    last = calls[-1]
    assert last["reserved_output"] == 11 and last["safety_margin"] == 0
    assert last["system_prompt"].startswith("a longer")
    assert last["estimate_tokens"] is chapter_estimator
    assert table_rows(explorer.table.value)[1] == ["system prompt", "2"]
    assert table_rows(explorer.table.value)[-1] == ["left for messages", "18"]  # 31 - 2 - 11 - 0


def test_the_explorer_shows_what_it_is_given_even_when_it_is_wrong() -> None:
    def last_three(path: Any, **options: Any) -> Any:
        right = build_context(path, **options)
        return dataclasses.replace(right, kept_entry_ids=right.kept_entry_ids[-3:])

    explorer = chapter_explorer(last_three)
    assert explorer.kept.value == "r-test, r-read, a3"
    assert "group 3 cut inside" in explorer.bars.value


def test_a_pending_lab_and_a_bug_are_notes_not_crashes() -> None:
    def pending(path: Any, **options: Any) -> Any:
        raise LabNotImplemented("11.3", "budget projection", "build_context", "deduct first")

    explorer = chapter_explorer(pending)
    assert explorer.kept.value == "—" and explorer.result is None
    assert "pending · Lab 11.3 budget projection" in explorer.note.value
    assert explorer.summary().startswith("… pending · Lab 11.3")

    def broken(path: Any, **options: Any) -> Any:
        raise IndexError("list index out of range")

    explorer = chapter_explorer(broken)
    assert "refused · IndexError: list index out of range" in explorer.note.value


def test_the_budget_keeps_its_type_and_the_sliders_start_at_the_chapters_numbers() -> None:
    explorer = chapter_explorer()
    assert explorer.current_budget() == CHAPTER_BUDGET
    assert [s.value for s in explorer.sliders] == [31, 4, 2]
    assert explorer.max_tokens.max >= 38, "the slider reaches a budget that keeps everything"


def test_many_groups_are_shown_bucketed() -> None:
    groups = [SimpleNamespace(entry_ids=[f"u{i}", f"a{i}"]) for i in range(400)]
    result = SimpleNamespace(kept_entry_ids=[i for g in groups[-100:] for i in g.entry_ids])
    from course.curricula.ch11.show import bars

    text = bars(groups, result.kept_entry_ids).text
    strip, note = text.splitlines()
    assert len(strip) <= 40 and strip.endswith("█") and strip.startswith("░")
    assert note == "400 groups, 10 per cell: 100 kept, 300 left out"


@settings(max_examples=25, deadline=None)
@given(max_tokens=st.integers(0, 60), reserved=st.integers(0, 20), margin=st.integers(0, 20))
def test_the_labels_always_show_the_functions_answer(
    max_tokens: int, reserved: int, margin: int
) -> None:
    explorer = chapter_explorer()
    explorer.max_tokens.value = max_tokens
    explorer.reserved_output.value = reserved
    explorer.safety_margin.value = margin
    expected = build_context(
        chapter_path(),
        **dataclasses.replace(
            CHAPTER_BUDGET, max_tokens=max_tokens, reserved_output=reserved, safety_margin=margin
        ).options(),
        estimate_tokens=chapter_estimator,
    )
    assert explorer.kept.value == ", ".join(expected.kept_entry_ids)
    assert explorer.reason.value == expected.reason
    assert explorer.result == expected
