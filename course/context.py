"""Context projection: interaction groups, budget selection, compaction records and resume."""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, TypeAlias, overload

from .session import (
    SUMMARY_LIST_FIELDS,
    CompactionEntry,
    CompactionSummary,
    Message,
    MessageEntry,
    SessionEntry,
    copy_json,
    parse_session_entry,
    summary_to_json,
)

Estimator: TypeAlias = Callable[[Message], float]
"""Returns a message's token cost: a non-negative finite number."""

Reason: TypeAlias = Literal["within_budget", "trimmed", "single_group_overflow"]
GroupStatus: TypeAlias = Literal["kept", "trimmed", "overflow"]


class InteractionError(ValueError):
    """The path breaks an interaction rule; the message names the entry or call id."""


class BudgetError(ValueError):
    """A budget number or an estimate is not a non-negative finite number."""


class CompactionError(ValueError):
    """A compaction record cannot be created or resumed from."""


@dataclass(frozen=True)
class InteractionGroup:
    """A user message and everything up to the next one: kept or dropped as a whole."""

    entries: list[MessageEntry]

    @property
    def entry_ids(self) -> list[str]:
        return [entry.id for entry in self.entries]


@dataclass(frozen=True)
class ContextTokens:
    """Where the window's tokens go; ``total = system + messages + reserved + margin``."""

    max_tokens: float
    system: float
    messages: float
    reserved_output: float
    safety_margin: float
    available_for_messages: float
    total: float

    def to_json(self) -> dict[str, float]:
        """The chapter's camelCase object."""
        return {
            "maxTokens": self.max_tokens,
            "system": self.system,
            "messages": self.messages,
            "reservedOutput": self.reserved_output,
            "safetyMargin": self.safety_margin,
            "availableForMessages": self.available_for_messages,
            "total": self.total,
        }


@dataclass(frozen=True)
class BuildContextResult:
    """One model request's view of the history: never a rewrite of it."""

    system_prompt: str
    messages: list[Message]
    kept_entry_ids: list[str]
    reason: Reason
    tokens: ContextTokens
    compaction_id: str | None = field(default=None)
    """The compaction whose summary opens ``messages``, if any."""

    def to_json(self) -> dict[str, Any]:
        """The chapter's camelCase result object (without the message bodies)."""
        return {
            "systemPrompt": self.system_prompt,
            "keptEntryIds": list(self.kept_entry_ids),
            "reason": self.reason,
            "tokens": self.tokens.to_json(),
        }


@dataclass(frozen=True)
class GroupBudget:
    """One group's cost and fate under a budget."""

    entry_ids: list[str]
    tokens: float
    status: GroupStatus


# --------------------------------------------------------------------------- Lab 11.2


def group_interactions(path: Sequence[SessionEntry]) -> list[InteractionGroup]:
    """Split the message entries of ``path`` into user-started interactions, checking tool ids."""
    groups: list[InteractionGroup] = []
    current: list[MessageEntry] = []
    for entry in path:
        copied = parse_session_entry(entry)
        if not isinstance(copied, MessageEntry):
            continue
        role = copied.message["role"]
        if role == "user":
            if current:
                groups.append(_close_group(current))
            current = [copied]
        elif role == "system":
            raise InteractionError(
                f"{copied.id}: system message inside the history; pass the prompt as "
                "system_prompt instead"
            )
        elif not current:
            raise InteractionError(
                f"{copied.id}: {role} message before any user message; an interaction starts "
                "at a user message"
            )
        else:
            current.append(copied)
    if current:
        groups.append(_close_group(current))
    return groups


def _close_group(entries: list[MessageEntry]) -> InteractionGroup:
    """Check the four call/result relations of one group (ids only, any order)."""
    start = entries[0].id
    calls: dict[str, str] = {}
    results: dict[str, str] = {}
    for entry in entries:
        message = entry.message
        if message["role"] == "assistant":
            for block in message["content"]:
                if block["type"] != "toolCall":
                    continue
                call_id = block["id"]
                if call_id in calls:
                    raise InteractionError(
                        f"{entry.id}: tool call {call_id} is declared twice in the interaction "
                        f"starting at {start} (first in {calls[call_id]})"
                    )
                calls[call_id] = entry.id
        elif message["role"] == "toolResult":
            call_id = message["toolCallId"]
            if call_id in results:
                raise InteractionError(
                    f"{entry.id}: second result for tool call {call_id} in the interaction "
                    f"starting at {start} (first is {results[call_id]})"
                )
            results[call_id] = entry.id
    for call_id, result_id in results.items():
        if call_id not in calls:
            raise InteractionError(
                f"{result_id}: result for tool call {call_id}, which no assistant message in "
                f"the interaction starting at {start} declares"
            )
    for call_id, call_entry in calls.items():
        if call_id not in results:
            raise InteractionError(
                f"{call_entry}: tool call {call_id} has no result before the interaction "
                f"starting at {start} ends"
            )
    return InteractionGroup(entries)


