"""Chapter 10's messages: the four roles and their content blocks, read strictly and copied."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeAlias

from course.locale import gettext as _

from .fields import FieldReader, kind_name

Message: TypeAlias = dict[str, Any]
"""A JSON-shaped message: ``{"role": ..., "content": ...}`` and its role's fields."""


def text_blocks(r: FieldReader, value: object, path: str) -> list[dict[str, Any]]:
    """A list of text blocks, checked and copied."""
    if not isinstance(value, list):
        raise r.fail(
            path, _("must be a list of content blocks, got {kind}").format(kind=kind_name(value))
        )
    blocks = []
    for i, block in enumerate(value):
        b = r.mapping(block, f"{path}[{i}]", ("type", "text"))
        if b["type"] != "text":
            raise r.fail(
                f"{path}[{i}].type", _("must be 'text', got {kind}").format(kind=repr(b["type"]))
            )
        blocks.append({"type": "text", "text": r.string(b["text"], f"{path}[{i}].text")})
    return blocks


def _assistant_blocks(r: FieldReader, value: object, path: str) -> list[dict[str, Any]]:
    """An assistant message's blocks: text and tool calls, checked and copied."""
    if not isinstance(value, list):
        raise r.fail(
            path, _("must be a list of content blocks, got {kind}").format(kind=kind_name(value))
        )
    blocks: list[dict[str, Any]] = []
    for i, block in enumerate(value):
        where = f"{path}[{i}]"
        if not isinstance(block, Mapping):
            raise r.fail(where, _("must be an object, got {kind}").format(kind=kind_name(block)))
        kind = block.get("type")
        if kind == "text":
            b = r.mapping(block, where, ("type", "text"))
            blocks.append({"type": "text", "text": r.string(b["text"], f"{where}.text")})
        elif kind == "toolCall":
            b = r.mapping(block, where, ("type", "id", "name", "arguments"))
            if not isinstance(b["arguments"], Mapping):
                raise r.fail(
                    f"{where}.arguments",
                    _("must be an object, got {kind}").format(kind=kind_name(b["arguments"])),
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
            raise r.fail(
                f"{where}.type",
                _("must be 'text' or 'toolCall', got {kind}").format(kind=repr(kind)),
            )
    return blocks


def parse_message(r: FieldReader, value: object, path: str) -> Message:
    """One message of any of the four roles, checked and copied."""
    if not isinstance(value, Mapping):
        raise r.fail(path, _("must be an object, got {kind}").format(kind=kind_name(value)))
    role = value.get("role")
    if role == "system":
        m = r.mapping(value, path, ("role", "content"))
        return {"role": "system", "content": r.string(m["content"], f"{path}.content")}
    if role == "user":
        m = r.mapping(value, path, ("role", "content"))
        content = m["content"]
        if isinstance(content, str):
            return {"role": "user", "content": content}
        return {"role": "user", "content": text_blocks(r, content, f"{path}.content")}
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
            raise r.fail(
                f"{path}.isError",
                _("must be a boolean, got {kind}").format(kind=kind_name(is_error)),
            )
        return {
            "role": "toolResult",
            "toolCallId": r.string(m["toolCallId"], f"{path}.toolCallId", non_empty=True),
            "toolName": r.string(m["toolName"], f"{path}.toolName", non_empty=True),
            "content": text_blocks(r, m["content"], f"{path}.content"),
            "isError": is_error,
        }
    raise r.fail(
        f"{path}.role",
        _("must be 'system', 'user', 'assistant' or 'toolResult', got {role}").format(
            role=repr(role)
        ),
    )
