"""Lab 11.3 · Budget projection: whole interactions, newest first, within a token budget."""

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
from .labs import LabNotImplemented

Estimator: TypeAlias = Callable[[Message], float]
"""Returns a message's token cost: a non-negative finite number."""

Reason: TypeAlias = Literal["within_budget", "trimmed", "single_group_overflow"]
GroupStatus: TypeAlias = Literal["kept", "trimmed", "overflow"]


class BudgetError(PrintableError):
    """A budget number, an estimate or a total is not a non-negative finite number.

    A ``ValueError``, like every refusal of the chapter; also for a ``system_prompt`` not a str.
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

    ``True``, ``"31"``, ``-1``, ``NaN``, ``Infinity`` and ``10**400`` (no float holds it) are
    all refused, each with an error that starts with ``what`` (``max_tokens: must be ...``).
    The number is read as a plain ``int`` or ``float`` before any comparison, so a subclass's
    own ``__lt__``, ``__float__`` or ``__int__`` play no part. An ``int`` comes back as a plain
    ``int`` (so the chapter's figures stay whole numbers).
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
    """The estimator's checked answer for a copy of ``message`` (``what`` names it in errors)."""
    return check_amount(estimate_tokens(copy_json(message)), f"estimate_tokens({what})")


def select_groups(
    groups: Sequence[Sequence[MessageEntry]], available: float, estimate_tokens: Estimator
) -> Selection:
    """The newest whole groups whose summed cost stays ``<= available``, as copies.

    ``groups`` are in path order. A group costs the sum of its messages' estimates (the given
    ``estimate`` hands the estimator a copy and checks its answer: a bad one is a
    ``BudgetError``). Kept: as many of the newest groups as stay ``<= available`` together (a
    group that fits exactly is kept), with no gap, so no older group is kept past one that does
    not fit, however small. When the newest group alone does not fit it is kept whole anyway:
    ``Selection(its copies, its cost, "single_group_overflow", 1)``. Otherwise ``reason`` is
    ``within_budget`` when every group is kept (so for no groups at all), else ``trimmed``;
    ``entries`` are checked copies of the kept entries in path order (``parse_message_entry``:
    what it refuses is refused), ``tokens`` their cost and ``groups`` how many were kept.

    ``groups`` are left as they were. Cost: each message estimated at most once, and only
    messages of ``groups``; whether groups past the last kept one are estimated is yours. With
    costs 7, 7 and 15 and 22 available the last two are kept (15 + 7 = 22): ``trimmed``.
    """
    raise LabNotImplemented(
        "11.3",
        "budget projection",
        "select_groups",
        "the newest whole groups within available; each message estimated at most once",
    )


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
    """One model request's view of ``path`` within the budget; the history is never rewritten.

    Lab 11.3 writes all of it. Refuses with a ``ValueError``: a budget number, an estimator
    answer (for the prompt or any message) or a total not a non-negative finite number (the
    given ``check_amount``'s ``BudgetError`` names ``max_tokens``, ``reserved_output``,
    ``safety_margin``); a ``system_prompt`` not a ``str`` (a ``BudgetError`` naming it, not a
    ``TypeError``); a repeated entry id (the given ``check_unique_ids``); a broken history.

    The prompt costs the estimate of ``{"role": "system", "content": system_prompt}``, ``""``
    included; ``max(0, max_tokens - system - reserved_output - safety_margin)`` is left for
    messages (``available_for_messages``). What the given ``open_context`` puts first (Lab 11.5's
    summary after a compaction; nothing before) comes off that; its ``entries`` are split into
    interactions and chosen as ``select_groups`` chooses, within what is left (never below 0).
    ``messages``: the opening's and the chosen ones, all copies; ``tokens.messages`` their cost,
    ``total = system + messages + reserved_output + safety_margin``; ``kept_entry_ids`` the chosen
    ids, ``reason`` the selection's, ``compaction_id`` the opening's, the prompt as given.

    ``path`` is left as it was; no returned message is one the estimator was handed. Cost: each
    message estimated at most once, only the prompt, the opening and the path's. The chapter's
    31 tokens (section "31 个 token 怎样留下第二、三组"): system 3, 22 available,
    ``[u2, …, a3]`` kept, ``trimmed``; with a 5-token summary, 17 for groups.
    """
    raise LabNotImplemented(
        "11.3",
        "budget projection",
        "build_context",
        "fixed costs off the budget, whole groups within what is left, copies only",
    )


def budget_report(
    groups: Sequence[InteractionGroup], *, estimate_tokens: Estimator, available: float
) -> list[GroupBudget]:
    """Optional · Each group's ids, cost and fate (kept / trimmed / overflow) under ``available``.

    One ``GroupBudget`` per group, in order: its cost, its messages' ``estimate`` summed (a
    message may be estimated again here: no call bound), its status what ``select_groups``
    decides (``kept``, ``trimmed``, or ``overflow`` for the newest under ``single_group_overflow``).
    ``available`` is checked as a budget number (a ``BudgetError`` naming it); groups stay as given.
    """
    raise LabNotImplemented(
        "11.opt",
        "budget report",
        "budget_report",
        "select_groups decides; you only cost each group and label it",
    )
