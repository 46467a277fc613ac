"""Session entry types and the strict parser of chapter 10; Lab 11.1 adds compaction."""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal, TypeAlias

from .labs import LabNotImplemented

JsonValue: TypeAlias = Any
"""A value made of dict (str keys), list, str, int, float, bool and None."""

Message: TypeAlias = dict[str, Any]
"""A JSON-shaped message: ``{"role": ..., "content": ...}`` and its role's fields."""

MAX_JSON_DEPTH = 64
"""Nesting deeper than this inside tool arguments or metadata values is refused."""

SUMMARY_LIST_FIELDS: tuple[tuple[str, str], ...] = (
    ("constraints", "constraints"),
    ("completed", "completed"),
    ("decisions", "decisions"),
    ("changed_files", "changedFiles"),
    ("unresolved", "unresolved"),
    ("next", "next"),
)
"""The six list fields of a summary: (attribute name, JSON key), in their fixed order."""


class SessionEntryError(ValueError):
    """An object is not a valid session entry; the message names the entry and field."""


@dataclass(frozen=True)
class CompactionSummary:
    """The seven facts a compaction keeps about the messages it replaces."""

    goal: str
    constraints: list[str]
    completed: list[str]
    decisions: list[str]
    changed_files: list[str]
    unresolved: list[str]
    next: list[str]


@dataclass(frozen=True)
class MessageEntry:
    """A message in the session tree."""

    id: str
    parent_id: str | None
    timestamp: int | float
    message: Message
    type: Literal["message"] = "message"


@dataclass(frozen=True)
class MetadataEntry:
    """A key/value fact in the session tree (model changes, labels); never sent to a model."""

    id: str
    parent_id: str | None
    timestamp: int | float
    key: str
    value: JsonValue
    type: Literal["metadata"] = "metadata"


@dataclass(frozen=True)
class CompactionEntry:
    """An appended summary of older messages; resume keeps originals from the first kept id."""

    id: str
    parent_id: str
    timestamp: int | float
    summary: CompactionSummary
    first_kept_entry_id: str
    tokens_before: int | float
    type: Literal["compaction"] = "compaction"


SessionEntry: TypeAlias = MessageEntry | MetadataEntry | CompactionEntry
ENTRY_TYPES = (MessageEntry, MetadataEntry, CompactionEntry)


# --------------------------------------------------------------------------- parsing


class _Reader:
    """Field readers that raise errors naming ``<entry id><path>``."""

    def __init__(self, entry_id: str | None) -> None:
        self.entry_id = entry_id

    def fail(self, path: str, problem: str) -> SessionEntryError:
        where = self.entry_id if self.entry_id else "entry"
        return SessionEntryError(f"{where}{path}: {problem}")

    def mapping(
        self, value: object, path: str, required: Iterable[str], optional: Iterable[str] = ()
    ) -> Mapping[str, Any]:
        if not isinstance(value, Mapping):
            raise self.fail(path, f"must be an object, got {_kind(value)}")
        required = tuple(required)
        allowed = set(required) | set(optional)
        for key in value:
            if key not in allowed:
                raise self.fail(f"{path}.{key}", "unknown field")
        for key in required:
            if key not in value:
                raise self.fail(f"{path}.{key}", "missing field")
        return value

    def string(self, value: object, path: str, *, non_empty: bool = False) -> str:
        if not isinstance(value, str):
            raise self.fail(path, f"must be a string, got {_kind(value)}")
        if non_empty and not value:
            raise self.fail(path, "must be a non-empty string")
        return value

    def number(self, value: object, path: str) -> int | float:
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise self.fail(path, f"must be a non-negative finite number, got {_kind(value)}")
        if value < 0 or (isinstance(value, float) and not math.isfinite(value)):
            raise self.fail(path, f"must be a non-negative finite number, got {value!r}")
        return value

    def string_list(self, value: object, path: str) -> list[str]:
        if not isinstance(value, list):
            raise self.fail(path, f"must be a list of strings, got {_kind(value)}")
        return [self.string(v, f"{path}[{i}]") for i, v in enumerate(value)]

    def json(self, value: object, path: str, depth: int = 0) -> JsonValue:
        """Validate plain JSON data and return an unshared copy."""
        if depth > MAX_JSON_DEPTH:
            raise self.fail(path, f"nested deeper than {MAX_JSON_DEPTH} levels")
        if value is None or isinstance(value, (str, bool, int)):
            return value
        if isinstance(value, float):
            if not math.isfinite(value):
                raise self.fail(path, f"must be a finite number, got {value!r}")
            return value
        if isinstance(value, list):
            return [self.json(item, f"{path}[{i}]", depth + 1) for i, item in enumerate(value)]
        if isinstance(value, Mapping):
            copied: dict[str, JsonValue] = {}
            for key, item in value.items():
                if not isinstance(key, str):
                    raise self.fail(path, f"object keys must be strings, got {_kind(key)}")
                copied[key] = self.json(item, f"{path}.{key}", depth + 1)
            return copied
        raise self.fail(path, f"must be JSON data, got {_kind(value)}")


