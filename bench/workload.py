"""A deterministic history generator and the one token estimator both trimmers use."""

from __future__ import annotations

import json
import math
import random
from collections.abc import Iterator
from typing import Any

MESSAGES_PER_INTERACTION = 5
"""user, assistant with two parallel tool calls, two results (shuffled), final assistant."""

SYSTEM_PROMPT = "You are a careful coding agent. Keep tool calls and their results together."

_VOCABULARY = (
    "session context budget entry parent group tool call result token window summary "
    "compaction resume path leaf store append commit newline parser schema check trim "
    "keep drop newest oldest interaction estimate margin reserved output system prompt"
)
_WORDS = tuple(_VOCABULARY.split())
_TOOLS = ("read", "grep", "test", "edit", "list")


def _text(rng: random.Random, low: int, high: int) -> str:
    """Words until at least a random length in [low, high] characters."""
    target = rng.randint(low, high)
    words: list[str] = []
    size = 0
    while size < target:
        word = rng.choice(_WORDS)
        words.append(word)
        size += len(word) + 1
    return " ".join(words)


def interactions_for(messages: int) -> int:
    """How many interactions make a history of ``messages`` messages (rounded up)."""
    return max(1, math.ceil(messages / MESSAGES_PER_INTERACTION))


def iter_entries(interactions: int, *, seed: int = 11) -> Iterator[dict[str, Any]]:
    """The history as camelCase session entry objects, oldest first, one parent chain."""
    rng = random.Random(seed)
    parent: str | None = None
    timestamp = 1_700_000_000_000

    def entry(entry_id: str, message: dict[str, Any]) -> dict[str, Any]:
        nonlocal parent, timestamp
        timestamp += rng.randint(1, 5_000)
        value = {
            "type": "message",
            "id": entry_id,
            "parentId": parent,
            "timestamp": timestamp,
            "message": message,
        }
        parent = entry_id
        return value

    for i in range(interactions):
        yield entry(f"u{i}", {"role": "user", "content": _text(rng, 20, 200)})
        calls = []
        for suffix in ("a", "b"):
            name = rng.choice(_TOOLS)
            arguments: dict[str, Any] = {
                "path": f"src/{rng.choice(_WORDS)}/{rng.choice(_WORDS)}.py",
                "pattern": _text(rng, 4, 30),
                "limit": rng.randint(1, 500),
            }
            calls.append((f"call-{i}-{suffix}", name, arguments))
        yield entry(
            f"c{i}",
            {
                "role": "assistant",
                "content": [{"type": "text", "text": _text(rng, 10, 80)}]
                + [
                    {"type": "toolCall", "id": cid, "name": name, "arguments": args}
                    for cid, name, args in calls
                ],
            },
        )
        order = list(calls)
        rng.shuffle(order)
        for cid, name, _ in order:
            yield entry(
                f"r{i}{cid[-1]}",
                {
                    "role": "toolResult",
                    "toolCallId": cid,
                    "toolName": name,
                    "content": [{"type": "text", "text": _text(rng, 50, 600)}],
                    "isError": rng.random() < 0.05,
                },
            )
        final = [{"type": "text", "text": _text(rng, 20, 300)}]
        yield entry(f"a{i}", {"role": "assistant", "content": final})


def history_json(messages: int, *, seed: int = 11) -> list[dict[str, Any]]:
    """A history of (at least) ``messages`` messages as entry objects."""
    return list(iter_entries(interactions_for(messages), seed=seed))


# --------------------------------------------------------------------------- the estimator


def arguments_chars(arguments: object) -> int:
    """Characters of a tool call's arguments: their compact JSON text."""
    return len(json.dumps(arguments, ensure_ascii=False, separators=(",", ":")))


def tokens_for_chars(chars: int) -> int:
    """The per-message estimate: one token per four characters, rounded up."""
    return -(-chars // 4)


def kit_estimator(message: dict[str, Any]) -> int:
    """The estimate of a kit message (``{"role": ..., "content": ...}``)."""
    content = message["content"]
    if isinstance(content, str):
        return tokens_for_chars(len(content))
    chars = 0
    for block in content:
        if block["type"] == "text":
            chars += len(block["text"])
        else:
            chars += arguments_chars(block["arguments"])
    return tokens_for_chars(chars)
