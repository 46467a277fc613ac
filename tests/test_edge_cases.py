"""Named edge cases of grouping and projection that production agents have got wrong."""

from __future__ import annotations

from typing import Any

import pytest

from course.compaction import CompactionError, create_compaction_entry
from course.context import BudgetError, build_context
from course.fixtures import COMPACT_1_SUMMARY, chapter_estimator, chapter_path
from course.groups import InteractionError, group_interactions
from course.session import SessionEntry, SessionEntryError, parse_entries


def user(text: str) -> dict[str, Any]:
    return {"role": "user", "content": text}


def assistant(text: str, *calls: str) -> dict[str, Any]:
    return {
        "role": "assistant",
        "content": [{"type": "text", "text": text}]
        + [{"type": "toolCall", "id": c, "name": "run", "arguments": {}} for c in calls],
    }


def result(call_id: str) -> dict[str, Any]:
    return {
        "role": "toolResult",
        "toolCallId": call_id,
        "toolName": "run",
        "content": [{"type": "text", "text": "ok"}],
        "isError": False,
    }


def path_of(*messages: dict[str, Any]) -> list[SessionEntry]:
    entries = []
    for index, message in enumerate(messages):
        entries.append(
            {
                "type": "message",
                "id": f"e{index}",
                "parentId": f"e{index - 1}" if index else None,
                "timestamp": index,
                "message": message,
            }
        )
    return parse_entries(entries)


def ones(message: dict[str, Any]) -> int:
    return 1


def project(path: list[SessionEntry], max_tokens: float, **options: Any) -> Any:
    settings: dict[str, Any] = {
        "system_prompt": "",
        "reserved_output": 0,
        "safety_margin": 0,
        "estimate_tokens": ones,
    }
    return build_context(path, max_tokens=max_tokens, **(settings | options))


def test_result_whose_call_is_in_an_earlier_group_is_rejected() -> None:
    path = path_of(user("q1"), assistant("a", "c1"), result("c1"), user("q2"), result("c1"))
    with pytest.raises(InteractionError, match=r"e4.*c1.*e3"):
        group_interactions(path)


def test_parallel_calls_with_results_in_any_order_form_one_group() -> None:
    path = path_of(
        user("q"),
        assistant("a", "c1", "c2", "c3"),
        result("c3"),
        result("c1"),
        result("c2"),
        assistant("done"),
    )
    assert [g.entry_ids for g in group_interactions(path)] == [[f"e{i}" for i in range(6)]]


def test_result_before_its_call_inside_the_group_is_legal() -> None:
    path = path_of(user("q"), result("c1"), assistant("a", "c1"))
    assert [g.entry_ids for g in group_interactions(path)] == [["e0", "e1", "e2"]]


def test_call_without_result_is_rejected() -> None:
    path = path_of(user("q"), assistant("a", "c1", "c2"), result("c1"))
    with pytest.raises(InteractionError, match=r"e1: tool call c2 has no result"):
        group_interactions(path)


def test_duplicate_result_is_rejected() -> None:
    path = path_of(user("q"), assistant("a", "c1"), result("c1"), result("c1"))
    with pytest.raises(InteractionError, match=r"e3: second result for tool call c1"):
        group_interactions(path)


def test_call_id_declared_twice_in_one_group_is_rejected() -> None:
    path = path_of(
        user("q"), assistant("a", "c1"), result("c1"), assistant("b", "c1"), result("c1")
    )
    with pytest.raises(InteractionError, match=r"e3: tool call c1 is declared twice"):
        group_interactions(path)


def test_same_call_id_in_two_groups_is_two_separate_pairs() -> None:
    path = path_of(
        user("q1"),
        assistant("a", "c1"),
        result("c1"),
        user("q2"),
        assistant("b", "c1"),
        result("c1"),
    )
    assert len(group_interactions(path)) == 2


def test_empty_call_id_is_rejected_at_the_parse_boundary() -> None:
    with pytest.raises(SessionEntryError, match=r"e1\.message\.content\[1\]\.id"):
        path_of(user("q"), assistant("a", ""))
    with pytest.raises(SessionEntryError, match=r"e1\.message\.toolCallId"):
        path_of(user("q"), result(""))


def test_result_after_an_interrupting_user_message_is_rejected() -> None:
    path = path_of(user("q"), assistant("a", "c1"), user("stop"), result("c1"))
    with pytest.raises(InteractionError, match=r"e1: tool call c1 has no result"):
        group_interactions(path)


def test_history_starting_with_an_assistant_message_is_rejected() -> None:
    with pytest.raises(InteractionError, match=r"e0: assistant message before any user"):
        group_interactions(path_of(assistant("hello"), user("q")))


def test_system_message_inside_the_history_is_rejected() -> None:
    with pytest.raises(InteractionError, match=r"e1: system message"):
        group_interactions(path_of(user("q"), {"role": "system", "content": "be brief"}))


def test_system_prompt_alone_over_budget_leaves_zero_and_keeps_the_newest_group() -> None:
    path = path_of(user("q1"), assistant("a1"), user("q2"), assistant("a2"))
    outcome = project(
        path, 5, system_prompt="long", estimate_tokens=lambda m: 9 if m["role"] == "system" else 1
    )
    assert outcome.tokens.available_for_messages == 0
    assert outcome.kept_entry_ids == ["e2", "e3"]
    assert outcome.reason == "single_group_overflow"
    assert outcome.tokens.total == 11


def test_budget_zero_keeps_only_the_newest_group() -> None:
    path = path_of(user("q1"), assistant("a1"), user("q2"))
    outcome = project(path, 0)
    assert (outcome.kept_entry_ids, outcome.reason) == (["e2"], "single_group_overflow")


