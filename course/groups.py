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
    """The message entries of ``path`` as interactions, in path order, not copied.

    Takes the active path: entries, or JSON objects not yet entries (narrowed as
    ``parse_session_entry`` does; its ``SessionEntryError`` propagates). An interaction is a user
    message and every assistant and tool result message up to the next user message: an
    assistant message without tool calls does not end one, and a result with ``"isError": true``
    is a result like any other. Metadata and compaction entries belong to no interaction. An
    empty path has none: ``[]``.

    Every interaction satisfies ``check_tool_pairs`` on its own: call ids are unique within one
    interaction only, so a later one may reuse ``read-1``. Refuses with a ``ValueError``
    (``InteractionError``, naming the entry): an assistant or tool result message before any
    user message, a system message anywhere (the prompt travels as ``system_prompt``), and
    whatever ``check_tool_pairs`` refuses. A broken history is refused, never answered with
    fewer groups.

    ``path`` is left as it was: the caller's list keeps every entry, metadata too, in its order.
    Cost: linear in the path, without recursion (thousands of entries are fine). The chapter's
    nine entries give ``[u1, a1]``, ``[u2, a2]`` and ``[u3, calls, r-test, r-read, a3]`` (section
    "两个 tool result 仍属于 `u3` 开始的同一组").
    """
    groups: list[list[MessageEntry]] = []
    current: list[MessageEntry] = []
    for item in path:
        entry = item if isinstance(item, ENTRY_TYPES) else parse_session_entry(item)
        if not isinstance(entry, MessageEntry):
            continue
        role = entry.message.get("role")
        if role == "user":
            if current:
                groups.append(check_tool_pairs(current))
            current = [entry]
        elif role == "system":
            raise InteractionError(
                f"{entry.id}: system message inside the history; pass the prompt as "
                "system_prompt instead"
            )
        elif not current:
            raise InteractionError(
                f"{entry.id}: {role} message before any user message; an interaction starts "
                "at a user message"
            )
        else:
            current.append(entry)
    if current:
        groups.append(check_tool_pairs(current))
    return groups


def check_tool_pairs(entries: list[MessageEntry]) -> list[MessageEntry]:
    """``entries`` itself, once its four call/result relations hold by id alone.

    Takes one interaction, a user message first. Its calls are the
    ``{"type": "toolCall", "id": ...}`` blocks of its assistant messages; its results are its
    ``toolResult`` messages, whether ``isError`` is true or false. The relations: every call
    id is declared once in the interaction; every result's ``toolCallId`` names a call of the
    interaction; a call has at most one result; and by the interaction's end every call has its
    result. Position plays no part (a result may come before its call, results in any order),
    and only this interaction counts: an id used in another one is no concern here.

    Refuses with an ``InteractionError`` (a ``ValueError``) naming the call id, e.g. a result
    for ``unknown-1`` that no call declares. Where one input breaks two relations (the
    chapter's ``r-test`` answering ``unknown-1`` leaves ``test-1`` unanswered too), either may
    be named: no order between them is promised. Returns ``entries`` unchanged, the very list
    given. Cost: linear in the interaction. In the chapter's third group
    ``[u3, calls, r-test, r-read, a3]``, ``calls`` declares ``read-1`` and ``test-1``, answered in
    reverse order: it holds (section "两个 tool result 仍属于 `u3` 开始的同一组").
    """
    start = entries[0].id
    calls: dict[str, str] = {}
    results: dict[str, str] = {}
    for entry in entries:
        message = entry.message
        role = message.get("role")
        if role == "assistant":
            for block in message.get("content") or []:
                if not isinstance(block, Mapping) or block.get("type") != "toolCall":
                    continue
                call_id = block.get("id")
                if not isinstance(call_id, str):
                    raise InteractionError(f"{entry.id}: a tool call without a string id")
                if call_id in calls:
                    raise InteractionError(
                        f"{entry.id}: tool call {call_id} is declared twice in the interaction "
                        f"starting at {start} (first in {calls[call_id]})"
                    )
                calls[call_id] = entry.id
        elif role == "toolResult":
            call_id = message.get("toolCallId")
            if not isinstance(call_id, str):
                raise InteractionError(f"{entry.id}: a tool result without a string toolCallId")
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
    return entries


def group_interactions(path: Sequence[SessionEntry]) -> list[InteractionGroup]:
    """The interactions of ``path`` as ``InteractionGroup`` objects holding fresh copies.

    The same interactions, in the same order and with the same refusals, as
    ``split_interactions``. Every entry is a checked copy (the given ``parse_message_entry``
    makes one): the groups share no entry, message or content block with ``path``, so a change
    to a group changes nothing on the path. ``path`` is left as it was, its metadata entries
    included. Cost: linear in the path. The chapter's path gives groups whose ``entry_ids`` read
    ``[u1, a1]``, ``[u2, a2]`` and ``[u3, calls, r-test, r-read, a3]``.
    """
    return [
        InteractionGroup([parse_message_entry(entry) for entry in group])
        for group in split_interactions(path)
    ]
