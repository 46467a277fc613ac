"""The deterministic histories the benchmarks run on (their estimator, budgets and the kit's
call are ``bench/budgets.py``'s)."""

from __future__ import annotations

import math
import random
from collections.abc import Callable, Iterator
from typing import Any

MESSAGES_PER_INTERACTION = 5
"""user, assistant with two parallel tool calls, two results (shuffled), final assistant."""

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


# --------------------------------------------------------------------------- a second workload


def long_outputs_json(messages: int, *, seed: int = 13) -> list[dict[str, Any]]:
    """A history of (at least) ``messages`` messages in which tools return long outputs.

    Each interaction: a user message, one to four rounds of an assistant message with a single
    tool call (after a short text half the time) and its result, 0.5 to 8 KB of text in lines,
    then a final answer; seven messages an interaction on average, one call in three messages.
    """
    rng = random.Random(seed)
    lines = [_text(rng, 20, 90) for _ in range(400)]  # the outputs are lines drawn from these
    out: list[dict[str, Any]] = []
    timestamp = 1_700_000_000_000

    def add(entry_id: str, message: dict[str, Any]) -> None:
        nonlocal timestamp
        timestamp += rng.randint(1, 5_000)
        parent = out[-1]["id"] if out else None
        out.append(
            {
                "type": "message",
                "id": entry_id,
                "parentId": parent,
                "timestamp": timestamp,
                "message": message,
            }
        )

    i = 0
    while len(out) < messages:
        add(f"u{i}", {"role": "user", "content": _text(rng, 20, 300)})
        for k in range(rng.randint(1, 4)):
            call_id, name = f"call-{i}-{k}", rng.choice(_TOOLS)
            arguments = {"path": f"src/{rng.choice(_WORDS)}/{rng.choice(_WORDS)}.py"}
            content: list[dict[str, Any]] = []
            if rng.random() < 0.5:
                content.append({"type": "text", "text": _text(rng, 10, 80)})
            content.append(
                {"type": "toolCall", "id": call_id, "name": name, "arguments": arguments}
            )
            add(f"c{i}-{k}", {"role": "assistant", "content": content})
            output = "\n".join(rng.choices(lines, k=rng.randint(10, 150)))
            result = {
                "role": "toolResult",
                "toolCallId": call_id,
                "toolName": name,
                "content": [{"type": "text", "text": output}],
                "isError": rng.random() < 0.05,
            }
            add(f"r{i}-{k}", result)
        add(
            f"a{i}",
            {"role": "assistant", "content": [{"type": "text", "text": _text(rng, 50, 400)}]},
        )
        i += 1
    return out


WORKLOADS: dict[str, Callable[[int], list[dict[str, Any]]]] = {
    "tool-pairs": history_json,
    "long-outputs": long_outputs_json,
}
"""The histories the benchmarks compare on: the chapter's shape first, then a second one."""
