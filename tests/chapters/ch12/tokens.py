"""Chapter 12 · Token estimation: a character count per message, cached, in chapter 11's budget."""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Mapping, Sequence

from course.locale import gettext as _

from .context import BuildContextResult, Estimator, build_context
from .entries import SessionEntry
from .fields import PrintableError, kind_name
from .messages import Message

CHARS_PER_TOKEN = 4
"""ASCII characters a token stands for; every other character (a CJK one, say) is a token."""
MESSAGE_OVERHEAD = 3
"""What every message costs before its text: its role and the framing around it."""


class TokenEstimateError(PrintableError):
    """A message the estimator cannot read; the message names the field, as a ``ValueError``."""


def message_text(message: object) -> str:
    """The text a message carries: its string content, or its blocks' texts in order.

    A block is ``{"type": "text", "text": ...}``, or a ``toolCall`` whose ``name`` and
    ``arguments`` (``json.dumps`` with sorted keys, ``ensure_ascii=False``) are text too.
    Refuses with a ``TokenEstimateError`` naming the field: a message that is not an object
    (``message``), content neither a string nor a list (``message.content``), a block not an
    object (``message.content[i]``), a text not a string (``message.content[i].text``), a
    block of another type (``message.content[i].type``).
    """
    if not isinstance(message, Mapping):
        said = _("message: must be an object, got {kind}")
        raise TokenEstimateError(said.format(kind=kind_name(message)))
    content = message.get("content")
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        said = _("message.content: must be a string or a list of blocks, got {kind}")
        raise TokenEstimateError(said.format(kind=kind_name(content)))
    texts = []
    for index, block in enumerate(content):
        where = f"message.content[{index}]"
        if not isinstance(block, Mapping):
            said = _("{where}: must be an object, got {kind}")
            raise TokenEstimateError(said.format(where=where, kind=kind_name(block)))
        if block.get("type") == "toolCall":
            arguments = json.dumps(block.get("arguments"), ensure_ascii=False, sort_keys=True)
            texts.append(f"{block.get('name', '')}{arguments}")
        elif block.get("type") == "text" and isinstance(block.get("text"), str):
            texts.append(block["text"])
        elif block.get("type") == "text":
            said = _("{where}.text: must be a string, got {kind}")
            raise TokenEstimateError(said.format(where=where, kind=kind_name(block.get("text"))))
        else:
            said = _("{where}.type: must be 'text' or 'toolCall', got {kind}")
            raise TokenEstimateError(said.format(where=where, kind=repr(block.get("type"))))
    return "".join(texts)


def estimate_tokens(message: Message) -> int:
    """A message's cost in tokens, from its characters alone (no tokenizer).

    ``MESSAGE_OVERHEAD``, plus one token per ``CHARS_PER_TOKEN`` ASCII characters of its text
    (``message_text``), rounded up, plus one token per other character. ``"hello world"`` (11
    ASCII characters) costs 3 + 3 = 6; ``"你好"`` costs 3 + 2 = 5; empty content costs 3.
    Refuses what ``message_text`` refuses, with its ``TokenEstimateError``.
    """
    text = message_text(message)
    ascii_count = sum(1 for character in text if character.isascii())
    return MESSAGE_OVERHEAD + math.ceil(ascii_count / CHARS_PER_TOKEN) + len(text) - ascii_count


def cached(estimate: Estimator) -> Callable[[Message], float]:
    """``estimate`` asked at most once per distinct message (equal as JSON, keys in any order).

    Returns an estimator that keeps each answer by the message's canonical JSON and gives it
    again for an equal message; a message ``estimate`` refuses is not kept (asked again, it is
    refused again), and nor is one that is not JSON (each time it goes to ``estimate``).
    """
    answers: dict[str, float] = {}

    def estimate_once(message: Message) -> float:
        try:
            key = json.dumps(message, ensure_ascii=False, sort_keys=True, allow_nan=False)
        except (TypeError, ValueError):
            return estimate(message)
        if key not in answers:
            answers[key] = estimate(message)
        return answers[key]

    return estimate_once


def estimated_context(
    path: Sequence[SessionEntry],
    *,
    max_tokens: float,
    system_prompt: str,
    reserved_output: float,
    safety_margin: float,
) -> BuildContextResult:
    """Chapter 11's ``build_context`` with ``estimate_tokens``, cached, as its estimator.

    The budget's numbers go to ``build_context`` as they are, and its refusals come back as
    they are. Chapter 11's path at ``max_tokens=100`` (prompt ``"sys"``, 4 reserved, 2 margin):
    the prompt costs 4, 90 are left, the interactions cost 26, 28 and 57, and the second and
    third are kept (85), ``trimmed``; at 60 the third alone overflows what is left (50).
    """
    return build_context(
        path,
        max_tokens=max_tokens,
        system_prompt=system_prompt,
        reserved_output=reserved_output,
        safety_margin=safety_margin,
        estimate_tokens=cached(estimate_tokens),
    )
