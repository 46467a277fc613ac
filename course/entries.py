"""Chapter 10's session entries (message, metadata) and the strict parser every entry crosses."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal, TypeAlias

from course.locale import gettext as _

from .fastpath import fast_message_entry, fast_message_fields
from .fields import FieldReader, JsonValue, SessionEntryError, copy_json, kind_name
from .messages import Message, parse_message
from .summary import (
    CompactionEntry,
    CompactionSummary,
    parse_compaction_entry,
    parse_summary,
    summary_to_json,
)


@dataclass(frozen=True, slots=True)
class MessageEntry:
    """A message in the session tree."""

    id: str
    parent_id: str | None
    timestamp: int | float
    message: Message
    type: Literal["message"] = "message"


@dataclass(frozen=True, slots=True)
class MetadataEntry:
    """A key/value fact in the session tree (model changes, labels); never sent to a model."""

    id: str
    parent_id: str | None
    timestamp: int | float
    key: str
    value: JsonValue
    type: Literal["metadata"] = "metadata"


SessionEntry: TypeAlias = MessageEntry | MetadataEntry | CompactionEntry
ENTRY_TYPES = (MessageEntry, MetadataEntry, CompactionEntry)

_COMMON = ("type", "id", "parentId", "timestamp")


def parse_session_entry(value: object) -> SessionEntry:
    """Strictly narrow an untrusted object (or an entry) to a fresh, unshared ``SessionEntry``."""
    fast = _fast(value)
    if fast is not None:
        return fast
    if isinstance(value, ENTRY_TYPES):
        value = entry_to_json(value)
    if not isinstance(value, Mapping):
        raise SessionEntryError(
            "entry: " + _("must be an object, got {kind}").format(kind=kind_name(value))
        )
    r = FieldReader.of(value)
    if "id" in value:
        r.string(value["id"], ".id", non_empty=True)
    kind = value.get("type")
    if kind == "message":
        e = r.mapping(value, "", _COMMON + ("message",))
        return MessageEntry(
            id=r.string(e["id"], ".id", non_empty=True),
            parent_id=r.parent_id(e["parentId"], nullable=True),
            timestamp=r.number(e["timestamp"], ".timestamp"),
            message=parse_message(r, e["message"], ".message"),
        )
    if kind == "metadata":
        e = r.mapping(value, "", _COMMON + ("key", "value"))
        return MetadataEntry(
            id=r.string(e["id"], ".id", non_empty=True),
            parent_id=r.parent_id(e["parentId"], nullable=True),
            timestamp=r.number(e["timestamp"], ".timestamp"),
            key=r.string(e["key"], ".key", non_empty=True),
            value=r.json(e["value"], ".value"),
        )
    if kind == "compaction":
        return parse_compaction_entry(value)
    if "type" not in value:
        raise r.fail(".type", _("missing field"))
    raise r.fail(
        ".type",
        _("must be 'message', 'metadata' or 'compaction', got {kind}").format(kind=repr(kind)),
    )


def _fast(value: object) -> MessageEntry | None:
    """The fast reader's answer for a plain message entry (object or ``MessageEntry``)."""
    if type(value) is MessageEntry:
        fields = fast_message_fields(value.id, value.parent_id, value.timestamp, value.message)
    else:
        fields = fast_message_entry(value)
    return None if fields is None else MessageEntry(*fields)


def entry_to_json(entry: SessionEntry) -> dict[str, Any]:
    """The camelCase JSON object of an entry; the exact inverse of ``parse_session_entry``."""
    common: dict[str, Any] = {
        "type": entry.type,
        "id": entry.id,
        "parentId": entry.parent_id,
        "timestamp": entry.timestamp,
    }
    if isinstance(entry, MessageEntry):
        return {**common, "message": copy_json(entry.message)}
    if isinstance(entry, MetadataEntry):
        return {**common, "key": entry.key, "value": copy_json(entry.value)}
    if isinstance(entry, CompactionEntry):
        summary = entry.summary
        return {
            **common,
            "summary": (
                summary_to_json(summary)
                if isinstance(summary, CompactionSummary)
                else copy_json(summary)
            ),
            "firstKeptEntryId": entry.first_kept_entry_id,
            "tokensBefore": entry.tokens_before,
        }
    raise SessionEntryError(
        "entry: " + _("not a session entry, got {kind}").format(kind=type(entry).__name__)
    )


def copy_entry(entry: SessionEntry) -> SessionEntry:
    """A copy of an already-valid entry that shares no mutable object with it."""
    if isinstance(entry, MessageEntry):
        return MessageEntry(entry.id, entry.parent_id, entry.timestamp, copy_json(entry.message))
    if isinstance(entry, MetadataEntry):
        return MetadataEntry(
            entry.id, entry.parent_id, entry.timestamp, entry.key, copy_json(entry.value)
        )
    return CompactionEntry(
        entry.id,
        entry.parent_id,
        entry.timestamp,
        parse_summary(entry.summary, entry_id=entry.id),
        entry.first_kept_entry_id,
        entry.tokens_before,
    )


def parse_entries(values: Sequence[object]) -> list[SessionEntry]:
    """Parse a list of untrusted entry objects (for fixtures and notebooks)."""
    return [parse_session_entry(value) for value in values]


def parse_message_entry(value: object) -> MessageEntry:
    """``parse_session_entry`` for a value that must be a message entry."""
    entry = _fast(value) or parse_session_entry(value)
    if not isinstance(entry, MessageEntry):
        raise SessionEntryError(
            f"{entry.id}.type: " + _("must be 'message', got {kind}").format(kind=repr(entry.type))
        )
    return entry


def check_unique_ids(path: Sequence[SessionEntry]) -> None:
    """Each entry appears once on a path: a repeated id is a ``SessionEntryError`` naming it.

    Only entry ids count: a tool call id may recur in another interaction.
    """
    if len({entry.id for entry in path}) == len(path):
        return
    seen: set[str] = set()
    for index, entry in enumerate(path):
        if entry.id in seen:
            raise SessionEntryError(
                _("{entry}: appears twice on the path (again at {index})").format(
                    entry=entry.id, index=index
                )
            )
        seen.add(entry.id)