# --------------------------------------------------------------------------- Lab 11.3


def check_amount(value: object, what: str) -> float:
    """A budget number or estimate must be a non-negative finite number (bool is not one)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise BudgetError(
            f"{what}: must be a non-negative finite number, got {type(value).__name__}"
        )
    if value < 0 or (isinstance(value, float) and not math.isfinite(value)):
        raise BudgetError(f"{what}: must be a non-negative finite number, got {value!r}")
    return value


def estimate(estimate_tokens: Estimator, message: Message, what: str) -> float:
    """Ask the estimator about a copy of ``message`` and check its answer."""
    return check_amount(estimate_tokens(copy_json(message)), f"estimate_tokens({what})")


def group_cost(group: InteractionGroup, estimate_tokens: Estimator) -> float:
    """The summed estimate of a group's messages."""
    return sum(estimate(estimate_tokens, e.message, e.id) for e in group.entries)


class LazyCosts(Sequence[float]):
    """Group costs asked of the estimator on first access, then remembered.

    ``select_groups`` walks newest first and stops at the first group that does not fit, so
    the groups older than that are never estimated (nor copied for the estimator).
    """

    def __init__(self, groups: Sequence[InteractionGroup], estimate_tokens: Estimator) -> None:
        self._groups = groups
        self._estimate_tokens = estimate_tokens
        self._known: dict[int, float] = {}

    def __len__(self) -> int:
        return len(self._groups)

    @overload
    def __getitem__(self, index: int) -> float: ...

    @overload
    def __getitem__(self, index: slice) -> list[float]: ...

    def __getitem__(self, index: int | slice) -> float | list[float]:
        if isinstance(index, slice):
            return [self[i] for i in range(*index.indices(len(self)))]
        position = range(len(self))[index]
        if position not in self._known:
            self._known[position] = group_cost(self._groups[position], self._estimate_tokens)
        return self._known[position]


def select_groups(costs: Sequence[float], available: float) -> tuple[int, Reason]:
    """Index of the first kept group: whole groups newest first while they fit (``<=``)."""
    if not costs:
        return 0, "within_budget"
    if costs[-1] > available:
        return len(costs) - 1, "single_group_overflow"
    used = 0.0
    first = len(costs)
    while first > 0 and used + costs[first - 1] <= available:
        first -= 1
        used += costs[first]
    return first, ("within_budget" if first == 0 else "trimmed")


def build_context(
    path: Sequence[SessionEntry],
    *,
    max_tokens: float,
    system_prompt: str,
    reserved_output: float,
    safety_margin: float,
    estimate_tokens: Estimator,
) -> BuildContextResult:
    """Project ``path`` into the messages of one model request within the token budget."""
    max_tokens = check_amount(max_tokens, "max_tokens")
    reserved_output = check_amount(reserved_output, "reserved_output")
    safety_margin = check_amount(safety_margin, "safety_margin")
    if not isinstance(system_prompt, str):
        raise BudgetError(f"system_prompt: must be a string, got {type(system_prompt).__name__}")
    system = estimate(
        estimate_tokens, {"role": "system", "content": system_prompt}, "system prompt"
    )
    available = max(0.0, max_tokens - system - reserved_output - safety_margin)

    compaction, suffix = resume_suffix(path)
    opening: list[Message] = []
    summary_cost: float = 0
    if compaction is not None:
        opening = [summary_message(compaction.summary)]
        summary_cost = estimate(estimate_tokens, opening[0], f"summary of {compaction.id}")

    groups = group_interactions(suffix)
    costs = LazyCosts(groups, estimate_tokens)
    first, reason = select_groups(costs, max(0.0, available - summary_cost))
    kept = [entry for group in groups[first:] for entry in group.entries]
    messages_cost = summary_cost + sum(costs[first:])
    tokens = ContextTokens(
        max_tokens=max_tokens,
        system=system,
        messages=messages_cost,
        reserved_output=reserved_output,
        safety_margin=safety_margin,
        available_for_messages=available,
        total=system + messages_cost + reserved_output + safety_margin,
    )
    return BuildContextResult(
        system_prompt=system_prompt,
        messages=opening + [entry.message for entry in kept],  # fresh parser copies
        kept_entry_ids=[entry.id for entry in kept],
        reason=reason,
        tokens=tokens,
        compaction_id=compaction.id if compaction is not None else None,
    )


