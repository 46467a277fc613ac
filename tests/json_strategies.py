"""Hypothesis strategies only the suite uses: any JSON value, one valid entry of any type, and an
additive estimator (the probes' own strategies are ``course.curricula.ch11.strategies``)."""

from __future__ import annotations

from typing import Any

from hypothesis import strategies as st

from course.curricula.ch11.strategies import JSON, SUMMARIES, TEXT, interactions

ANY_JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=8),
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=5)
    ),
    max_leaves=20,
)
"""Any value ``json.loads`` can return, NaN and infinities included."""


def length_estimator(message: dict[str, Any]) -> int:
    """A deterministic, additive test estimator: one token per character of text, plus one."""
    content = message["content"]
    if isinstance(content, str):
        return 1 + len(content)
    total = 1
    for block in content:
        total += len(block.get("text", "")) + len(block.get("id", ""))
    return total


NUMBERS = st.integers(0, 10**9) | st.floats(0, 1e9, allow_nan=False)


@st.composite
def valid_entries(draw: st.DrawFn) -> dict[str, Any]:
    """One valid entry of any type (its parent need not exist)."""
    common = {"id": draw(TEXT.filter(bool)), "timestamp": draw(NUMBERS)}
    kind = draw(st.sampled_from(["message", "metadata", "compaction"]))
    if kind == "compaction":
        return {
            "type": "compaction",
            **common,
            "parentId": draw(TEXT.filter(bool)),
            "summary": draw(SUMMARIES),
            "firstKeptEntryId": draw(TEXT.filter(bool)),
            "tokensBefore": draw(NUMBERS),
        }
    parent = draw(st.none() | TEXT.filter(bool))
    if kind == "metadata":
        return {
            "type": "metadata",
            **common,
            "parentId": parent,
            "key": draw(TEXT.filter(bool)),
            "value": draw(JSON),
        }
    group = draw(interactions(0))
    return {
        "type": "message",
        **common,
        "parentId": parent,
        "message": draw(st.sampled_from(group)),
    }
