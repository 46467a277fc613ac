"""The chapter's optional exercise: where each group's budget goes (never counted in the 14).

``budget_report(groups, estimate_tokens=…, available=…)`` reads the groups and reports each
one's ids, token cost and status (kept / trimmed / overflow) without redefining the selection.
"""

from __future__ import annotations

from typing import Any

import pytest
from test_11_context_compaction import THIRD_GROUP, chapter_path, same

from course.locale import gettext as _


def report(impl: Any, path: list[Any], available: float) -> list[tuple[list[str], float, str]]:
    groups = impl.groups.group_interactions(path)
    rows = impl.context.budget_report(
        groups, estimate_tokens=impl.fixtures.chapter_estimator, available=available
    )
    return [(row.entry_ids, row.tokens, row.status) for row in rows]


@pytest.mark.lab("11.opt")
def test_optional_budget_report_follows_the_chapters_three_groups(impl: Any) -> None:
    path = chapter_path(impl)
    same(
        _("budget_report with available=22: (entry_ids, tokens, status) of each group"),
        report(impl, path, 22),
        [(["u1", "a1"], 7, "trimmed"), (["u2", "a2"], 7, "kept"), (THIRD_GROUP, 15, "kept")],
    )
    same(
        _("budget_report with available=29: each group's status"),
        [row[2] for row in report(impl, path, 29)],
        ["kept"] * 3,
    )


@pytest.mark.lab("11.opt")
def test_optional_budget_report_marks_the_newest_tool_group_overflow(impl: Any) -> None:
    rows = report(impl, chapter_path(impl), 10)
    case = _("budget_report with available=10 (the newest group costs 15)")
    same(
        _("{case}: the newest group's row").format(case=case),
        rows[-1:],
        [(THIRD_GROUP, 15, "overflow")],
    )
    same(
        _("{case}: the older groups' status").format(case=case),
        [row[2] for row in rows[:-1]],
        ["trimmed"] * 2,
    )


@pytest.mark.lab("11.opt")
def test_optional_budget_report_of_one_group_without_tools(impl: Any) -> None:
    path = chapter_path(impl)[:2]
    same(
        _("budget_report of [u1, a1] with available=7"),
        report(impl, path, 7),
        [(["u1", "a1"], 7, "kept")],
    )
    same(
        _("budget_report of [u1, a1] with available=6"),
        report(impl, path, 6),
        [(["u1", "a1"], 7, "overflow")],
    )
    before = [impl.session.entry_to_json(entry) for entry in path]
    report(impl, path, 0)
    same(
        _("the path after budget_report (read-only)"),
        [impl.session.entry_to_json(entry) for entry in path],
        before,
    )
