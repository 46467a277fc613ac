"""Chapter 11's renderers for what its functions return: entries, groups, projections, records.

Each only shows the value it is given (never groups, selects or resumes), so a learner's bug shows.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from course.display.views import View, esc, preformatted, stack, table

# the generic views, reached through ``show`` too in a notebook
from course.display.views import accepted_wrongly as accepted_wrongly
from course.display.views import grouped as grouped
from course.display.views import note as note
from course.display.views import number as number
from course.display.views import refused as refused
from course.locale import N_, ngettext
from course.locale import gettext as _
from course.sandboxed.untrusted import clip

Estimate = Callable[[dict[str, Any]], float]


def content_line(message: Mapping[str, Any]) -> str:
    """A message's content as one line: text blocks, and tool calls as ``name(arguments)``."""
    content = message.get("content")
    if isinstance(content, str):
        text = content
    else:
        parts = []
        for block in content or []:
            if block.get("type") == "text":
                parts.append(str(block.get("text", "")))
            elif block.get("type") == "toolCall":
                arguments = json.dumps(block.get("arguments", {}), ensure_ascii=False)
                parts.append(f"{block.get('name')}#{block.get('id')}({arguments})")
        text = " ".join(parts)
    if message.get("role") == "toolResult":
        text = f"[{message.get('toolCallId')}] {text}"
    return " ".join(text.split())


def id_list(ids: Sequence[str], limit: int = 16) -> str:
    """Entry ids as the edition lists them (``u2, a2`` or ``u2、a2``); a long list shows its
    two ends and how many there are."""
    if not ids:
        return _("(nothing)")
    if len(ids) <= limit:
        return _(", ").join(ids)
    half = limit // 2 - 2
    first, last = _(", ").join(ids[:half]), _(", ").join(ids[-half:])
    return _("{first} … {last} ({count} entries)").format(first=first, last=last, count=len(ids))


def entries(path: Sequence[Any], estimate_tokens: Estimate | None = None) -> View:
    """One row per entry: id, type or role, what it says, and its estimate when asked."""
    headers = [_("id"), _("kind"), _("content")] + ([_("tokens")] if estimate_tokens else [])
    rows = []
    for entry in path:
        cost = ""
        if entry.type == "message":
            kind, said = entry.message.get("role", "?"), clip(content_line(entry.message), 60)
            cost = number(estimate_tokens(entry.message)) if estimate_tokens else ""
        elif entry.type == "compaction":
            kind, said = "compaction", _("keeps from {id}").format(id=entry.first_kept_entry_id)
        else:
            kind, said = entry.type, clip(f"{entry.key} = {entry.value}", 60)
        rows.append([entry.id, kind, said] + ([cost] if estimate_tokens else []))
    return table(headers, rows)


def groups(found: Sequence[Any], estimate_tokens: Estimate | None = None) -> View:
    """``group N = [ids]`` per interaction group, with its summed estimate when asked."""
    lines = []
    for index, group in enumerate(found, start=1):
        ids = _(", ").join(group.entry_ids)
        if estimate_tokens:
            cost = number(sum(estimate_tokens(entry.message) for entry in group.entries))
            costed = _("group {number} = [{ids}]  ({tokens} tokens)")
            lines.append(costed.format(number=index, ids=ids, tokens=cost))
        else:
            lines.append(_("group {number} = [{ids}]").format(number=index, ids=ids))
    return preformatted("\n".join(lines) or _("(no groups)"))


DEDUCTIONS = (
    ("max_tokens", "max_tokens"),
    (N_("system prompt"), "system"),
    (N_("reserved_output"), "reserved_output"),
    (N_("safety_margin"), "safety_margin"),
)
"""The deduction table's rows: the label (the option's name) and the ``tokens`` field shown."""


def deductions(tokens: Any) -> View:
    """The chapter's deduction table: every number as the result's ``tokens`` gives it."""
    rows = [[_(label), number(getattr(tokens, attr))] for label, attr in DEDUCTIONS]
    rows.append([_("left for messages"), number(tokens.available_for_messages)])
    return table([_("item"), _("tokens")], rows)


def projection(result: Any, groups: Sequence[Any] | None = None) -> View:
    """A ``build_context`` result: where the tokens went, what was kept, and why."""
    tokens = result.tokens
    parts = [deductions(tokens)]
    if groups is not None:
        parts.append(bars(groups, result.kept_entry_ids))
    summary = [
        _("kept      {ids}").format(ids=id_list(result.kept_entry_ids)),
        _("reason    {reason}").format(reason=result.reason),
        _(
            "messages  {messages} of {available} available; request total {total} of {maximum}"
        ).format(
            messages=number(tokens.messages),
            available=number(tokens.available_for_messages),
            total=number(tokens.total),
            maximum=number(tokens.max_tokens),
        ),
    ]
    if getattr(result, "compaction_id", None):
        summary.append(_("resumed   from {id}'s summary").format(id=result.compaction_id))
    parts.append(preformatted("\n".join(summary)))
    return stack(parts)


