"""Lab 11.3 · The context projection: whole interactions, newest first, within a token budget."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, TypeAlias

from course.locale import gettext as _

from .compaction import resume_suffix, summary_message
from .entries import MessageEntry, SessionEntry, check_unique_ids, parse_message_entry
from .fields import PrintableError, copy_json, plain_number
from .groups import InteractionGroup, split_interactions
from .messages import Message
from .summary import CompactionEntry

Estimator: TypeAlias = Callable[[Message], float]
"""Returns a message's token cost: a non-negative finite number."""

Reason: TypeAlias = Literal["within_budget", "trimmed", "single_group_overflow"]
GroupStatus: TypeAlias = Literal["kept", "trimmed", "overflow"]


class BudgetError(PrintableError):
    """A budget number, an estimate or a total is not a non-negative finite number.

    A ``ValueError``, like every refusal of the chapter; ``build_context`` also raises it for
    a ``system_prompt`` that is not a string.
    """


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
class Selection:
    """What ``select_groups`` keeps: copies of the kept entries, their cost, and why."""

    entries: list[MessageEntry]
    tokens: float
    reason: Reason
    groups: int
    """How many of the newest groups were kept."""


@dataclass(frozen=True)
class GroupBudget:
    """One group's cost and fate under a budget."""

    entry_ids: list[str]
    tokens: float
    status: GroupStatus


def check_amount(value: object, what: str) -> float:
    """A budget number or an estimate, checked as a float: ``BudgetError`` unless finite, >= 0.

    ``True``, ``"31"``, ``-1``, ``NaN`` and ``Infinity`` are all refused, each with an error
    that starts with ``what`` (``max_tokens: must be ...``). The number is read as a plain
    ``int`` or ``float`` before any comparison, so a subclass's own ``__lt__``, ``__float__``
    or ``__int__`` play no part. An ``int`` comes back as a plain ``int`` (so the chapter's
    figures stay whole numbers).
    """
    number = plain_number(value)
    if number is None:
        raise BudgetError(
            _("{what}: must be a non-negative finite number, got {kind}").format(
                what=what, kind=type(value).__name__
            )
        )
    try:
        amount = float(number)
    except OverflowError:
        raise BudgetError(
            _("{what}: must be a non-negative finite number, got a huge integer").format(what=what)
        ) from None
    if not (amount >= 0 and math.isfinite(amount)):
        raise BudgetError(
            _("{what}: must be a non-negative finite number, got {number}").format(
                what=what, number=repr(amount)
            )
        )
    return number


def estimate(estimate_tokens: Estimator, message: Message, what: str) -> float:
    """Ask the estimator about a copy of ``message`` and check its answer."""
    return check_amount(estimate_tokens(copy_json(message)), f"estimate_tokens({what})")


def select_groups(
    groups: Sequence[Sequence[MessageEntry]], available: float, estimate_tokens: Estimator
) -> Selection:
    """Keep whole groups from the newest backwards while their running cost stays ``<=``.

    Walk from the newest group to the oldest. Copy each entry of the group at hand with
    ``parse_message_entry`` and estimate each copy's message with ``estimate`` (which hands
    the estimator a copy of its own and checks its answer); the group costs the sum. If the
    running cost plus the group's stays ``<= available``, keep it and go on; otherwise stop
    the walk there: that group and every older one are dropped, even an older one small
    enough to fit (never skip a group to keep an older one). Cost a group only when the walk
    reaches it: groups older than the stop are never copied nor estimated.

    When the newest group alone does not fit, keep it whole anyway:
    ``Selection(its copies, its cost, "single_group_overflow", 1)``. Otherwise the reason is
    ``within_budget`` when every group fits (so for no groups at all), else ``trimmed``;
    ``entries`` are the kept copies in path order, ``tokens`` their summed cost and
    ``groups`` how many groups were kept.
    """
    # Every group is copied and costed once, up front; the choice reads the costs alone.
    copies = [[parse_message_entry(entry) for entry in group] for group in groups]
    costs = [sum(estimate(estimate_tokens, e.message, e.id) for e in group) for group in copies]
    newest_first: list[float] = []  # the running cost of the newest groups, one more each
    running: float = 0
    for cost in reversed(costs):
        running += cost
        newest_first.append(running)
    taken = len([total for total in newest_first if total <= available])
    if groups and taken == 0:
        return Selection(copies[-1], costs[-1], "single_group_overflow", 1)
    kept = copies[len(copies) - taken :]
    reason: Reason = "within_budget" if taken == len(groups) else "trimmed"
    tokens = newest_first[taken - 1] if taken else 0
    return Selection([entry for group in kept for entry in group], tokens, reason, taken)


@dataclass(frozen=True)
class Opening:
    """What opens one request's messages before the chosen groups, and what is left to group."""

    messages: list[Message]
    """The latest compaction's summary message, or nothing on a path without compaction."""
    tokens: float
    """The opening messages' cost: it comes off the budget before any group is chosen."""
    entries: list[SessionEntry]
    """The path's entries to split into groups: the whole path, or the resumed suffix."""
    compaction_id: str | None
    """The compaction whose summary opens the messages, if any."""


