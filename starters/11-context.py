"""Context projection, Labs 11.2 to 11.5: groups, budget, compaction records, resume."""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, TypeAlias, overload

from .labs import LabNotImplemented
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
    """Split the message entries of ``path`` into user-started interactions, checking tool ids.

    Lab 11.2. Skip entries that are not messages. A user message closes the open group and
    starts a new one; a non-user message before the first user message, or a system message
    anywhere, is an ``InteractionError``. When a group closes, check its tool facts by id
    only: every call id is declared once, every result's ``toolCallId`` names a call of the
    group, a call has at most one result, and every call has its result. Keep path order, and
    put copies in the groups (``parse_session_entry`` makes them). Error messages name the
    entry or call id.
    """
    raise LabNotImplemented(
        "11.2",
        "interaction groups",
        "group_interactions",
        "open a group at each user message; pair results to calls by toolCallId",
    )


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
    """The summed estimate of a group's messages.

    Lab 11.3. Ask ``estimate`` (it hands the estimator a copy and checks the answer).
    """
    raise LabNotImplemented(
        "11.3", "budget projection", "group_cost", "sum estimate(...) over the group's entries"
    )


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
    """Index of the first kept group: whole groups newest first while they fit (``<=``).

    Lab 11.3. ``costs`` are the groups' costs in path order. Returns ``(first, reason)``:
    keep ``groups[first:]``. No groups: ``(0, "within_budget")``. The newest group alone
    over ``available``: keep it anyway, reason ``"single_group_overflow"``. Otherwise add
    groups from the newest back while the running sum stays ``<= available``; reason
    ``"within_budget"`` if all fit, else ``"trimmed"``.
    """
    raise LabNotImplemented(
        "11.3",
        "budget projection",
        "select_groups",
        "walk the costs from the end while the sum stays <= available",
    )


def build_context(
    path: Sequence[SessionEntry],
    *,
    max_tokens: float,
    system_prompt: str,
    reserved_output: float,
    safety_margin: float,
    estimate_tokens: Estimator,
) -> BuildContextResult:
    """Project ``path`` into the messages of one model request within the token budget.

    Lab 11.3. Check the three numbers with ``check_amount`` and that ``system_prompt`` is a
    string; estimate the system prompt as ``{"role": "system", "content": system_prompt}``.
    ``available = max(0, max_tokens - system - reserved_output - safety_margin)``. Group the
    messages, cost each group, choose with ``select_groups``, and return a
    ``BuildContextResult`` whose messages are copies and whose ``tokens`` add up:
    ``total = system + messages + reserved_output + safety_margin``.

    Lab 11.5 then opens the messages with the latest summary (``summary_message``) and takes
    its cost off ``available`` before choosing groups; ``resume_suffix`` already hands you the
    compaction (None until there is one) and the entries to group.
    """
    compaction, suffix = resume_suffix(path)
    raise LabNotImplemented(
        "11.3",
        "budget projection",
        "build_context",
        "deduct system, reserved_output and safety_margin, then keep whole groups",
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
    """A new compaction record to append after the path's leaf; writes nothing anywhere.

    Lab 11.4. Refuse an empty path and an ``id`` already on the path (``CompactionError``).
    The parent is the path's last entry, whatever its type. ``first_kept_entry_id`` must be
    the first entry of one of ``group_interactions(path)``; say which ids are allowed when it
    is not. Build the JSON object and let ``parse_session_entry`` check and copy it (a
    ``CompactionSummary`` goes through ``summary_to_json`` first). Do not append it anywhere:
    the caller decides.
    """
    raise LabNotImplemented(
        "11.4",
        "compaction record",
        "create_compaction_entry",
        "parent = path[-1]; first kept must start a group; parse the record",
    )


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
    """The synthetic user message for a summary: its seven fields in fixed order.

    Lab 11.5. One ``{"role": "user", "content": text}`` whose text has the goal, then each
    list under its heading from ``SUMMARY_HEADINGS``, in that order.
    """
    raise LabNotImplemented(
        "11.5",
        "resume from compaction",
        "summary_message",
        "goal first, then the six lists in SUMMARY_HEADINGS order",
    )


def latest_compaction(path: Sequence[SessionEntry]) -> int | None:
    """Index of the newest compaction entry on the path, if any.

    Lab 11.5. Search from the end: only the latest summary counts.
    """
    raise LabNotImplemented(
        "11.5", "resume from compaction", "latest_compaction", "scan the path from its end"
    )


def resume_suffix(
    path: Sequence[SessionEntry],
) -> tuple[CompactionEntry | None, list[SessionEntry]]:
    """The latest compaction (if any) and the entries whose messages follow its summary.

    Lab 11.5. Without a compaction the whole path follows. With one (``latest_compaction``),
    its ``first_kept_entry_id`` must be on the path before it and be a user message, else a
    ``CompactionError`` naming both ids. The suffix is every message entry from first kept on:
    metadata and every compaction entry are skipped.
    """
    if not any(isinstance(entry, CompactionEntry) for entry in path):
        return None, list(path)
    raise LabNotImplemented(
        "11.5",
        "resume from compaction",
        "resume_suffix",
        "find the latest compaction, check first kept, collect message entries from it",
    )
