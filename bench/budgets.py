"""The one token estimator both trimmers use, the kit's budgets, and the kit's call under them.

Apart from the generated histories (``bench/workload.py``) so that the children
``bench/instructions.py`` runs under callgrind import only what the call needs.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from course.context import BuildContextResult, build_context
from course.session import SessionEntry

SYSTEM_PROMPT = "You are a careful coding agent. Keep tool calls and their results together."


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


RESERVED_OUTPUT = 512
SAFETY_MARGIN = 64


@dataclass(frozen=True)
class Budget:
    """One budget, stated both ways: the kit's window and trim_messages' max_tokens."""

    label: str
    available: int
    """Tokens left for messages (build_context's ``available_for_messages``)."""
    system: int

    @property
    def kit_max_tokens(self) -> int:
        return self.available + self.system + RESERVED_OUTPUT + SAFETY_MARGIN

    @property
    def trim_max_tokens(self) -> int:
        """trim_messages counts the system message inside max_tokens; nothing is reserved."""
        return self.available + self.system


def system_cost() -> int:
    return kit_estimator({"role": "system", "content": SYSTEM_PROMPT})


def run_kit(path: Sequence[SessionEntry], budget: Budget) -> BuildContextResult:
    return build_context(
        path,
        max_tokens=budget.kit_max_tokens,
        system_prompt=SYSTEM_PROMPT,
        reserved_output=RESERVED_OUTPUT,
        safety_margin=SAFETY_MARGIN,
        estimate_tokens=kit_estimator,
    )


def budgets_for(entries: Sequence[dict[str, Any]], labels: Sequence[str]) -> list[Budget]:
    """Budgets over a history: percentages of its total cost, ``all`` and ``overflow``.

    ``overflow`` leaves one token less than the newest interaction costs, so that interaction
    alone does not fit.
    """
    costs = [kit_estimator(entry["message"]) for entry in entries]
    total = sum(costs)
    newest = 0
    for entry, cost in zip(reversed(entries), reversed(costs), strict=True):
        newest += cost
        if entry["message"]["role"] == "user":
            break
    system = system_cost()
    out = []
    for label in labels:
        if label == "all":
            available = total
        elif label == "overflow":
            available = newest - 1
        else:
            available = total * int(label.rstrip("%")) // 100
        out.append(Budget(label, available, system))
    return out