RANGE = "\N{EN DASH}"
BAR_STATES = {
    "kept": ("█", "#2e7d32", N_("group {number} kept")),
    "cut inside": ("▒", "#ef6c00", N_("group {number} cut inside")),
    "left out": ("░", "#cfd8dc", N_("group {number} left out")),
}
"""Each state of a group's bar: its mark, its colour, and what it says of its group."""


def bars(found: Sequence[Any], kept_ids: Iterable[str], limit: int = 40) -> View:
    """Each group as a bar: kept (filled) or left out (hollow); many groups are bucketed."""
    kept = set(kept_ids)
    states = []
    for group in found:
        inside = [entry_id in kept for entry_id in group.entry_ids]
        states.append("kept" if all(inside) else ("cut inside" if any(inside) else "left out"))
    if len(found) <= limit:
        lines, cells = [], []
        for index, (group, state) in enumerate(zip(found, states, strict=True), start=1):
            width = min(len(group.entry_ids), 12)
            mark, colour, label = BAR_STATES[state]
            label = _(label).format(number=index)
            lines.append(f"{mark * width:<12} {label}")
            cells.append(
                f"<div style='display:flex;align-items:center;gap:0.5em'>"
                f"<div style='width:{width * 1.2}em;height:0.9em;background:{colour}'></div>"
                f"<span>{esc(label)}</span></div>"
            )
        nothing = _("(no groups)")
        return View("\n".join(lines) or nothing, "".join(cells) or esc(nothing))
    size = -(-len(found) // limit)
    buckets = [states[i : i + size] for i in range(0, len(found), size)]
    shares = [sum(s == "kept" for s in bucket) / len(bucket) for bucket in buckets]
    strip = "".join("█" if share == 1 else ("░" if share == 0 else "▒") for share in shares)
    kept_count = states.count("kept")
    left_out = len(found) - kept_count
    said = _("{groups} groups, {size} per cell: {kept} kept, {left_out} left out")
    note = said.format(groups=len(found), size=size, kept=kept_count, left_out=left_out)
    spans = [
        _("groups {first}\u2013{last}").format(
            first=i * size + 1, last=min((i + 1) * size, len(found))
        )
        for i in range(len(shares))
    ]
    strip_html = "".join(
        f"<div title='{esc(span)}' "
        f"style='width:0.6em;height:1.2em;background:{BAR_STATES['kept'][1]};"
        f"opacity:{0.15 + 0.85 * share:.2f}'></div>"
        for span, share in zip(spans, shares, strict=True)
    )
    html = f"<div style='display:flex;gap:1px'>{strip_html}</div><div>{esc(note)}</div>"
    return View(f"{strip}\n{note}", html)


def messages(sent: Sequence[Mapping[str, Any]]) -> View:
    """The messages a request would send, one per row."""
    rows = [[index, m.get("role"), clip(content_line(m), 70)] for index, m in enumerate(sent)]
    return table(["#", _("role"), _("content")], rows)


def text(message_: Mapping[str, Any]) -> View:
    """One message's content in full (a summary message, say)."""
    content = message_.get("content")
    return preformatted(content if isinstance(content, str) else content_line(message_))


def record(entry: Any) -> View:
    """An entry's fields in their declared order; a nested record (the summary) follows."""
    values = [
        (f.name, getattr(entry, f.name)) for f in dataclasses.fields(entry) if f.name != "type"
    ]
    rows = [[name, number(value)] for name, value in values if not dataclasses.is_dataclass(value)]
    nested = [value for _name, value in values if dataclasses.is_dataclass(value)]
    return stack([table([_("field"), _("value")], rows), *(summary(value) for value in nested)])


def summary(value: Any) -> View:
    """A summary's fields in their order (a dataclass or its JSON object); lists joined by ``;``."""
    if isinstance(value, Mapping):
        items = list(value.items())
    else:
        items = [(f.name, getattr(value, f.name)) for f in dataclasses.fields(value)]
    rows = [
        [name, _("; ").join(str(item) for item in content) or _("(none)")]
        if isinstance(content, list)
        else [name, content]
        for name, content in items
    ]
    return table([_("field"), _("items")], rows)


def chain(path: Sequence[Any]) -> View:
    """The path as ``u1 → a1 → …``, with each compaction's first kept entry pointed out."""
    said = _("{id}: parent {parent}, keeps from {first_kept}")
    lines = [" → ".join(entry.id for entry in path)] + [
        said.format(id=entry.id, parent=entry.parent_id, first_kept=entry.first_kept_entry_id)
        for entry in path
        if entry.type == "compaction"
    ]
    return preformatted("\n".join(lines))


def outcomes(rows: Sequence[tuple[str, object]]) -> View:
    """Budgets against what the function returned: consecutive equal outcomes share a row."""
    merged: list[list[str]] = []
    for label, outcome in rows:
        shown = str(outcome)
        if merged and merged[-1][1] == shown:
            merged[-1][0] = merged[-1][0].split(RANGE)[0] + RANGE + label
        else:
            merged.append([label, shown])
    return table([_("budget"), _("outcome")], merged)


def budget_rows(rows: Sequence[Any]) -> View:
    """What ``budget_report`` returned: each group's ids, cost and status."""
    return table(
        [_("group"), _("entries"), _("tokens"), _("status")],
        [
            [index, _(", ").join(row.entry_ids), number(row.tokens), row.status]
            for index, row in enumerate(rows, start=1)
        ],
    )


def import_report(report: Any, shown: int = 6) -> View:
    """An import report: how many items of each kind, then the first repairs in full."""
    counts = report.counts()
    rows = [[kind, count] for kind, count in sorted(counts.items())]
    parts = [table([_("kind"), _("how many")], rows)]
    repairs = list(report.repairs)
    if repairs:
        listed = [[item.line, item.id, item.kind, clip(item.message, 90)] for item in repairs]
        title = _("repairs (first {shown} of {count})") if len(repairs) > shown else _("repairs")
        title = title.format(shown=shown, count=len(repairs))
        headers = [_("line"), _("id"), _("kind"), _("message")]
        parts.append(table(headers, listed[:shown], title=title))
    return stack(parts)


def interactions(found: Sequence[Any], estimate_tokens: Estimate) -> View:
    """Counts over groups: how many, tool calls per interaction, and the largest one."""
    if not found:
        return note(_("no interactions"))
    calls = sorted(
        sum(
            1
            for entry in group.entries
            if entry.message.get("role") == "assistant"
            for block in entry.message.get("content") or []
            if block.get("type") == "toolCall"
        )
        for group in found
    )
    costs = [sum(estimate_tokens(entry.message) for entry in group.entries) for group in found]
    largest = max(range(len(found)), key=costs.__getitem__)
    biggest = found[largest]
    heaviest = max(biggest.entries, key=lambda entry: estimate_tokens(entry.message))
    starts = _("group {number}, starting at {id}")
    size = _("{messages} messages, {tokens} tokens")
    said = _("{id} ({role}), {tokens} tokens: {content}")
    rows: list[list[object]] = [
        [_("interactions"), len(found)],
        [_("messages"), sum(len(group.entries) for group in found)],
        [_("tool calls"), sum(calls)],
        [
            _("tool calls per interaction"),
            _("median {median}, most {most}").format(median=calls[len(calls) // 2], most=calls[-1]),
        ],
        [_("tokens in all (estimated)"), number(sum(costs))],
        [_("largest interaction"), starts.format(number=largest + 1, id=biggest.entry_ids[0])],
        [_("its size"), size.format(messages=len(biggest.entries), tokens=number(costs[largest]))],
        [
            _("its largest message"),
            said.format(
                id=heaviest.id,
                role=heaviest.message.get("role"),
                tokens=number(estimate_tokens(heaviest.message)),
                content=clip(content_line(heaviest.message), 50),
            ),
        ],
    ]
    return table(["", ""], rows)


# --------------------------------------------------------------------------- lines a cell prints


def accepted(label: str, entry: Any) -> View:
    """An input the code under test accepted, as it should: its label and the record's parent."""
    return note(_("{label}: accepted, parent {parent}").format(label=label, parent=entry.parent_id))


def store_holds(count: int) -> str:
    """How many entries a store holds after a refused append."""
    return ngettext(
        "the store still holds {count} entry", "the store still holds {count} entries", count
    ).format(count=count)


def path_counts(entries: Sequence[Any], path: Sequence[Any]) -> str:
    """How many entries a store holds and how many of them the active path has."""
    return ngettext(
        "{entries} entry, {path} on the active path",
        "{entries} entries, {path} on the active path",
        len(entries),
    ).format(entries=len(entries), path=len(path))


def resumed_from(result: Any) -> str:
    """Which compaction a ``build_context`` result resumed from and how many entries it kept."""
    count = len(result.kept_entry_ids)
    return ngettext(
        "resumed from {id}: {count} entry kept", "resumed from {id}: {count} entries kept", count
    ).format(id=result.compaction_id, count=count)


def sections(names: Iterable[str]) -> str:
    """The section headings of a rendered summary (``Goal:``…), as one line of their names."""
    return _("sections: {names}").format(names=_(", ").join(name.rstrip(":") for name in names))


def kept_from(label: str, result: Any) -> str:
    """What a ``build_context`` result kept: how many entries, the first, and their tokens."""
    count = len(result.kept_entry_ids)
    return ngettext(
        "{label}: {count} entry from {first}, {tokens} tokens",
        "{label}: {count} entries from {first}, {tokens} tokens",
        count,
    ).format(
        label=label,
        count=count,
        first=result.kept_entry_ids[0] if count else _("(nothing)"),
        tokens=grouped(result.tokens.messages),
    )
