"""LangChain's side of the comparison: its inputs, its trimmer and the ids it kept.

The kit's side (budgets, ``run_kit``) is in ``bench/budgets.py``, which imports no LangChain,
so the children ``bench/instructions.py`` runs under valgrind start without it.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from langchain_core.messages import (
    AIMessage,
    BaseMessage,
    HumanMessage,
    SystemMessage,
    ToolMessage,
    trim_messages,
)

from bench.budgets import SYSTEM_PROMPT, Budget, arguments_chars, tokens_for_chars


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
