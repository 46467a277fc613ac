"""Lab 11.2, first independent solution: one pass, groups closed at each user message."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from course.entries import (
    ENTRY_TYPES,
    MessageEntry,
    SessionEntry,
    parse_message_entry,
    parse_session_entry,
)
from course.groups import InteractionError, InteractionGroup


def split_interactions(path: Sequence[SessionEntry]) -> list[list[MessageEntry]]:
    out: list[list[MessageEntry]] = []
    for raw in path:
        entry = raw if isinstance(raw, ENTRY_TYPES) else parse_session_entry(raw)
        if not isinstance(entry, MessageEntry):
            continue
        role = entry.message["role"]
        if role == "system":
            raise InteractionError(f"{entry.id}: a system message does not belong in the path")
        if role == "user":
            if out:
                check_tool_pairs(out[-1])
            out.append([entry])
        elif not out:
            raise InteractionError(f"{entry.id}: no user message opens its interaction")
        else:
            out[-1].append(entry)
    if out:
        check_tool_pairs(out[-1])
    return out


def check_tool_pairs(entries: list[MessageEntry]) -> list[MessageEntry]:
    declared: dict[str, str] = {}
    answered: dict[str, str] = {}
    for entry in entries:
        message = entry.message
        if message["role"] == "assistant" and isinstance(message["content"], list):
            for block in message["content"]:
                if isinstance(block, Mapping) and block.get("type") == "toolCall":
                    if block["id"] in declared:
                        raise InteractionError(f"{entry.id}: call {block['id']} declared twice")
                    declared[block["id"]] = entry.id
        if message["role"] == "toolResult":
            call = message["toolCallId"]
            if call in answered:
                raise InteractionError(f"{entry.id}: call {call} already has a result")
            answered[call] = entry.id
    for call, where in answered.items():
        if call not in declared:
            raise InteractionError(f"{where}: result for unknown call {call}")
    for call, where in declared.items():
        if call not in answered:
            raise InteractionError(f"{where}: call {call} never gets a result")
    return entries


def group_interactions(path: Sequence[SessionEntry]) -> list[InteractionGroup]:
    groups = []
    for found in split_interactions(path):
        groups.append(InteractionGroup(entries=[parse_message_entry(e) for e in found]))
    return groups
