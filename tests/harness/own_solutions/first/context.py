"""Lab 11.3 (and the optional report), first independent solution."""

from __future__ import annotations

from collections.abc import Sequence

from course.context import (
    BudgetError,
    BuildContextResult,
    ContextTokens,
    Estimator,
    GroupBudget,
    Reason,
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
    chosen: list[MessageEntry] = []
    spent: float = 0
    taken = 0
    index = len(groups) - 1
    while index >= 0:
        copies = [parse_message_entry(e) for e in groups[index]]
        price: float = 0
        for entry in copies:
            price += estimate(estimate_tokens, entry.message, entry.id)
        if spent + price > available:
            if taken == 0:
                return Selection(copies, price, "single_group_overflow", 1)
            break
        chosen = copies + chosen
        spent += price
        taken += 1
        index -= 1
    why: Reason = "within_budget" if taken == len(groups) else "trimmed"
    return Selection(chosen, spent, why, taken)


def build_context(
    path: Sequence[SessionEntry],
    *,
    max_tokens: float,
    system_prompt: str,
    reserved_output: float,
    safety_margin: float,
    estimate_tokens: Estimator,
) -> BuildContextResult:
    limit = check_amount(max_tokens, "max_tokens")
    reserve = check_amount(reserved_output, "reserved_output")
    margin = check_amount(safety_margin, "safety_margin")
    if type(system_prompt) is not str:
        raise BudgetError("system_prompt: must be a string")
    check_unique_ids(path)
    prompt = estimate(estimate_tokens, {"role": "system", "content": system_prompt}, "prompt")
    room = limit - prompt - reserve - margin
    if room < 0:
        room = 0
    opening = open_context(path, estimate_tokens)
    left = room - opening.tokens
    selection = select_groups(
        split_interactions(opening.entries), left if left > 0 else 0, estimate_tokens
    )
    used = check_amount(opening.tokens + selection.tokens, "messages")
    grand = check_amount(prompt + used + reserve + margin, "total")
    return BuildContextResult(
        system_prompt,
        list(opening.messages) + [e.message for e in selection.entries],
        [e.id for e in selection.entries],
        selection.reason,
        ContextTokens(limit, prompt, used, reserve, margin, room, grand),
        opening.compaction_id,
    )


def budget_report(
    groups: Sequence[InteractionGroup], *, estimate_tokens: Estimator, available: float
) -> list[GroupBudget]:
    budget = check_amount(available, "available")
    picked = select_groups([g.entries for g in groups], budget, estimate_tokens)
    rows = []
    for number, group in enumerate(groups):
        tokens = 0.0
        for entry in group.entries:
            tokens += estimate(estimate_tokens, entry.message, entry.id)
        newest = number == len(groups) - 1
        if picked.reason == "single_group_overflow":
            label = "overflow" if newest else "trimmed"
        elif number >= len(groups) - picked.groups:
            label = "kept"
        else:
            label = "trimmed"
        rows.append(GroupBudget(group.entry_ids, tokens, label))  # type: ignore[arg-type]
    return rows
