"""The chapter's interaction rules on every branch of an imported tree, and the repair policies."""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from course.locale import gettext as _
from course.locale import ngettext

from .pi_mapping import MESSAGE_KEY, Draft, data_only, fresh_id
from .pi_report import REPAIR_KINDS, PiImportError, Policy, ReportItem, SplitTurn, sorted_items

SYNTHETIC_RESULT = (
    "No result provided (synthesised on import: the Pi session records no result for this call)"
)
SYNTHETIC_USER = "(synthesised on import: the Pi session has no user message before this point)"
TURN_CONTEXT_MARK = "**Turn Context (split turn):**"
"""What Pi writes between a split turn's history summary and its turn-prefix summary."""
MAX_ROUNDS = 4
"""Repairs settle in two rounds (``drop`` may orphan results on other branches); more is a bug."""


@dataclass(frozen=True)
class _Call:
    entry: Draft
    index: int
    call_id: str
    name: str
    closer: str = ""
    """The next assistant message on the path: a missing result goes right before it."""


@dataclass(frozen=True)
class _State:
    """What one path has seen up to an entry: the open interaction's calls and results."""

    start: str = ""
    """The user message that opens the interaction; "" before any user message on the path."""
    pending: tuple[_Call, ...] = ()
    answered: frozenset[str] = frozenset()
    declared: dict[str, str] = field(default_factory=dict)
    """Call id → the assistant message declaring it (copied, never changed, once shared)."""
    renames: dict[str, str] = field(default_factory=dict)
    """A call id declared again → the new id its results answer (the latest declaration's)."""


@dataclass
class _Plan:
    """The repairs one round decided, applied together by ``_apply``."""

    items: list[ReportItem] = field(default_factory=list)
    before: dict[str, list[Draft]] = field(default_factory=dict)
    after: dict[str, list[Draft]] = field(default_factory=dict)
    removed_calls: dict[str, set[int]] = field(default_factory=dict)
    renamed_calls: dict[str, dict[int, str]] = field(default_factory=dict)
    renamed_results: dict[str, str] = field(default_factory=dict)
    as_data: dict[str, str] = field(default_factory=dict)
    first_kept: dict[str, str] = field(default_factory=dict)


def repair(
    drafts: list[Draft], policy: Policy, split_turn: SplitTurn = "turn-start"
) -> tuple[list[Draft], list[ReportItem]]:
    """Apply ``policy`` until every path meets the chapter's rules (``strict`` raises
    ``PiImportError`` listing every place); a split turn's kept range starts at ``split_turn``."""
    used = {draft.id for draft in drafts}
    if policy == "strict":
        problems = _Rules(drafts, policy, used).run().items
        cuts = _compaction_plan(drafts, policy, split_turn)
        problems += [item for item in cuts.items if item.kind in REPAIR_KINDS]
        if problems:
            raise PiImportError(list(sorted_items(problems)))
        return _apply(drafts, cuts), cuts.items
    items: list[ReportItem] = []
    for _round in range(MAX_ROUNDS):
        plan = _Rules(drafts, policy, used).run()
        if not plan.items:
            break
        drafts = _apply(drafts, plan)
        items += plan.items
    else:  # pragma: no cover - each round removes what the previous one left
        raise RuntimeError(f"repair {policy!r} did not settle in {MAX_ROUNDS} rounds")
    plan = _compaction_plan(drafts, policy, split_turn)
    return _apply(drafts, plan), items + plan.items


