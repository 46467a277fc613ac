"""The budget explorer's model: one projection per budget, rendered as text and HTML."""

from __future__ import annotations

import copy
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from types import ModuleType
from typing import Any, Literal

from .views import Attempt, attempt, esc

Estimator = Callable[[dict[str, Any]], float]
GroupState = Literal["kept", "trimmed", "overflow", "summarized", "pending"]

STATE_COLOURS: dict[GroupState, str] = {
    "kept": "#43a047",
    "trimmed": "#bdbdbd",
    "overflow": "#ef6c00",
    "summarized": "#90a4ae",
    "pending": "#eeeeee",
}
STATE_NOTES: dict[GroupState, str] = {
    "kept": "sent to the model",
    "trimmed": "stays in the session, not sent",
    "overflow": "newest group, sent whole although it does not fit",
    "summarized": "covered by the compaction summary",
    "pending": "selection not available yet",
}
DASH = "\N{EN DASH}"
MINUS = "\N{MINUS SIGN}"
SENT: tuple[GroupState, ...] = ("kept", "overflow")
"""The states of groups whose messages go to the model."""
ROW_LIMIT = 24
"""Up to this many groups get one row each; more are drawn as a single strip."""
ID_LIMIT = 12
"""Kept ids beyond this many are abbreviated to first … last."""


@dataclass(frozen=True)
class Budget:
    """The explorer's four knobs (the system prompt's cost stands in for its text)."""

    max_tokens: float = 31
    reserved_output: float = 4
    safety_margin: float = 2
    system_cost: float = 3


@dataclass(frozen=True)
class GroupBar:
    """One interaction group: its number (from 1), ids, cost and fate."""

    number: int
    entry_ids: tuple[str, ...]
    tokens: float
    state: GroupState


@dataclass(frozen=True)
class Projection:
    """What the implementation made of one budget, plus what the view needs to explain it."""

    budget: Budget
    groups: tuple[GroupBar, ...] = ()
    kept_ids: tuple[str, ...] = ()
    reason: str = ""
    available: float | None = None
    messages: float | None = None
    system: float | None = None
    total: float | None = None
    summary_cost: float | None = None
    compaction_id: str | None = None
    problem: str = ""
    pending: bool = False

    @property
    def ok(self) -> bool:
        return not self.problem


def with_system_cost(estimate: Estimator, cost: float) -> Estimator:
    """``estimate``, except that a system message costs exactly ``cost``."""

    def estimator(message: dict[str, Any]) -> float:
        if message.get("role") == "system":
            return cost
        return estimate(message)

    return estimator


def fmt(value: float | None) -> str:
    """A token count: whole numbers without a decimal point, '—' when unknown."""
    if value is None:
        return "—"
    if float(value).is_integer():
        return f"{int(value):,}"
    return f"{value:,.2f}".rstrip("0").rstrip(".")