def _kind(value: object) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, (int, float)):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, Mapping):
        return "object"
    if isinstance(value, list):
        return "array"
    return type(value).__name__


def _text_blocks(r: _Reader, value: object, path: str) -> list[dict[str, Any]]:
    if not isinstance(value, list):
        raise r.fail(path, f"must be a list of content blocks, got {_kind(value)}")
    blocks = []
    for i, block in enumerate(value):
        b = r.mapping(block, f"{path}[{i}]", ("type", "text"))
        if b["type"] != "text":
            raise r.fail(f"{path}[{i}].type", f"must be 'text', got {b['type']!r}")
        blocks.append({"type": "text", "text": r.string(b["text"], f"{path}[{i}].text")})
    return blocks


def _assistant_blocks(r: _Reader, value: object, path: str) -> list[dict[str, Any]]:
    if not isinstance(value, list):
        raise r.fail(path, f"must be a list of content blocks, got {_kind(value)}")
    blocks: list[dict[str, Any]] = []
    for i, block in enumerate(value):
        where = f"{path}[{i}]"
        if not isinstance(block, Mapping):
            raise r.fail(where, f"must be an object, got {_kind(block)}")
        kind = block.get("type")
        if kind == "text":
            b = r.mapping(block, where, ("type", "text"))
            blocks.append({"type": "text", "text": r.string(b["text"], f"{where}.text")})
        elif kind == "toolCall":
            b = r.mapping(block, where, ("type", "id", "name", "arguments"))
            if not isinstance(b["arguments"], Mapping):
                raise r.fail(
                    f"{where}.arguments", f"must be an object, got {_kind(b['arguments'])}"
                )
            blocks.append(
                {
                    "type": "toolCall",
                    "id": r.string(b["id"], f"{where}.id", non_empty=True),
                    "name": r.string(b["name"], f"{where}.name", non_empty=True),
                    "arguments": r.json(b["arguments"], f"{where}.arguments"),
                }
            )
        else:
            raise r.fail(f"{where}.type", f"must be 'text' or 'toolCall', got {kind!r}")
    return blocks


def _parse_message(r: _Reader, value: object, path: str) -> Message:
    if not isinstance(value, Mapping):
        raise r.fail(path, f"must be an object, got {_kind(value)}")
    role = value.get("role")
    if role == "system":
        m = r.mapping(value, path, ("role", "content"))
        return {"role": "system", "content": r.string(m["content"], f"{path}.content")}
    if role == "user":
        m = r.mapping(value, path, ("role", "content"))
        content = m["content"]
        if isinstance(content, str):
            return {"role": "user", "content": content}
        return {"role": "user", "content": _text_blocks(r, content, f"{path}.content")}
    if role == "assistant":
        m = r.mapping(value, path, ("role", "content"))
        return {
            "role": "assistant",
            "content": _assistant_blocks(r, m["content"], f"{path}.content"),
        }
    if role == "toolResult":
        m = r.mapping(value, path, ("role", "toolCallId", "toolName", "content", "isError"))
        is_error = m["isError"]
        if not isinstance(is_error, bool):
            raise r.fail(f"{path}.isError", f"must be a boolean, got {_kind(is_error)}")
        return {
            "role": "toolResult",
            "toolCallId": r.string(m["toolCallId"], f"{path}.toolCallId", non_empty=True),
            "toolName": r.string(m["toolName"], f"{path}.toolName", non_empty=True),
            "content": _text_blocks(r, m["content"], f"{path}.content"),
            "isError": is_error,
        }
    raise r.fail(
        f"{path}.role", f"must be 'system', 'user', 'assistant' or 'toolResult', got {role!r}"
    )