class _Rules:
    """One pass over the tree in file order (parents first), one path state per entry."""

    def __init__(self, drafts: list[Draft], policy: Policy, used: set[str]) -> None:
        self.drafts = drafts
        self.policy = policy
        self.used = used
        self.plan = _Plan()
        self.parents = {d.parent_id for d in drafts}
        self.synthesised: dict[str, int] = {}
        self.closed: set[tuple[str, str]] = set()
        """(closer, call id): a result placed before ``closer`` serves every path through it."""

    def run(self) -> _Plan:
        states: dict[str, _State] = {}
        for draft in self.drafts:
            state = self.visit(draft, states.get(draft.parent_id or "", _State()))
            states[draft.id] = state
            if draft.id not in self.parents and state.pending:
                self.unanswered(state, draft, at_end=True)
        return self.plan

    def note(self, draft: Draft, kind: str, message: str) -> None:
        self.plan.items.append(ReportItem(draft.line, draft.id, kind, message))

    def visit(self, draft: Draft, state: _State) -> _State:
        role = draft.role
        if role == "user":
            if state.pending:
                self.unanswered(state, draft, at_end=False)
            return _State(start=draft.id)
        if role == "assistant":
            if not state.start:
                opened = self.before_user(draft)
                if opened is None:
                    return state  # the message is data now: the path is as it was
                state = opened
            closed = tuple(replace(c, closer=c.closer or draft.id) for c in state.pending)
            return self.calls(draft, replace(state, pending=closed))
        if role == "toolResult":
            return self.result(draft, state)
        return state

    def before_user(self, draft: Draft) -> _State | None:
        """The path's state once a user message opens it; None if ``draft`` is data now."""
        text = _("assistant message before any user message on its path")
        state: _State | None = _State(start=draft.id)
        if self.policy == "drop":
            self.plan.as_data[draft.id] = "before any user message"
            text = _(
                "assistant message before any user message on its path; kept as data (metadata "
                "key {key})"
            ).format(key=MESSAGE_KEY)
            state = None
        elif self.policy == "synthesize":
            message = {"role": "user", "content": SYNTHETIC_USER}
            new = self.new_draft(draft, f"{draft.id}~user", message)
            self.plan.before.setdefault(draft.id, []).append(new)
            text = _(
                "assistant message before any user message on its path; synthesised user message "
                "{new} before it"
            ).format(new=new.id)
            state = _State(start=new.id)
        self.note(draft, "before_user", text)
        return state

    def calls(self, draft: Draft, state: _State) -> _State:
        pending = list(state.pending)
        declared = dict(state.declared)
        renames = dict(state.renames)
        for index, block in enumerate(draft.entry["message"]["content"]):
            if block["type"] != "toolCall":
                continue
            call_id: str = block["id"]
            if call_id in declared:
                new_id = fresh_id(f"{call_id}~2", set(declared))
                first = declared[call_id]
                if self.policy == "strict":
                    text = _(
                        "tool call id {call} is declared again in the interaction starting at "
                        "{start} (first in {first})"
                    )
                else:
                    text = _(
                        "tool call id {call} is declared again in the interaction starting at "
                        "{start} (first in {first}); renamed {new}, and so are the results that "
                        "follow for it"
                    )
                    self.plan.renamed_calls.setdefault(draft.id, {})[index] = new_id
                text = text.format(call=call_id, start=state.start, first=first, new=new_id)
                renames[call_id] = new_id  # strict too: its results answer the new id
                self.note(draft, "duplicate_call", text)
                call_id = new_id
            declared[call_id] = draft.id
            pending.append(_Call(draft, index, call_id, block["name"]))
        return replace(state, pending=tuple(pending), declared=declared, renames=renames)

    def result(self, draft: Draft, state: _State) -> _State:
        original: str = draft.entry["message"]["toolCallId"]
        call_id = state.renames.get(original, original)
        match = next((c for c in state.pending if c.call_id == call_id), None)
        if match is not None:
            if call_id != original and self.policy != "strict":
                self.plan.renamed_results[draft.id] = call_id
            return replace(
                state,
                pending=tuple(c for c in state.pending if c is not match),
                answered=state.answered | {call_id},
            )
        if not state.start:
            text = _("result for tool call {call} before any user message on its path")
        elif call_id in state.answered:
            text = _("second result for tool call {call} in the interaction starting at {start}")
        else:
            text = _(
                "result for tool call {call}, which no assistant message of the interaction "
                "starting at {start} declares"
            )
        text = text.format(call=original, start=state.start)
        if self.policy != "strict":
            self.plan.as_data[draft.id] = "orphan tool result"
            text += _("; kept as data (metadata key {key})").format(key=MESSAGE_KEY)
        self.note(draft, "orphan_result", text)
        return state

    def unanswered(self, state: _State, anchor: Draft, *, at_end: bool) -> None:
        where = (
            _("tool call {call} ({name}) has no result before its path ends (at {anchor})")
            if at_end
            else _(
                "tool call {call} ({name}) has no result before the interaction ends at {anchor}"
            )
        )
        for call in state.pending:
            assistant = call.entry
            if call.closer and self.policy == "synthesize":
                if (call.closer, call.call_id) in self.closed:
                    continue  # unanswered on another branch below the same reply: one result
                self.closed.add((call.closer, call.call_id))
            text = where.format(call=call.call_id, name=call.name, anchor=anchor.id)
            if assistant.stop_reason not in ("", "toolUse"):
                text += _("; the assistant message stopped with {stop!r}").format(
                    stop=assistant.stop_reason
                )
            if self.policy == "synthesize":
                message = {
                    "role": "toolResult",
                    "toolCallId": call.call_id,
                    "toolName": call.name,
                    "content": [{"type": "text", "text": SYNTHETIC_RESULT}],
                    "isError": True,
                }
                number = self.synthesised[assistant.id] = self.synthesised.get(assistant.id, 0) + 1
                new = self.new_draft(assistant, f"{assistant.id}~result{number}", message)
                if call.closer:  # as Pi places it: after the call's results, before the next reply
                    self.plan.before.setdefault(call.closer, []).append(new)
                    text += _("; synthesised result {new}, placed before {closer}").format(
                        new=new.id, closer=call.closer
                    )
                else:
                    chain = self.plan.after if at_end else self.plan.before
                    chain.setdefault(anchor.id, []).append(new)
                    text += _("; synthesised result {new}").format(new=new.id)
            elif self.policy == "drop":
                removed = self.plan.removed_calls.setdefault(assistant.id, set())
                if call.index in removed:
                    continue  # unanswered on another branch too: one removal, one item
                removed.add(call.index)
                text += _("; the call is removed from the message")
            self.note(assistant, "unanswered_call", text)

    def new_draft(self, near: Draft, base: str, message: dict[str, Any]) -> Draft:
        """A message entry the import adds; its parent is set when it is placed."""
        entry = {
            "type": "message",
            "id": fresh_id(base, self.used),
            "parentId": None,
            "timestamp": near.entry["timestamp"],
            "message": message,
        }
        return Draft(near.line, entry)


