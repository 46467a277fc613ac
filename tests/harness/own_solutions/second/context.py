"""Lab 11.3 (and the optional report), second independent solution."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from course.context import (
    BudgetError,
    BuildContextResult,
    ContextTokens,
    Estimator,
    GroupBudget,
    Selection,
    check_amount,
    estimate,
    open_context,
)
from course.entries import MessageEntry, SessionEntry, check_unique_ids, parse_message_entry
from course.groups import InteractionGroup, split_interactions


def select_groups(
    groups: Sequence[Sequence[MessageEntry]], available: float, estimate_tokens: Estimator
) -> Selection:
    def cost(entries: list[MessageEntry]) -> float:
        return sum(estimate(estimate_tokens, e.message, e.id) for e in entries)

    if not groups:
        return Selection([], 0, "within_budget", 0)
    newest = [parse_message_entry(e) for e in groups[-1]]
    total = cost(newest)
    if total > available:
        return Selection(newest, total, "single_group_overflow", 1)
    keep = [newest]
    for group in reversed(groups[:-1]):
        copies = [parse_message_entry(e) for e in group]
        extra = cost(copies)
        if total + extra > available:
            break
        keep.insert(0, copies)
        total += extra
    flat = [entry for group in keep for entry in group]
    reason = "within_budget" if len(keep) == len(groups) else "trimmed"
    return Selection(flat, total, reason, len(keep))  # type: ignore[arg-type]


def build_context(
    path: Sequence[SessionEntry],
    *,
    max_tokens: float,
    system_prompt: str,
    reserved_output: float,
    safety_margin: float,
    estimate_tokens: Estimator,
) -> BuildContextResult:
    numbers = {
        name: check_amount(value, name)
        for name, value in (
            ("max_tokens", max_tokens),
            ("reserved_output", reserved_output),
            ("safety_margin", safety_margin),
        )
    }
    if not isinstance(system_prompt, str):
        raise BudgetError(f"system_prompt: expected a string, got {system_prompt!r}")
    check_unique_ids(path)
    system_message: Any = {"role": "system", "content": system_prompt}
    system = estimate(estimate_tokens, system_message, "system prompt")
    fixed = system + numbers["reserved_output"] + numbers["safety_margin"]
    available = max(0, numbers["max_tokens"] - fixed)
    opening = open_context(path, estimate_tokens)
    groups = split_interactions(opening.entries)
    chosen = select_groups(groups, max(0, available - opening.tokens), estimate_tokens)
    messages = check_amount(chosen.tokens + opening.tokens, "messages")
    tokens = ContextTokens(
        max_tokens=numbers["max_tokens"],
        system=system,
        messages=messages,
        reserved_output=numbers["reserved_output"],
        safety_margin=numbers["safety_margin"],
        available_for_messages=available,
        total=check_amount(fixed + messages, "total"),
    )
    return BuildContextResult(
        system_prompt=system_prompt,
        messages=[*opening.messages, *(entry.message for entry in chosen.entries)],
        kept_entry_ids=[entry.id for entry in chosen.entries],
        reason=chosen.reason,
        tokens=tokens,
        compaction_id=opening.compaction_id,
    )


def budget_report(
    groups: Sequence[InteractionGroup], *, estimate_tokens: Estimator, available: float
) -> list[GroupBudget]:
    chosen = select_groups(
        [g.entries for g in groups], check_amount(available, "available"), estimate_tokens
    )
    kept_from = len(groups) - chosen.groups
    overflow = chosen.reason == "single_group_overflow"
    return [
        GroupBudget(
            group.entry_ids,
            sum(estimate(estimate_tokens, e.message, e.id) for e in group.entries),
            ("overflow" if i == len(groups) - 1 else "trimmed")  # type: ignore[arg-type]
            if overflow
            else ("kept" if i >= kept_from else "trimmed"),
        )
        for i, group in enumerate(groups)
    ]
