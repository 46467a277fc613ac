"""A long, seeded session for watching the suffix rule at scale: plain JSON entries."""

from __future__ import annotations

import random
from typing import Any

WORDS = (
    "read", "the", "session", "log", "and", "check", "each", "tool", "result", "against",
    "its", "call", "then", "trim", "older", "groups", "keep", "newest", "budget", "summary",
    "patch", "test", "branch", "path", "window", "tokens", "reply", "file", "diff", "plan",
)  # fmt: skip
"""Filler vocabulary: the text only matters for its length (one token per 40 characters)."""

TOOLS = ("read", "test", "grep", "edit")


def _text(rng: random.Random, tokens: int) -> str:
    """About ``tokens`` tokens of filler under the chapter estimator (40 characters each)."""
    target = 40 * tokens - rng.randrange(0, 30)
    words: list[str] = []
    length = 0
    while length < target:
        word = rng.choice(WORDS)
        words.append(word)
        length += len(word) + 1
    return " ".join(words)[: max(1, target)]


def generated_session_json(groups: int = 300, *, seed: int = 11) -> list[dict[str, Any]]:
    """``groups`` interactions as session-entry JSON; the same seed gives the same session.

    Entry ids are ``gNNN-u`` (user), ``gNNN-calls`` and ``gNNN-rK`` (a tool round, results
    completing in shuffled order) and ``gNNN-a`` (the answer). Roughly two interactions in
    five use tools, and a few are large, so the budget meets groups of very different sizes.
    """
    if groups < 0:
        raise ValueError(f"groups: must be non-negative, got {groups}")
    rng = random.Random(seed)
    entries: list[dict[str, Any]] = []
    parent: str | None = None
    clock = 0

    def add(entry_id: str, message: dict[str, Any]) -> None:
        nonlocal parent, clock
        clock += 1
        entries.append(
            {
                "type": "message",
                "id": entry_id,
                "parentId": parent,
                "timestamp": clock,
                "message": message,
            }
        )
        parent = entry_id

    for number in range(1, groups + 1):
        tag = f"g{number:03d}"
        large = rng.random() < 0.08
        add(f"{tag}-u", {"role": "user", "content": _text(rng, rng.randint(1, 4))})
        if rng.random() < 0.4:
            count = rng.randint(1, 3)
            calls = [(f"{tag}-c{k}", rng.choice(TOOLS)) for k in range(1, count + 1)]
            add(
                f"{tag}-calls",
                {
                    "role": "assistant",
                    "content": [{"type": "text", "text": _text(rng, 1)}]
                    + [
                        {"type": "toolCall", "id": cid, "name": name, "arguments": {"n": k}}
                        for k, (cid, name) in enumerate(calls, start=1)
                    ],
                },
            )
            order = list(range(count))
            rng.shuffle(order)
            for k in order:
                cid, name = calls[k]
                size = rng.randint(8, 30) if large else rng.randint(1, 6)
                add(
                    f"{tag}-r{k + 1}",
                    {
                        "role": "toolResult",
                        "toolCallId": cid,
                        "toolName": name,
                        "content": [{"type": "text", "text": _text(rng, size)}],
                        "isError": False,
                    },
                )
        answer = rng.randint(6, 20) if large else rng.randint(1, 5)
        add(
            f"{tag}-a",
            {"role": "assistant", "content": [{"type": "text", "text": _text(rng, answer)}]},
        )
    return entries