class _Path:
    """A depth-first walk's path from the root, indexed so a compaction's questions are lookups."""

    def __init__(self) -> None:
        self.entries: list[Draft] = []
        self.where: dict[str, int] = {}
        self.messages: list[int] = []
        self.users: list[int] = []

    def push(self, draft: Draft) -> None:
        self.where[draft.id] = len(self.entries)
        if draft.role:
            self.messages.append(len(self.entries))
        if draft.role == "user":
            self.users.append(len(self.entries))
        self.entries.append(draft)

    def pop(self) -> None:
        draft = self.entries.pop()
        del self.where[draft.id]
        for positions in (self.messages, self.users):
            if positions and positions[-1] == len(self.entries):
                positions.pop()

    def first(self, positions: list[int], start: int) -> Draft | None:
        """The first entry of ``positions`` (``messages`` or ``users``) at or after ``start``."""
        found = bisect_left(positions, start)
        return self.entries[positions[found]] if found < len(positions) else None

    def last_user(self, before: int) -> Draft | None:
        found = bisect_left(self.users, before)
        return self.entries[self.users[found - 1]] if found else None

    def count_messages(self, start: int, stop: int) -> int:
        return bisect_left(self.messages, stop) - bisect_left(self.messages, start)


def _compactions_on_paths(drafts: Sequence[Draft]) -> Iterator[tuple[Draft, _Path]]:
    """Each compaction with the path above it (root first), walking the tree depth first once."""
    ids = {draft.id for draft in drafts}
    children: dict[str | None, list[Draft]] = {}
    for draft in drafts:
        parent = draft.parent_id if draft.parent_id in ids else None
        children.setdefault(parent, []).append(draft)
    path = _Path()
    stack: list[Draft | None] = [*reversed(children.get(None, []))]
    while stack:
        visit = stack.pop()
        if visit is None:  # every entry below it is done
            path.pop()
            continue
        if visit.entry["type"] == "compaction":
            yield visit, path
        path.push(visit)
        stack.append(None)
        stack.extend(reversed(children.get(visit.id, [])))


def _compaction_plan(drafts: Sequence[Draft], policy: Policy, split_turn: SplitTurn) -> _Plan:
    """Point every compaction's first kept id at a user message on its path before it."""
    plan = _Plan()
    for draft, path in _compactions_on_paths(drafts):
        target = draft.entry["firstKeptEntryId"]
        position = path.where.get(target)
        if position is not None and path.entries[position].role == "user":
            continue
        if position is not None:
            first = path.first(path.messages, position)
            if first is not None and first.role == "user":
                plan.first_kept[draft.id] = first.id
                text = _(
                    "first kept entry {target} is not a message; the kept range starts at the "
                    "user message {user} that follows it, as in Pi's context"
                ).format(target=target, user=first.id)
                plan.items.append(ReportItem(draft.line, draft.id, "converted", text))
                continue
            turn = path.last_user(position)
            later = path.first(path.users, position)
            if first is not None and (turn or later):
                plan.first_kept[draft.id], item = _split_turn(draft, path, turn, later, split_turn)
                plan.items.append(item)
                continue
            chosen = turn or later
            text = _(
                "first kept entry {target} is not a user message, so it starts no interaction"
            ).format(target=target)
        else:
            chosen = path.last_user(len(path.entries))
            text = _("first kept entry {target} is not on its path before it")
            if not target:
                text = _("has no first kept entry (Pi keeps nothing from before it)")
            text = text.format(target=target)
        if policy != "strict":
            if chosen is None:
                plan.as_data[draft.id] = "no user message before the compaction"
                text += _(
                    "; no user message precedes it, kept as data (metadata key pi.compaction)"
                )
            else:
                plan.first_kept[draft.id] = chosen.id
                text += _("; first kept entry is now {user}").format(user=chosen.id)
        plan.items.append(ReportItem(draft.line, draft.id, "compaction_cut", text))
    return plan