def test_zero_cost_messages_fit_a_zero_budget() -> None:
    path = path_of(user("q1"), assistant("a1"), user("q2"))
    outcome = project(path, 0, estimate_tokens=lambda m: 0)
    assert (outcome.kept_entry_ids, outcome.reason) == (["e0", "e1", "e2"], "within_budget")


def test_exact_fit_keeps_everything_and_one_token_short_trims() -> None:
    path = path_of(user("q1"), assistant("a1"), user("q2"), assistant("a2"))
    exact = project(path, 5)  # the system prompt costs 1 as well
    assert (exact.kept_entry_ids, exact.reason, exact.tokens.total) == (
        ["e0", "e1", "e2", "e3"],
        "within_budget",
        5,
    )
    short = project(path, 4)
    assert (short.kept_entry_ids, short.reason) == (["e2", "e3"], "trimmed")


def test_empty_path_projects_to_no_messages() -> None:
    outcome = project([], 10)
    assert (outcome.messages, outcome.kept_entry_ids, outcome.reason) == ([], [], "within_budget")


def test_fractional_budgets_and_estimates_are_accepted() -> None:
    path = path_of(user("q1"), assistant("a1"))
    outcome = project(path, 1.5, estimate_tokens=lambda m: 0.5)
    assert outcome.tokens.messages == 1.0 and outcome.reason == "within_budget"


@pytest.mark.parametrize("answer", [float("nan"), float("inf"), -1, True, None, "2"])
def test_bad_estimates_name_the_message(answer: Any) -> None:
    path = path_of(user("q1"))
    with pytest.raises(BudgetError, match=r"estimate_tokens\((system prompt|e0)\)"):
        project(path, 10, estimate_tokens=lambda m: answer)


@pytest.mark.parametrize("option", ["max_tokens", "reserved_output", "safety_margin"])
@pytest.mark.parametrize("value", [float("nan"), -1, False, "4"])
def test_bad_budget_numbers_name_the_option(option: str, value: Any) -> None:
    options = {"max_tokens": 10, "reserved_output": 0, "safety_margin": 0, option: value}
    with pytest.raises(BudgetError, match=option):
        build_context(path_of(user("q")), system_prompt="", estimate_tokens=ones, **options)


def compact(
    path: list[SessionEntry], first_kept: str, entry_id: str = "c", goal: str | None = None
) -> SessionEntry:
    summary = COMPACT_1_SUMMARY if goal is None else COMPACT_1_SUMMARY | {"goal": goal}
    return create_compaction_entry(
        path,
        id=entry_id,
        timestamp=1,
        summary=summary,
        first_kept_entry_id=first_kept,
        tokens_before=0,
    )


def resume(path: list[SessionEntry], max_tokens: float = 100) -> Any:
    return build_context(
        path,
        max_tokens=max_tokens,
        system_prompt="sys",
        reserved_output=0,
        safety_margin=0,
        estimate_tokens=chapter_estimator,
    )


def test_compaction_whose_first_kept_id_is_missing_from_the_path_is_rejected() -> None:
    path = chapter_path()
    with pytest.raises(CompactionError, match=r"c\.firstKeptEntryId: u2 is not on the path"):
        resume([*path[4:], compact(path, "u2")])


def test_resume_with_nothing_after_the_compaction_keeps_the_first_kept_suffix() -> None:
    path = chapter_path()
    outcome = resume([*path, compact(path, "u3")])
    assert outcome.kept_entry_ids == ["u3", "calls", "r-test", "r-read", "a3"]
    assert outcome.compaction_id == "c"


def test_summary_cost_beyond_the_budget_still_keeps_the_newest_group() -> None:
    path = chapter_path()
    outcome = resume([*path, compact(path, "u2")], max_tokens=12)
    assert outcome.reason == "single_group_overflow"
    assert outcome.kept_entry_ids == ["u3", "calls", "r-test", "r-read", "a3"]
    assert outcome.messages[0]["role"] == "user" and len(outcome.messages) == 6


def test_two_compactions_render_only_the_newer_summary() -> None:
    path = chapter_path()
    first = compact(path, "u2", entry_id="c1", goal="first goal")
    second = compact([*path, first], "u3", entry_id="c2", goal="second goal")
    outcome = resume([*path, first, second])
    texts = [m["content"] for m in outcome.messages if isinstance(m["content"], str)]
    assert sum("second goal" in t for t in texts) == 1
    assert not any("first goal" in t for t in texts)
    assert outcome.compaction_id == "c2"


def test_a_compaction_cannot_keep_from_a_message_that_is_not_a_user_message() -> None:
    path = chapter_path()
    forged = parse_entries(
        [
            {
                "type": "compaction",
                "id": "c",
                "parentId": "a3",
                "timestamp": 1,
                "summary": COMPACT_1_SUMMARY,
                "firstKeptEntryId": "calls",
                "tokensBefore": 0,
            }
        ]
    )
    with pytest.raises(CompactionError, match=r"calls is not a user message"):
        resume([*path, *forged])


def test_a_non_additive_estimator_is_summed_per_message() -> None:
    calls: list[str] = []

    def counting(message: dict[str, Any]) -> int:
        calls.append(message["role"])
        return 2 if message["role"] == "user" else 1

    path = path_of(user("q1"), assistant("a1"), user("q2"), assistant("a2"))
    outcome = project(path, 3, estimate_tokens=counting)
    assert outcome.kept_entry_ids == ["e2", "e3"] and outcome.tokens.messages == 3
    assert outcome.reason == "single_group_overflow", "the system prompt costs 1, leaving 2"
    assert calls == ["system", "user", "assistant"], "groups behind the stop are not estimated"
