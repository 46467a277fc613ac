"""Lab 11.2 · Interaction groups: a user message and all that follows it, kept or dropped whole."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from .entries import (
    ENTRY_TYPES,
    MessageEntry,
    SessionEntry,
    parse_message_entry,
    parse_session_entry,
)
from .fields import PrintableError


class InteractionError(PrintableError):
    """The path breaks an interaction rule; the message names the entry or call id."""


@dataclass(frozen=True)
class InteractionGroup:
    """A user message and everything up to the next one: kept or dropped as a whole."""

    entries: list[MessageEntry]

    @property
    def entry_ids(self) -> list[str]:
        return [entry.id for entry in self.entries]


def split_interactions(path: Sequence[SessionEntry]) -> list[list[MessageEntry]]:
    """The message entries of ``path`` split into interactions, in path order, not copied.

    A user message closes the current group and opens the next. Assistant and tool result
    messages join the open group whatever they hold: an assistant message without tool calls
    does not close it, and a tool result with ``"isError": true`` is a result like any other
    (it stays in its group, paired by its ``toolCallId``). An assistant or tool result
    message before any user message is an ``InteractionError``, and so is a system message
    anywhere on the path (the prompt travels as ``system_prompt``). Metadata and compaction
    entries are skipped: left out of the groups, and left where they are in ``path`` (never
    remove anything from the caller's list). An empty path has no groups: ``[]``.

    Each group is checked with ``check_tool_pairs`` as it closes, on its own: call ids are
    unique within one interaction only, so a later interaction may reuse a call id (say
    ``read-1``) that an earlier one used, and such a path is valid. An object that is not yet
    an entry is narrowed with ``parse_session_entry`` first (its ``SessionEntryError``
    propagates). Every refusal is a ``ValueError``.
    """
    groups: list[list[MessageEntry]] = []
    current: list[MessageEntry] | None = None
    for item in path:
        entry = item if isinstance(item, ENTRY_TYPES) else parse_session_entry(item)
        if not isinstance(entry, MessageEntry):
            continue
        role = entry.message.get("role")
        if role == "system":
            raise InteractionError(
                f"{entry.id}: a system message cannot be on the path "
                "(the prompt travels as system_prompt)"
            )
        if role == "user":
            if current is not None:
                groups.append(check_tool_pairs(current))
            current = [entry]
            continue
        if current is None:
            raise InteractionError(f"{entry.id}: {role} message before any user message")
        current.append(entry)
    if current is not None:
        groups.append(check_tool_pairs(current))
    return groups


def check_tool_pairs(entries: list[MessageEntry]) -> list[MessageEntry]:
    """Check one group's four call/result relations by id alone, in any order; return it.

    ``entries`` is one interaction, a user message first. Its calls are the ``{"type":
    "toolCall", "id": ...}`` blocks of its assistant messages; its results are its
    ``toolResult`` messages, whether ``isError`` is true or false. Every tool call id is
    declared once in this group; every result's ``toolCallId`` names a call of this group (a
    result may come before its call); a call has at most one result; and when the group ends
    every call has its result. Only this group counts: an id used in another interaction is
    no concern here. Return ``entries`` itself. Errors are ``InteractionError`` (a
    ``ValueError``) naming the entry, the call id and the group's first entry.
    """
    if not entries:
        return entries
    first = entries[0].id
    calls: dict[str, str] = {}
    for entry in entries:
        message = entry.message
        if message.get("role") != "assistant":
            continue
        for block in message.get("content", []):
            if isinstance(block, Mapping) and block.get("type") == "toolCall":
                call_id = block["id"]
                if call_id in calls:
                    raise InteractionError(
                        f"{entry.id}: tool call {call_id} declared twice in the group "
                        f"of {first} (first in {calls[call_id]})"
                    )
                calls[call_id] = entry.id
    answered: dict[str, str] = {}
    for entry in entries:
        message = entry.message
        if message.get("role") != "toolResult":
            continue
        call_id = message["toolCallId"]
        if call_id not in calls:
            raise InteractionError(
                f"{entry.id}: tool result for {call_id}, a call not declared in the group "
                f"of {first}"
            )
        if call_id in answered:
            raise InteractionError(
                f"{entry.id}: second result for tool call {call_id} in the group of {first} "
                f"(first in {answered[call_id]})"
            )
        answered[call_id] = entry.id
    for call_id, owner in calls.items():
        if call_id not in answered:
            raise InteractionError(
                f"{owner}: tool call {call_id} has no result in the group of {first}"
            )
    return entries


def group_interactions(path: Sequence[SessionEntry]) -> list[InteractionGroup]:
    """The interactions of ``path`` as groups of fresh copies (``split_interactions``, copied).

    Copy each entry with ``parse_message_entry`` so that the groups share nothing with the
    path (no entry, no message, no content block) and every message they hold has been
    checked. ``path`` is left as it was, its metadata entries included.
    """
    return [
        InteractionGroup([parse_message_entry(entry) for entry in group])
        for group in split_interactions(path)
    ]