def parse_summary(
    value: object, *, entry_id: str | None = None, path: str = ".summary"
) -> CompactionSummary:
    """Narrow a camelCase summary object to a ``CompactionSummary`` (a fresh copy).

    Lab 11.1. A summary has exactly seven keys: ``goal`` (a non-empty string) and the six
    lists of strings named in ``SUMMARY_LIST_FIELDS`` (``changedFiles`` becomes
    ``changed_files``). Anything else, such as an early draft's ``files``, is an error that
    names ``<entry_id><path>.<key>``: use ``_Reader(entry_id)`` as the chapter 10 branches do.
    Accept a ``CompactionSummary`` too (``summary_to_json`` turns it back into an object), and
    return new lists so the caller's summary and yours never share one.
    """
    raise LabNotImplemented(
        "11.1",
        "compaction entry",
        "parse_summary",
        "read goal and the six lists with _Reader.mapping, .string and .string_list",
    )


def summary_to_json(summary: CompactionSummary) -> dict[str, Any]:
    """The camelCase JSON object of a summary (fresh lists)."""
    out: dict[str, Any] = {"goal": summary.goal}
    for attr, key in SUMMARY_LIST_FIELDS:
        items = getattr(summary, attr)
        out[key] = list(items) if isinstance(items, list) else items
    return out


_COMMON = ("type", "id", "parentId", "timestamp")


def parse_session_entry(value: object) -> SessionEntry:
    """Strictly narrow an untrusted object (or an entry) to a fresh, unshared ``SessionEntry``.

    Message and metadata entries work as in chapter 10; Lab 11.1 fills the compaction branch.
    """
    fast = _fast_message_entry(value)
    if fast is not None:
        return fast
    if isinstance(value, ENTRY_TYPES):
        value = entry_to_json(value)
    if not isinstance(value, Mapping):
        raise SessionEntryError(f"entry: must be an object, got {_kind(value)}")
    raw_id = value.get("id")
    r = _Reader(raw_id if isinstance(raw_id, str) and raw_id else None)
    entry_id = r.string(raw_id, ".id", non_empty=True) if "id" in value else None
    kind = value.get("type")
    if kind == "message":
        e = r.mapping(value, "", _COMMON + ("message",))
        return MessageEntry(
            id=r.string(e["id"], ".id", non_empty=True),
            parent_id=_parent(r, e["parentId"], nullable=True),
            timestamp=r.number(e["timestamp"], ".timestamp"),
            message=_parse_message(r, e["message"], ".message"),
        )
    if kind == "metadata":
        e = r.mapping(value, "", _COMMON + ("key", "value"))
        return MetadataEntry(
            id=r.string(e["id"], ".id", non_empty=True),
            parent_id=_parent(r, e["parentId"], nullable=True),
            timestamp=r.number(e["timestamp"], ".timestamp"),
            key=r.string(e["key"], ".key", non_empty=True),
            value=r.json(e["value"], ".value"),
        )
    if kind == "compaction":
        # Lab 11.1: read parentId (required here: a compaction always follows a leaf),
        # timestamp, summary (parse_summary, naming entry_id), firstKeptEntryId (non-empty)
        # and tokensBefore (a non-negative finite number) into a CompactionEntry.
        raise LabNotImplemented(
            "11.1",
            "compaction entry",
            "parse_session_entry",
            "fill the compaction branch like the message branch, with parse_summary",
        )
    if "type" not in value:
        raise r.fail(".type", "missing field")
    raise r.fail(".type", f"must be 'message', 'metadata' or 'compaction', got {kind!r}")


def _parent(r: _Reader, value: object, *, nullable: bool) -> str | None:
    if value is None and nullable:
        return None
    return r.string(value, ".parentId", non_empty=True)


# --------------------------------------------------------------------------- fast path
#
# Almost every value parsed is a message entry made of exact dicts, lists, str, int, float,
# bool and None (``json.loads`` output, or an entry this parser made). For that case the
# functions below make the same checks and the same fresh copy without building error
# paths; on anything else (an error, a subclass, an unusual shape) they give up and the
# reader above parses the same value, so every result and every error is still the reader's.


class _NotFast(Exception):
    """The fast path gives up; the reader handles the value."""


def _is_text(value: object, text: str) -> bool:
    return type(value) is str and value == text


def _is_name(value: object) -> bool:
    return type(value) is str and value != ""


_ROLE_CONTENT = frozenset(("role", "content"))
_TOOL_RESULT_KEYS = frozenset(("role", "toolCallId", "toolName", "content", "isError"))
_TEXT_KEYS = frozenset(("type", "text"))
_TOOL_CALL_KEYS = frozenset(("type", "id", "name", "arguments"))
_MESSAGE_ENTRY_KEYS = frozenset(_COMMON + ("message",))