def _split_turn(
    compaction: Draft, path: _Path, turn: Draft | None, later: Draft | None, choice: SplitTurn
) -> tuple[str, ReportItem]:
    """The first kept id for a compaction whose kept entry is in the middle of a turn."""
    target = compaction.entry["firstKeptEntryId"]
    position = path.where[target]
    role = path.entries[position].role
    if (choice == "turn-start" and turn is not None) or later is None:
        assert turn is not None
        count, chosen = path.count_messages(path.where[turn.id], position), turn.id
        text = ngettext(
            "first kept entry {target} ({role}) is in the middle of a turn that {turn} starts; "
            "the kept range starts at {turn}, so the turn's first {count} message is sent as well",
            "first kept entry {target} ({role}) is in the middle of a turn that {turn} starts; "
            "the kept range starts at {turn}, so the turn's first {count} messages are sent as "
            "well",
            count,
        )
        markdown = (compaction.source or {}).get("summary")
        if isinstance(markdown, str) and TURN_CONTEXT_MARK in markdown:
            text += _("; Pi's summary holds that part of the turn in its Turn Context")
        else:
            text += _("; Pi's summary has no Turn Context for this turn")
        if choice == "next-user":
            text += _(" (no user message follows it before the compaction)")
    else:
        count, chosen = path.count_messages(position, path.where[later.id]), later.id
        text = ngettext(
            "first kept entry {target} ({role}) is in the middle of a turn; the kept range starts "
            "at the next user message {later}, so the turn is left to the summary and its last "
            "{count} message, which Pi sends, is not sent",
            "first kept entry {target} ({role}) is in the middle of a turn; the kept range starts "
            "at the next user message {later}, so the turn is left to the summary and its last "
            "{count} messages, which Pi sends, are not sent",
            count,
        )
        if turn is not None:
            text += _("; the turn starts at {turn}")
        elif choice == "turn-start":
            text += _(" (no user message starts the turn)")
    turn_id, later_id = (turn.id if turn else ""), (later.id if later else "")
    text = text.format(target=target, role=role, turn=turn_id, later=later_id, count=count)
    return chosen, ReportItem(compaction.line, compaction.id, "split_turn", text)


def _apply(drafts: list[Draft], plan: _Plan) -> list[Draft]:
    """The drafts with one round's repairs: new entries chained in, messages changed."""
    out: list[Draft] = []
    for draft in drafts:
        parent = draft.parent_id
        before, after = plan.before.get(draft.id, ()), plan.after.get(draft.id, ())
        for new in (*before, _changed(draft, plan), *after):
            if new.parent_id != parent:
                new = replace(new, entry={**new.entry, "parentId": parent})
            out.append(new)
            parent = new.id
    return out


def _changed(draft: Draft, plan: _Plan) -> Draft:
    entry = draft.entry
    if draft.id in plan.as_data:
        assert draft.source is not None
        kind = draft.source.get("type")
        key = MESSAGE_KEY if kind == "message" else f"pi.{kind}"
        value = data_only(draft.source, plan.as_data[draft.id])
        common = {k: entry[k] for k in ("id", "parentId", "timestamp")}
        return replace(draft, entry={"type": "metadata", **common, "key": key, "value": value})
    if draft.id in plan.first_kept:
        return replace(draft, entry={**entry, "firstKeptEntryId": plan.first_kept[draft.id]})
    removed = plan.removed_calls.get(draft.id, set())
    renamed = plan.renamed_calls.get(draft.id, {})
    if removed or renamed:
        content = [
            {**block, "id": renamed[index]} if index in renamed else block
            for index, block in enumerate(entry["message"]["content"])
            if index not in removed
        ]
        message = {**entry["message"], "content": content}
        return replace(draft, entry={**entry, "message": message})
    if draft.id in plan.renamed_results:
        message = {**entry["message"], "toolCallId": plan.renamed_results[draft.id]}
        return replace(draft, entry={**entry, "message": message})
    return draft
