"""The two trimmers on equal terms: LangChain inputs, budgets and kept-set comparison."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from langchain_core.messages import (
    AIMessage,
    BaseMessage,
    HumanMessage,
    SystemMessage,
    ToolMessage,
    trim_messages,
)

from bench.workload import SYSTEM_PROMPT, arguments_chars, kit_estimator, tokens_for_chars
from course.context import BuildContextResult, build_context
from course.session import SessionEntry

RESERVED_OUTPUT = 512
SAFETY_MARGIN = 64


def to_langchain(entries: Sequence[dict[str, Any]]) -> list[BaseMessage]:
    """The same history as LangChain messages (ids = entry ids), opened by the system prompt."""
    out: list[BaseMessage] = [SystemMessage(SYSTEM_PROMPT, id="system")]
    for entry in entries:
        message = entry["message"]
        role = message["role"]
        if role == "user":
            out.append(HumanMessage(message["content"], id=entry["id"]))
        elif role == "assistant":
            text = "".join(b["text"] for b in message["content"] if b["type"] == "text")
            calls = [
                {"name": b["name"], "args": b["arguments"], "id": b["id"], "type": "tool_call"}
                for b in message["content"]
                if b["type"] == "toolCall"
            ]
            out.append(AIMessage(text, tool_calls=calls, id=entry["id"]))
        elif role == "toolResult":
            text = "".join(b["text"] for b in message["content"])
            out.append(
                ToolMessage(
                    text,
                    tool_call_id=message["toolCallId"],
                    name=message["toolName"],
                    status="error" if message["isError"] else "success",
                    id=entry["id"],
                )
            )
        else:  # pragma: no cover - the workload writes only the three roles above
            raise ValueError(f"{entry['id']}: unexpected role {role!r}")
    return out


def langchain_estimator(message: BaseMessage) -> int:
    """The kit estimator's twin: text plus tool-call arguments, one token per 4 chars."""
    content = message.content
    if isinstance(content, str):
        chars = len(content)
    else:
        chars = sum(len(b) if isinstance(b, str) else len(b.get("text", "")) for b in content)
    if isinstance(message, AIMessage):
        for call in message.tool_calls:
            chars += arguments_chars(call["args"])
    return tokens_for_chars(chars)


def count_messages(messages: list[BaseMessage]) -> int:
    """trim_messages' list counter: the sum of per-message estimates."""
    return sum(langchain_estimator(m) for m in messages)


def memoized_counter() -> Callable[[list[BaseMessage]], int]:
    """A list counter that estimates each message once per trim (cache keyed by object)."""
    cache: dict[int, int] = {}

    def count(messages: list[BaseMessage]) -> int:
        total = 0
        for message in messages:
            key = id(message)
            tokens = cache.get(key)
            if tokens is None:
                tokens = cache[key] = langchain_estimator(message)
            total += tokens
        return total

    return count


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


def run_trim(
    messages: list[BaseMessage],
    budget: Budget,
    counter: Callable[[list[BaseMessage]], int] = count_messages,
) -> list[BaseMessage]:
    kept: list[BaseMessage] = trim_messages(
        messages,
        max_tokens=budget.trim_max_tokens,
        token_counter=counter,
        strategy="last",
        start_on="human",
        include_system=True,
        allow_partial=False,
    )
    return kept


def run_trim_memoized(messages: list[BaseMessage], budget: Budget) -> list[BaseMessage]:
    """trim_messages with a counter that estimates each message once per call."""
    return run_trim(messages, budget, memoized_counter())


def trimmed_ids(kept: Sequence[BaseMessage]) -> list[str]:
    """Entry ids trim_messages kept, without its system message."""
    return [str(m.id) for m in kept if not isinstance(m, SystemMessage)]


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
