"""Lab 11.2, second independent solution: boundaries first, then the pairs by set arithmetic."""

from __future__ import annotations

from collections.abc import Sequence

from course.entries import MessageEntry, SessionEntry, parse_message_entry, parse_session_entry
from course.groups import InteractionError, InteractionGroup


def split_interactions(path: Sequence[SessionEntry]) -> list[list[MessageEntry]]:
    messages = []
    for item in path:
        entry = item if hasattr(item, "type") else parse_session_entry(item)
        if entry.type == "message":
            messages.append(entry)
    starts = [i for i, m in enumerate(messages) if m.message["role"] == "user"]
    for m in messages:
        if m.message["role"] == "system":
            raise InteractionError(f"{m.id}: system message in the path")
    if messages and (not starts or starts[0] != 0):
        raise InteractionError(f"{messages[0].id}: the path must start with a user message")
    ends = (starts[1:] + [len(messages)]) if starts else []
    groups = [messages[a:b] for a, b in zip(starts, ends, strict=True)]
    return [check_tool_pairs(group) for group in groups]


def check_tool_pairs(entries: list[MessageEntry]) -> list[MessageEntry]:
    calls: list[tuple[str, str]] = []
    results: list[tuple[str, str]] = []
    for e in entries:
        role = e.message["role"]
        if role == "assistant":
            content = e.message["content"]
            blocks = content if isinstance(content, list) else []
            calls += [(b["id"], e.id) for b in blocks if b.get("type") == "toolCall"]
        elif role == "toolResult":
            results.append((e.message["toolCallId"], e.id))
    call_ids = [c for c, _ in calls]
    result_ids = [r for r, _ in results]
    for call_id, owner in calls:
        if call_ids.count(call_id) > 1:
            raise InteractionError(f"{owner}: tool call {call_id} appears more than once")
    for call_id, owner in results:
        if result_ids.count(call_id) > 1:
            raise InteractionError(f"{owner}: more than one result for {call_id}")
        if call_id not in call_ids:
            raise InteractionError(f"{owner}: {call_id} answers no call of this interaction")
    for call_id, owner in calls:
        if call_id not in result_ids:
            raise InteractionError(f"{owner}: {call_id} is left without a result")
    return entries


def group_interactions(path: Sequence[SessionEntry]) -> list[InteractionGroup]:
    return list(
        map(lambda g: InteractionGroup(list(map(parse_message_entry, g))), split_interactions(path))
    )