def open_context(path: Sequence[SessionEntry], estimate_tokens: Estimator) -> Opening:
    """Given · the seam between Lab 11.3 and Lab 11.5: ``build_context`` calls it as it is.

    On a path without a compaction entry nothing opens the messages and the whole path is
    left to group; no Lab 11.5 code runs, so Lab 11.3 works before Lab 11.5 is written. On a
    path with one, Lab 11.5's ``resume_suffix`` finds the latest compaction and the entries
    from its first kept id on, and ``summary_message`` renders that summary, estimated here.
    """
    if not any(isinstance(entry, CompactionEntry) for entry in path):
        return Opening([], 0, list(path), None)
    compaction, suffix = resume_suffix(path)
    if compaction is None:
        return Opening([], 0, suffix, None)
    summary = summary_message(compaction.summary)
    cost = estimate(estimate_tokens, summary, _("summary of {entry}").format(entry=compaction.id))
    return Opening([summary], cost, suffix, compaction.id)


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

    Lab 11.3 writes all of this function. First the checks, each a ``ValueError``: the three
    numbers with ``check_amount`` (a ``BudgetError`` naming ``max_tokens``,
    ``reserved_output`` or ``safety_margin``); ``system_prompt`` must be a ``str``, else a
    ``BudgetError`` naming ``system_prompt`` (a ``ValueError``, not a ``TypeError``); a
    repeated entry id is an error (the given ``check_unique_ids``).

    Estimate the prompt as ``{"role": "system", "content": system_prompt}`` with ``estimate``,
    always: an empty prompt ``""`` is estimated too, never taken as free. Then
    ``available = max(0, max_tokens - system - reserved_output - safety_margin)``.

    Ask the given ``open_context(path, estimate_tokens)`` what opens the messages (Lab 11.5's
    summary after a compaction; nothing otherwise). Split its ``entries`` with
    ``split_interactions`` and choose with ``select_groups`` within
    ``max(0, available - opening.tokens)``. Return copies only: the opening's messages, then
    the chosen ones; ``messages = opening.tokens + chosen.tokens``, ``total = system +
    messages + reserved_output + safety_margin`` (finite, or a ``BudgetError``), the chosen
    entries' ids, their reason, ``system_prompt`` as given and the opening's
    ``compaction_id``. The path is never changed, and no returned message is one the
    estimator was handed.
    """
    max_tokens = check_amount(max_tokens, "max_tokens")
    reserved_output = check_amount(reserved_output, "reserved_output")
    safety_margin = check_amount(safety_margin, "safety_margin")
    if not isinstance(system_prompt, str):
        raise BudgetError(
            _("{what}: must be a string, got {kind}").format(
                what="system_prompt", kind=type(system_prompt).__name__
            )
        )
    check_unique_ids(path)
    system = estimate(estimate_tokens, {"role": "system", "content": system_prompt}, "system")
    available = max(0, max_tokens - system - reserved_output - safety_margin)
    opening = open_context(path, estimate_tokens)
    groups = split_interactions(opening.entries)
    chosen = select_groups(groups, max(0, available - opening.tokens), estimate_tokens)
    messages = [copy_json(m) for m in opening.messages] + [
        copy_json(entry.message) for entry in chosen.entries
    ]
    message_tokens = opening.tokens + chosen.tokens
    total = check_amount(system + message_tokens + reserved_output + safety_margin, "total")
    return BuildContextResult(
        system_prompt=system_prompt,
        messages=messages,
        kept_entry_ids=[entry.id for entry in chosen.entries],
        reason=chosen.reason,
        tokens=ContextTokens(
            max_tokens=max_tokens,
            system=system,
            messages=message_tokens,
            reserved_output=reserved_output,
            safety_margin=safety_margin,
            available_for_messages=available,
            total=total,
        ),
        compaction_id=opening.compaction_id,
    )


def budget_report(
    groups: Sequence[InteractionGroup], *, estimate_tokens: Estimator, available: float
) -> list[GroupBudget]:
    """Optional · Each group's ids, cost and fate (kept / trimmed / overflow) under ``available``.

    Read-only, and no second copy of the selection rule: ask ``select_groups`` which groups
    it keeps, then cost every group with ``estimate``. The newest group is ``overflow`` when
    the selection's reason is ``single_group_overflow``.
    """
    entry_groups = [group.entries for group in groups]
    available = check_amount(available, "available")  # the contract's refusal, named
    selection = select_groups(entry_groups, available, estimate_tokens)
    newest_kept = len(groups) - selection.groups
    report: list[GroupBudget] = []
    for index, group in enumerate(groups):
        cost: float = 0
        for entry in group.entries:
            cost += estimate(estimate_tokens, entry.message, entry.id)
        if index >= newest_kept:
            status: GroupStatus = (
                "overflow" if selection.reason == "single_group_overflow" else "kept"
            )
        else:
            status = "trimmed"
        report.append(GroupBudget(list(group.entry_ids), cost, status))
    return report
