"""A fast reader for the common case: a plain message entry made of exact JSON types.

Almost every value parsed is a message entry made of exact dicts, lists, str, int, float,
bool and None (``json.loads`` output, or an entry the parser made). For that case the
functions below make the same checks and the same fresh copy without building error paths;
on anything else (an error, a subclass, an unusual shape) they give up and the strict reader
parses the same value, so every result and every error is still the strict reader's.
"""

from __future__ import annotations

import math
from typing import Any

from .fields import MAX_JSON_DEPTH, JsonValue
from .messages import Message

MESSAGE_ENTRY_KEYS = frozenset(("type", "id", "parentId", "timestamp", "message"))
_LARGEST_EXACT_INT = 2**53
"""Larger integers go to the strict reader, which checks that they fit a float."""


class _NotFast(Exception):
    """The fast path gives up; the reader handles the value."""


def _is_text(value: object, text: str) -> bool:
    return type(value) is str and value == text


def _is_name(value: object) -> bool:
    return type(value) is str and value != ""


_AS_THEY_ARE = frozenset((str, int, bool, type(None)))
"""Exact types the reader returns as they are (a float must be finite as well)."""

# Below, a dict's keys are checked by counting them: ``len(block) == 2`` and two ``get``s that
# found values of the right types mean exactly those two keys.


def _fast_json(value: dict[Any, Any] | list[Any], depth: int) -> JsonValue:
    """A copy of a dict or list made of exact JSON types, ``depth`` levels down."""
    if depth >= MAX_JSON_DEPTH:  # the reader decides what reaches the limit
        raise _NotFast
    if type(value) is dict:
        copied: dict[str, JsonValue] = {}
        for key, item in value.items():
            if type(key) is not str:
                raise _NotFast
            copied[key] = item if type(item) in _AS_THEY_ARE else _fast_other(item, depth)
        return copied
    return [item if type(item) in _AS_THEY_ARE else _fast_other(item, depth) for item in value]


def _fast_other(item: object, depth: int) -> JsonValue:
    """A finite float, or a dict or list copied one level further down."""
    if type(item) is float and math.isfinite(item):
        return item
    if type(item) is dict or type(item) is list:
        return _fast_json(item, depth + 1)
    raise _NotFast


def _fast_text_blocks(value: object) -> list[dict[str, Any]]:
    if type(value) is not list:
        raise _NotFast
    blocks = []
    for block in value:
        if type(block) is not dict or len(block) != 2:
            raise _NotFast
        kind, text = block.get("type"), block.get("text")
        if type(kind) is not str or kind != "text" or type(text) is not str:
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
        if type(kind) is not str:
            raise _NotFast
        if kind == "text" and len(block) == 2:
            text = block.get("text")
            if type(text) is not str:
                raise _NotFast
            blocks.append({"type": "text", "text": text})
        elif kind == "toolCall" and len(block) == 4:
            call_id, name, arguments = block.get("id"), block.get("name"), block.get("arguments")
            if type(call_id) is not str or type(name) is not str or type(arguments) is not dict:
                raise _NotFast
            if not (call_id and name):
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
    if type(role) is not str:
        raise _NotFast
    if role == "toolResult" and len(value) == 5:
        call_id, name = value.get("toolCallId"), value.get("toolName")
        is_error = value.get("isError")
        if not (_is_name(call_id) and _is_name(name) and type(is_error) is bool):
            raise _NotFast
        return {
            "role": "toolResult",
            "toolCallId": call_id,
            "toolName": name,
            "content": _fast_text_blocks(value.get("content")),
            "isError": is_error,
        }
    if len(value) != 2:
        raise _NotFast
    content = value.get("content")
    if role == "user":
        if type(content) is str:
            return {"role": "user", "content": content}
        return {"role": "user", "content": _fast_text_blocks(content)}
    if role == "assistant":
        return {"role": "assistant", "content": _fast_assistant_blocks(content)}
    if role == "system" and type(content) is str:
        return {"role": "system", "content": content}
    raise _NotFast


def fast_message_entry(value: object) -> tuple[str, str | None, int | float, Message] | None:
    """``(id, parentId, timestamp, copied message)`` of a plain message entry object, or None."""
    if type(value) is not dict or value.keys() != MESSAGE_ENTRY_KEYS:
        return None
    if not _is_text(value["type"], "message"):
        return None
    return fast_message_fields(value["id"], value["parentId"], value["timestamp"], value["message"])


def fast_message_fields(
    entry_id: object, parent: object, timestamp: object, message: object
) -> tuple[str, str | None, int | float, Message] | None:
    """The same fields checked, with the message copied; None where the strict reader decides."""
    if type(entry_id) is not str or not entry_id:
        return None
    if parent is not None and (type(parent) is not str or not parent):
        return None
    if type(timestamp) is int:
        if not 0 <= timestamp <= _LARGEST_EXACT_INT:
            return None
    elif type(timestamp) is not float or not (timestamp >= 0 and math.isfinite(timestamp)):
        return None
    try:
        copied = _fast_message(message)
    except _NotFast:
        return None
    return entry_id, parent, timestamp, copied
