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


_ROLE_CONTENT = frozenset(("role", "content"))
_TOOL_RESULT_KEYS = frozenset(("role", "toolCallId", "toolName", "content", "isError"))
_TEXT_KEYS = frozenset(("type", "text"))
_TOOL_CALL_KEYS = frozenset(("type", "id", "name", "arguments"))


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
    if not (_is_name(entry_id) and (parent is None or _is_name(parent))):
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
    assert isinstance(entry_id, str) and isinstance(timestamp, (int, float))
    return entry_id, parent if isinstance(parent, str) else None, timestamp, copied