class BudgetModel:
    """A fixed path and estimator; ``project(budget)`` asks the implementation each time."""

    def __init__(
        self,
        path: Sequence[Any] | Callable[[], Sequence[Any]],
        estimate_tokens: Estimator,
        context: ModuleType,
        *,
        system_prompt: str = "sys",
    ) -> None:
        self.context = context
        self.estimate_tokens = estimate_tokens
        self.system_prompt = system_prompt
        loaded: Attempt[Sequence[Any]] = attempt(path) if callable(path) else Attempt(path)
        self.path: list[Any] = list(loaded.value or [])
        self.path_problem = loaded
        self.compaction_id, first_kept = _latest_compaction(self.path)
        self.groups = attempt(lambda: list(context.group_interactions(self.path)))
        self.costs: list[float] = []
        self.first_resumed = 0
        if self.path_problem.ok and self.groups.ok:
            groups = self.groups.get()
            costed = attempt(lambda: [self._cost(g) for g in groups])
            if costed.ok:
                self.costs = costed.get()
            else:
                self.groups = Attempt(None, costed.error)
            starts = [_ids(g)[0] if _ids(g) else "" for g in groups]
            if first_kept in starts:
                self.first_resumed = starts.index(first_kept)

    def _cost(self, group: Any) -> float:
        return float(sum(self.estimate_tokens(copy.deepcopy(e.message)) for e in group.entries))

    def project(self, budget: Budget) -> Projection:
        """Build the context for ``budget`` and label every group kept, trimmed, …"""
        if not self.path_problem.ok:
            return self._failed(budget, self.path_problem)
        result = attempt(
            lambda: self.context.build_context(
                self.path,
                max_tokens=budget.max_tokens,
                system_prompt=self.system_prompt,
                reserved_output=budget.reserved_output,
                safety_margin=budget.safety_margin,
                estimate_tokens=with_system_cost(self.estimate_tokens, budget.system_cost),
            )
        )
        if not self.groups.ok:
            return self._failed(budget, self.groups)
        groups = self.groups.get()
        if not result.ok:
            bars = tuple(
                GroupBar(i + 1, tuple(_ids(g)), cost, self._idle_state(i, "pending"))
                for i, (g, cost) in enumerate(zip(groups, self.costs, strict=True))
            )
            return Projection(budget, bars, problem=result.problem, pending=result.pending)
        built = result.get()
        kept = tuple(str(i) for i in built.kept_entry_ids)
        kept_set = set(kept)
        bars_list: list[GroupBar] = []
        for index, (group, cost) in enumerate(zip(groups, self.costs, strict=True)):
            ids = tuple(_ids(group))
            state: GroupState
            if ids and set(ids) <= kept_set:
                last = index == len(groups) - 1
                state = "overflow" if built.reason == "single_group_overflow" and last else "kept"
            else:
                state = self._idle_state(index, "trimmed")
            bars_list.append(GroupBar(index + 1, ids, cost, state))
        summary_cost = None
        if self.compaction_id is not None and len(built.messages) == len(kept) + 1:
            opening = attempt(lambda: self.estimate_tokens(copy.deepcopy(built.messages[0])))
            summary_cost = (
                float(opening.value) if opening.ok and opening.value is not None else None
            )
        tokens = built.tokens
        return Projection(
            budget=budget,
            groups=tuple(bars_list),
            kept_ids=kept,
            reason=str(built.reason),
            available=tokens.available_for_messages,
            messages=tokens.messages,
            system=tokens.system,
            total=tokens.total,
            summary_cost=summary_cost,
            compaction_id=self.compaction_id,
        )

    def _idle_state(self, index: int, otherwise: GroupState) -> GroupState:
        summarized = self.compaction_id is not None and index < self.first_resumed
        return "summarized" if summarized else otherwise

    def _failed(self, budget: Budget, failure: Attempt[Any]) -> Projection:
        return Projection(budget, problem=failure.problem, pending=failure.pending)


def _ids(group: Any) -> list[str]:
    return [str(entry.id) for entry in group.entries]


def _latest_compaction(path: Sequence[Any]) -> tuple[str | None, str | None]:
    for entry in reversed(path):
        if getattr(entry, "type", None) == "compaction":
            return str(entry.id), str(entry.first_kept_entry_id)
    return None, None


# --------------------------------------------------------------------------- reading a projection


def kept_ids_text(ids: Sequence[str], limit: int = ID_LIMIT) -> str:
    """The kept ids, abbreviated to 'first … last (n entries)' when there are many."""
    if len(ids) <= limit:
        return ", ".join(ids) if ids else "(none)"
    return f"{_id_span(ids)} ({len(ids):,} entries)"


def _id_span(ids: Sequence[str]) -> str:
    return f"{ids[0]} … {ids[-1]}"


def candidate_groups(projection: Projection) -> list[GroupBar]:
    """The groups the budget chooses among (those a compaction summarized are not)."""
    return [bar for bar in projection.groups if bar.state != "summarized"]


def is_suffix(projection: Projection) -> bool:
    """Whether the sent groups are the newest ones, with no gap."""
    states = [bar.state in SENT for bar in candidate_groups(projection)]
    first = states.index(True) if True in states else len(states)
    return all(states[first:])


def kept_range(projection: Projection) -> str:
    """'groups 2 to 3 of 3' with an en dash (groups are numbered over the whole path)."""
    sent = [bar.number for bar in projection.groups if bar.state in SENT]
    if not sent:
        return f"no group of {len(projection.groups)}"
    span = f"group {sent[0]}" if len(sent) == 1 else f"groups {sent[0]}{DASH}{sent[-1]}"
    if not is_suffix(projection):
        span = f"{len(sent)} groups between {sent[0]} and {sent[-1]}"
    return f"{span} of {len(projection.groups):,}"


