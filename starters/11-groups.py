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
from .labs import LabNotImplemented


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
    raise LabNotImplemented(
        "11.2",
        "interaction groups",
        "split_interactions",
        "a user message closes the open group and opens the next; check each group as it closes",
    )


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
    raise LabNotImplemented(
        "11.2",
        "interaction groups",
        "check_tool_pairs",
        "pair calls and results by id: each call once, each result for a call, none left open",
    )


def group_interactions(path: Sequence[SessionEntry]) -> list[InteractionGroup]:
    """The interactions of ``path`` as groups of fresh copies (``split_interactions``, copied).

    Copy each entry with ``parse_message_entry`` so that the groups share nothing with the
    path (no entry, no message, no content block) and every message they hold has been
    checked. ``path`` is left as it was, its metadata entries included.
    """
    raise LabNotImplemented(
        "11.2",
        "interaction groups",
        "group_interactions",
        "split_interactions, then copy every entry with parse_message_entry",
    )