def budget_report(
    groups: Sequence[InteractionGroup], *, estimate_tokens: Estimator, available: float
) -> list[GroupBudget]:
    """Each group's ids, cost and fate (kept / trimmed / overflow) under ``available`` tokens."""
    available = check_amount(available, "available")
    costs = [group_cost(group, estimate_tokens) for group in groups]
    first, reason = select_groups(costs, available)
    report = []
    for index, (group, cost) in enumerate(zip(groups, costs, strict=True)):
        status: GroupStatus = "trimmed" if index < first else "kept"
        if reason == "single_group_overflow" and index == len(groups) - 1:
            status = "overflow"
        report.append(GroupBudget(group.entry_ids, cost, status))
    return report


# --------------------------------------------------------------------------- Lab 11.4


def create_compaction_entry(
    path: Sequence[SessionEntry],
    *,
    id: str,
    timestamp: float,
    summary: CompactionSummary | Mapping[str, Any],
    first_kept_entry_id: str,
    tokens_before: float,
) -> CompactionEntry:
    """A new compaction record to append after the path's leaf; writes nothing anywhere."""
    if not path:
        raise CompactionError(f"{id}: cannot compact an empty path (no leaf to append after)")
    if any(entry.id == id for entry in path):
        raise CompactionError(f"{id}: id is already used on the active path")
    starts = {group.entries[0].id for group in group_interactions(path)}
    if first_kept_entry_id not in starts:
        raise CompactionError(
            f"{id}.firstKeptEntryId: {first_kept_entry_id} is not the first message of an "
            f"interaction on the path (allowed: {', '.join(sorted(starts)) or 'none'})"
        )
    if isinstance(summary, CompactionSummary):
        summary = summary_to_json(summary)
    entry = parse_session_entry(
        {
            "type": "compaction",
            "id": id,
            "parentId": path[-1].id,
            "timestamp": timestamp,
            "summary": summary,
            "firstKeptEntryId": first_kept_entry_id,
            "tokensBefore": tokens_before,
        }
    )
    assert isinstance(entry, CompactionEntry)
    return entry


# --------------------------------------------------------------------------- Lab 11.5

SUMMARY_HEADINGS: tuple[tuple[str, str], ...] = (
    ("constraints", "Constraints"),
    ("completed", "Completed"),
    ("decisions", "Decisions"),
    ("changed_files", "Changed files"),
    ("unresolved", "Unresolved"),
    ("next", "Next"),
)
assert [a for a, _ in SUMMARY_HEADINGS] == [a for a, _ in SUMMARY_LIST_FIELDS]


def summary_message(summary: CompactionSummary) -> Message:
    """The synthetic user message for a summary: its seven fields in fixed order."""
    lines = ["[Compaction summary of earlier messages]", f"Goal: {summary.goal}"]
    for attr, heading in SUMMARY_HEADINGS:
        items = getattr(summary, attr)
        lines.append(f"{heading}:")
        lines.extend(f"- {item}" for item in items or ["(none)"])
    return {"role": "user", "content": "\n".join(lines)}


def latest_compaction(path: Sequence[SessionEntry]) -> int | None:
    """Index of the newest compaction entry on the path, if any."""
    for index in range(len(path) - 1, -1, -1):
        if isinstance(path[index], CompactionEntry):
            return index
    return None


def resume_suffix(
    path: Sequence[SessionEntry],
) -> tuple[CompactionEntry | None, list[SessionEntry]]:
    """The latest compaction (if any) and the entries whose messages follow its summary."""
    index = latest_compaction(path)
    if index is None:
        return None, list(path)
    compaction = path[index]
    assert isinstance(compaction, CompactionEntry)
    first_kept = compaction.first_kept_entry_id
    start = next((i for i in range(index) if path[i].id == first_kept), None)
    if start is None:
        raise CompactionError(
            f"{compaction.id}.firstKeptEntryId: {first_kept} is not on the path before "
            f"{compaction.id}"
        )
    kept = path[start]
    if not (isinstance(kept, MessageEntry) and kept.message.get("role") == "user"):
        raise CompactionError(
            f"{compaction.id}.firstKeptEntryId: {first_kept} is not a user message, so it "
            "does not start an interaction"
        )
    suffix: list[SessionEntry] = [e for e in path[start:] if isinstance(e, MessageEntry)]
    return compaction, suffix