def left_for_groups(projection: Projection) -> float | None:
    """Tokens for whole groups: what is available after the summary (if any)."""
    if projection.available is None:
        return None
    return max(0.0, projection.available - (projection.summary_cost or 0))


def stop_note(projection: Projection) -> str:
    """Why the selection stopped where it did (empty when everything was sent)."""
    if not projection.ok or projection.reason == "within_budget":
        return ""
    left = left_for_groups(projection)
    candidates = candidate_groups(projection)
    if projection.reason == "single_group_overflow" and candidates:
        newest = candidates[-1]
        return (
            f"the newest group ({newest.number}) needs {fmt(newest.tokens)} but only "
            f"{fmt(left)} are available, so it is sent whole and alone"
        )
    sent = [bar for bar in candidates if bar.state == "kept"]
    if left is None or not sent or not is_suffix(projection):
        return ""
    used = sum(bar.tokens for bar in sent)
    older = [bar for bar in candidates if bar.number < sent[0].number]
    if not older:
        return ""
    nxt = older[-1]
    return (
        f"group {nxt.number} would need {fmt(nxt.tokens)} more but only {fmt(left - used)} "
        "are left, so the selection stops there"
    )


def budget_line(projection: Projection) -> str:
    """'max_tokens 31 - system 3 - reserved_output 4 - safety_margin 2 = 22 for messages'."""
    b = projection.budget
    if projection.available is None:
        return (
            f"max_tokens {fmt(b.max_tokens)} · system prompt {fmt(b.system_cost)} · "
            f"reserved_output {fmt(b.reserved_output)} · safety_margin {fmt(b.safety_margin)}"
        )
    system = projection.system if projection.system is not None else b.system_cost
    return (
        f"max_tokens {fmt(b.max_tokens)} {MINUS} system {fmt(system)} {MINUS} reserved_output "
        f"{fmt(b.reserved_output)} {MINUS} safety_margin {fmt(b.safety_margin)} = "
        f"{fmt(projection.available)} for messages"
    )


def summary_text(projection: Projection) -> str:
    """The projection in a few plain lines: the numbers a test or a reader compares."""
    lines = [budget_line(projection)]
    if not projection.ok:
        lines.append(projection.problem)
        return "\n".join(lines)
    if projection.compaction_id is not None:
        lines.append(
            f"summary of {projection.compaction_id}: {fmt(projection.summary_cost)} tokens → "
            f"{fmt(left_for_groups(projection))} left for whole groups"
        )
    group_tokens = sum(bar.tokens for bar in projection.groups if bar.state in SENT)
    ids = projection.kept_ids
    details = [kept_range(projection), f"{fmt(group_tokens)} tokens"]
    if len(ids) > ID_LIMIT:
        details.insert(0, f"{len(ids):,} entries")
        shown = _id_span(ids)
    else:
        shown = kept_ids_text(ids)
    lines.append(f"kept {shown} ({', '.join(details)})")
    lines.append(
        f"reason {projection.reason} · request total {fmt(projection.total)} of "
        f"{fmt(projection.budget.max_tokens)}"
    )
    note = stop_note(projection)
    if note:
        lines.append(note)
    if not is_suffix(projection):
        lines.append("the kept groups are not a suffix: a newer group was dropped")
    return "\n".join(lines)


