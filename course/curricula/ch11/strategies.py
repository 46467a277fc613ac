"""Chapter 11's hypothesis strategies the probes draw from: valid session histories and
summaries (the seeded draw itself is the machinery's, ``course.grading.verdict.draws``)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from hypothesis import strategies as st

from course.grading.verdict.draws import examples

from .probes import SUMMARY_KEYS

TEXT = st.text(
    alphabet=st.characters(min_codepoint=0x20, max_codepoint=0x7E, categories=["L", "N", "Zs"]),
    max_size=12,
)
"""Readable text for fields whose characters no lab handles (a message's words, a goal): a
probe's input reads in either edition. Ids in another script are cases of their own
(``ch11.renamed_ids``), where their handling is under test."""
JSON_SCALARS = (
    st.none()
    | st.booleans()
    | st.integers(-(10**6), 10**6)
    | st.floats(allow_nan=False, allow_infinity=False)
    | TEXT
)
JSON = st.recursive(
    JSON_SCALARS,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(TEXT, inner, max_size=3),
    max_leaves=12,
)
"""Valid JSON data (finite numbers only)."""


@st.composite
def interactions(draw: st.DrawFn, index: int) -> list[dict[str, Any]]:
    """One valid interaction: a user message, assistant turns with calls, results in any order.

    Some results are errors (``"isError": true``, still results), and some interactions name
    their calls ``read-…`` or ``读取-…`` as others on the same path may: call ids are unique
    within one interaction only, and in any script.
    """
    messages: list[dict[str, Any]] = [{"role": "user", "content": draw(TEXT)}]
    prefix = draw(st.sampled_from([f"call-{index}", "read", f"调用{index}", "读取"]))
    for turn in range(draw(st.integers(0, 2))):
        calls = [f"{prefix}-{turn}-{n}" for n in range(draw(st.integers(1, 3)))]
        content: list[dict[str, Any]] = [{"type": "text", "text": draw(TEXT)}]
        content += [
            {"type": "toolCall", "id": c, "name": "tool", "arguments": {"n": n}}
            for n, c in enumerate(calls)
        ]
        messages.append({"role": "assistant", "content": content})
        turn_results = [
            {"role": "toolResult", "toolCallId": c, "toolName": "tool"}
            | {"content": [{"type": "text", "text": draw(TEXT)}], "isError": draw(st.booleans())}
            for c in calls
        ]
        messages += draw(st.permutations(turn_results))
    if draw(st.booleans()):
        messages.append({"role": "assistant", "content": [{"type": "text", "text": draw(TEXT)}]})
    return messages


CLOCKS: dict[str, Callable[[int], float]] = {
    "forward": lambda n: n,
    "backward": lambda n: 10**6 - n,
    "still": lambda n: 7,
    "halves": lambda n: n / 2,
}
"""How a history's timestamps run: the path's order, never its timestamps, is its order."""


@st.composite
def histories(draw: st.DrawFn, min_groups: int = 0, max_groups: int = 6) -> list[dict[str, Any]]:
    """A valid active path as JSON entries, with metadata entries sprinkled in; its timestamps
    rise, fall, stand still or are not whole (``CLOCKS``)."""
    entries: list[dict[str, Any]] = []
    clock = CLOCKS[draw(st.sampled_from(sorted(CLOCKS)))]

    def add(kind: str, prefix: str, **fields: Any) -> None:
        parent = entries[-1]["id"] if entries else None
        entry = {"type": kind, "id": f"{prefix}{len(entries)}", "parentId": parent}
        entries.append(entry | {"timestamp": clock(len(entries))} | fields)

    for index in range(draw(st.integers(min_groups, max_groups))):
        for message in draw(interactions(index)):
            add("message", "e", message=message)
            if draw(st.integers(0, 9)) == 0:
                add("metadata", "m", key="note", value=draw(JSON))
    return entries


SUMMARIES = st.fixed_dictionaries(
    {
        "goal": TEXT.filter(str.strip),  # a goal that is not blank, as the parser asks
        **{key: st.lists(TEXT, max_size=3) for key in SUMMARY_KEYS},
    }
)

__all__ = ["JSON", "SUMMARIES", "TEXT", "examples", "histories", "interactions"]
