"""The chapter's optional exercise: where each group's budget goes (never counted in the 14).

``budget_report(groups, estimate_tokens=…, available=…)`` reads the groups and reports each
one's ids, token cost and status (kept / trimmed / overflow) without redefining the selection.
"""

from __future__ import annotations

from typing import Any

import pytest
from test_11_context_compaction import THIRD_GROUP, chapter_path


def report(impl: Any, path: list[Any], available: float) -> list[tuple[list[str], float, str]]:
    groups = impl.groups.group_interactions(path)
    rows = impl.context.budget_report(
        groups, estimate_tokens=impl.fixtures.chapter_estimator, available=available
    )
    return [(row.entry_ids, row.tokens, row.status) for row in rows]


@pytest.mark.lab("11.opt")
def test_optional_budget_report_follows_the_chapters_three_groups(impl: Any) -> None:
    path = chapter_path(impl)
    assert report(impl, path, 22) == [
        (["u1", "a1"], 7, "trimmed"),
        (["u2", "a2"], 7, "kept"),
        (THIRD_GROUP, 15, "kept"),
    ]
    assert [status for _, _, status in report(impl, path, 29)] == ["kept"] * 3


@pytest.mark.lab("11.opt")
def test_optional_budget_report_marks_the_newest_tool_group_overflow(impl: Any) -> None:
    rows = report(impl, chapter_path(impl), 10)
    assert rows[-1] == (THIRD_GROUP, 15, "overflow")
    assert [status for _, _, status in rows[:-1]] == ["trimmed", "trimmed"]


@pytest.mark.lab("11.opt")
def test_optional_budget_report_of_one_group_without_tools(impl: Any) -> None:
    path = chapter_path(impl)[:2]
    assert report(impl, path, 7) == [(["u1", "a1"], 7, "kept")]
    assert report(impl, path, 6) == [(["u1", "a1"], 7, "overflow")]
    before = [impl.session.entry_to_json(entry) for entry in path]
    report(impl, path, 0)
    assert [impl.session.entry_to_json(entry) for entry in path] == before, "read-only"