def deduction_rows(projection: Projection) -> list[tuple[str, str, str]]:
    """(item, tokens, left for messages) rows, from max_tokens down to the kept groups."""
    b = projection.budget
    if not projection.ok:
        return [
            ("max_tokens", fmt(b.max_tokens), "—"),
            ("system prompt", fmt(b.system_cost), "—"),
            ("reserved_output", fmt(b.reserved_output), "—"),
            ("safety_margin", fmt(b.safety_margin), "—"),
        ]
    system = projection.system or 0.0
    after_system = max(0.0, b.max_tokens - system)
    after_reserved = max(0.0, after_system - b.reserved_output)
    rows = [
        ("max_tokens", fmt(b.max_tokens), fmt(b.max_tokens)),
        ("system prompt", fmt(system), fmt(after_system)),
        ("reserved_output", fmt(b.reserved_output), fmt(after_reserved)),
        ("safety_margin", fmt(b.safety_margin), fmt(projection.available)),
    ]
    left = left_for_groups(projection)
    if projection.compaction_id is not None:
        rows.append(
            (f"summary of {projection.compaction_id}", fmt(projection.summary_cost), fmt(left))
        )
    sent = [bar for bar in projection.groups if bar.state in SENT]
    used = sum(bar.tokens for bar in sent)
    remaining = None if left is None else left - used
    rows.append((f"kept groups ({len(sent)})", fmt(used), fmt(remaining)))
    return rows


def deduction_html(projection: Projection) -> str:
    """The deduction table as HTML, with the request total underneath."""
    body = "".join(
        f"<tr><td>{esc(item)}</td><td style='text-align:right'>{esc(tokens)}</td>"
        f"<td style='text-align:right'>{esc(left)}</td></tr>"
        for item, tokens, left in deduction_rows(projection)
    )
    over = projection.total is not None and projection.total > projection.budget.max_tokens
    total = (
        f"<div>request total <b>{fmt(projection.total)}</b> of {fmt(projection.budget.max_tokens)}"
        + (" <span style='color:#ef6c00'>(over the window)</span>" if over else "")
        + "</div>"
        if projection.ok
        else ""
    )
    return (
        "<table><thead><tr><th style='text-align:left'>item</th>"
        "<th style='text-align:right'>tokens</th>"
        "<th style='text-align:right'>left for messages</th></tr></thead>"
        f"<tbody>{body}</tbody></table>{total}"
    )


def legend_html(states: Sequence[GroupState]) -> str:
    """Colour swatches for the states that occur."""
    seen = [s for s in STATE_COLOURS if s in states]
    return " ".join(
        f"<span style='display:inline-block;width:0.8em;height:0.8em;"
        f"background:{STATE_COLOURS[s]};margin:0 0.2em 0 0.6em'></span>{esc(s)}"
        for s in seen
    )


def bars_html(projection: Projection) -> str:
    """Per-group cost bars coloured by state: one row per group, or one strip when many."""
    if not projection.groups:
        return f"<div>{esc(projection.problem or 'no groups')}</div>"
    legend = legend_html([bar.state for bar in projection.groups])
    if len(projection.groups) > ROW_LIMIT:
        return _strip_html(projection) + f"<div>{legend}</div>"
    widest = max(bar.tokens for bar in projection.groups) or 1.0
    scale = min(16.0, 320.0 / widest)
    rows = "".join(
        f"<tr style='white-space:nowrap'><td>group {bar.number}</td>"
        f"<td><code>{esc(', '.join(bar.entry_ids))}</code></td>"
        f"<td style='text-align:right'>{fmt(bar.tokens)}</td>"
        f"<td><div title='{esc(STATE_NOTES[bar.state])}' style='width:{bar.tokens * scale:.0f}px;"
        f"height:0.9em;background:{STATE_COLOURS[bar.state]};border:1px solid #9e9e9e'></div></td>"
        f"<td>{esc(bar.state)}</td></tr>"
        for bar in projection.groups
    )
    return f"<table><tbody>{rows}</tbody></table><div>{legend}</div>"


def _strip_html(projection: Projection) -> str:
    total = sum(bar.tokens for bar in projection.groups) or 1.0
    segments = "".join(
        f"<div title='group {bar.number}: {fmt(bar.tokens)} tokens, {esc(bar.state)}' "
        f"style='flex:0 0 {100 * bar.tokens / total:.3f}%;height:1.6em;"
        f"background:{STATE_COLOURS[bar.state]};"
        f"filter:brightness({0.88 if bar.number % 2 else 1})'></div>"
        for bar in projection.groups
    )
    return (
        f"<div style='display:flex;width:100%;max-width:720px;border:1px solid #9e9e9e'>"
        f"{segments}</div>"
        f"<div>{len(projection.groups):,} groups, oldest on the left; sent: "
        f"{esc(kept_range(projection))}</div>"
    )