def _fast_json(value: object, depth: int) -> JsonValue:
    if depth > MAX_JSON_DEPTH:
        raise _NotFast
    if value is None or type(value) is str or type(value) is int or type(value) is bool:
        return value
    if type(value) is float:
        if math.isfinite(value):
            return value
        raise _NotFast
    if type(value) is list:
        return [_fast_json(item, depth + 1) for item in value]
    if type(value) is dict:
        copied: dict[str, JsonValue] = {}
        for key, item in value.items():
            if type(key) is not str:
                raise _NotFast
            copied[key] = _fast_json(item, depth + 1)
        return copied
    raise _NotFast


def _fast_text_blocks(value: object) -> list[dict[str, Any]]:
    if type(value) is not list:
        raise _NotFast
    blocks = []
    for block in value:
        if type(block) is not dict or block.keys() != _TEXT_KEYS:
            raise _NotFast
        text = block["text"]
        if not _is_text(block["type"], "text") or type(text) is not str:
            raise _NotFast
        blocks.append({"type": "text", "text": text})
    return blocks


def _fast_assistant_blocks(value: object) -> list[dict[str, Any]]:
    if type(value) is not list:
        raise _NotFast
    blocks: list[dict[str, Any]] = []
    for block in value:
        if type(block) is not dict:
            raise _NotFast
        kind = block.get("type")
        if _is_text(kind, "text") and block.keys() == _TEXT_KEYS:
            text = block["text"]
            if type(text) is not str:
                raise _NotFast
            blocks.append({"type": "text", "text": text})
        elif _is_text(kind, "toolCall") and block.keys() == _TOOL_CALL_KEYS:
            call_id, name, arguments = block["id"], block["name"], block["arguments"]
            if not (_is_name(call_id) and _is_name(name) and type(arguments) is dict):
                raise _NotFast
            copied = _fast_json(arguments, 0)
            blocks.append({"type": "toolCall", "id": call_id, "name": name, "arguments": copied})
        else:
            raise _NotFast
    return blocks


def _fast_message(value: object) -> Message:
    if type(value) is not dict:
        raise _NotFast
    role = value.get("role")
    keys = value.keys()
    if _is_text(role, "user") and keys == _ROLE_CONTENT:
        content = value["content"]
        if type(content) is str:
            return {"role": "user", "content": content}
        return {"role": "user", "content": _fast_text_blocks(content)}
    if _is_text(role, "assistant") and keys == _ROLE_CONTENT:
        return {"role": "assistant", "content": _fast_assistant_blocks(value["content"])}
    if _is_text(role, "toolResult") and keys == _TOOL_RESULT_KEYS:
        call_id, name, is_error = value["toolCallId"], value["toolName"], value["isError"]
        if not (_is_name(call_id) and _is_name(name) and type(is_error) is bool):
            raise _NotFast
        return {
            "role": "toolResult",
            "toolCallId": call_id,
            "toolName": name,
            "content": _fast_text_blocks(value["content"]),
            "isError": is_error,
        }
    if _is_text(role, "system") and keys == _ROLE_CONTENT and type(value["content"]) is str:
        return {"role": "system", "content": value["content"]}
    raise _NotFast


def _fast_message_entry(value: object) -> MessageEntry | None:
    """A message entry (object or ``MessageEntry``) read on the fast path, or None."""
    if type(value) is dict:
        if value.keys() != _MESSAGE_ENTRY_KEYS or not _is_text(value["type"], "message"):
            return None
        entry_id, parent = value["id"], value["parentId"]
        timestamp, message = value["timestamp"], value["message"]
    elif type(value) is MessageEntry and _is_text(value.type, "message"):
        entry_id, parent = value.id, value.parent_id
        timestamp, message = value.timestamp, value.message
    else:
        return None
    if not (_is_name(entry_id) and (parent is None or _is_name(parent))):
        return None
    if type(timestamp) is int:
        if timestamp < 0:
            return None
    elif type(timestamp) is not float or not (timestamp >= 0 and math.isfinite(timestamp)):
        return None
    try:
        return MessageEntry(entry_id, parent, timestamp, _fast_message(message))
    except _NotFast:
        return None


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
    raise SessionEntryError(f"entry: not a session entry, got {type(entry).__name__}")


def copy_json(value: JsonValue) -> JsonValue:
    """A deep copy of already-valid JSON data."""
    # Scalars are returned as they are, so only containers are worth a recursive call.
    if isinstance(value, dict):
        return {k: copy_json(v) if isinstance(v, (dict, list)) else v for k, v in value.items()}
    if isinstance(value, list):
        return [copy_json(v) if isinstance(v, (dict, list)) else v for v in value]
    return value


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
