"""Chapter 12's focused tests: 3/3 → 2/2 across Labs 12.1 and 12.2.

Each test names its lab (``lab_12_N`` in the name, ``@pytest.mark.lab("12.N")``) and reaches
the implementation only through the ``impl`` fixture, so the same tests grade the reference
and a learner's workspace.
"""

from __future__ import annotations

import copy
import re
from typing import Any

import pytest

from course.locale import gettext as _

CHAPTER_COSTS = {
    "u1": 12, "a1": 14, "u2": 11, "a2": 17, "u3": 14,
    "calls": 18, "r-test": 7, "r-read": 8, "a3": 10,
}  # fmt: skip
"""Chapter 11's nine messages as the character estimate costs them (the chapter's table)."""
CHAPTER_BUDGET = {"system_prompt": "sys", "reserved_output": 4, "safety_margin": 2}


def chapter_path(impl: Any) -> list[Any]:
    return [impl.session.parse_session_entry(value) for value in impl.fixtures.chapter_path_json()]


def refusal(impl: Any, message: object) -> str:
    """The message of the refusal ``estimate_tokens(message)`` raises."""
    with pytest.raises(ValueError) as raised:
        impl.tokens.estimate_tokens(message)
    return str(raised.value)


# --------------------------------------------------------------------------- Lab 12.1


@pytest.mark.lab("12.1")
def test_lab_12_1_counts_four_ascii_characters_a_token(impl: Any) -> None:
    estimate = impl.tokens.estimate_tokens
    said = _("estimate_tokens({message!r}) should be {expected}, got {got}")
    for content, expected in [("", 3), ("abcd", 4), ("abcde", 5), ("hello world", 6)]:
        message = {"role": "user", "content": content}
        got = estimate(message)
        assert got == expected, said.format(message=message, expected=expected, got=got)
        assert type(got) is int, _("an estimate is a whole number of tokens")
    halves = [{"type": "text", "text": "hello "}, {"type": "text", "text": "world"}]
    blocks = {"role": "assistant", "content": halves}
    assert estimate(blocks) == 6, _("a message's text blocks count as one text")


@pytest.mark.lab("12.1")
def test_lab_12_1_counts_cjk_characters_and_tool_calls(impl: Any) -> None:
    estimate = impl.tokens.estimate_tokens
    assert estimate({"role": "user", "content": "你好"}) == 5, _("a CJK character is a token")
    assert estimate({"role": "user", "content": "读 main.py"}) == 3 + 2 + 1
    call = {"type": "toolCall", "id": "c1", "name": "read", "arguments": {"path": "a", "n": 1}}
    # read{"n": 1, "path": "a"}: 25 characters, keys sorted
    assert estimate({"role": "assistant", "content": [call]}) == 3 + 7
    path = chapter_path(impl)
    costs = {entry.id: estimate(entry.message) for entry in path if hasattr(entry, "message")}
    assert costs == CHAPTER_COSTS, _("chapter 11's messages should cost the chapter's table")
    assert [entry.id for entry in path] == list(CHAPTER_COSTS)


@pytest.mark.lab("12.1")
def test_lab_12_1_refuses_what_is_not_a_message(impl: Any) -> None:
    refused = {
        "message": ["hello"],
        "message.content": {"role": "user", "content": 7},
        "message.content[1]": {"role": "user", "content": [{"type": "text", "text": ""}, "x"]},
        "message.content[0].text": {"role": "user", "content": [{"type": "text", "text": None}]},
        "message.content[0].type": {"role": "user", "content": [{"type": "image"}]},
    }
    for field, message in refused.items():
        before = copy.deepcopy(message)
        said = refusal(impl, message)
        named = re.match(re.escape(field) + "[:：]", said)  # the colon of either edition
        assert named, _("the refusal should name {field}, got {said}").format(
            field=field, said=said
        )
        assert message == before, _("a refused message is left as it was")


# --------------------------------------------------------------------------- Lab 12.2


@pytest.mark.lab("12.2")
def test_lab_12_2_asks_once_per_distinct_message(impl: Any) -> None:
    asked: list[Any] = []

    def counting(message: dict[str, Any]) -> int:
        asked.append(copy.deepcopy(message))
        if message.get("content") == "refuse":
            raise ValueError("refused")
        return len(str(message.get("content")))

    estimate = impl.tokens.cached(counting)
    first = {"role": "user", "content": "hello"}
    same = {"content": "hello", "role": "user"}
    other = {"role": "user", "content": "hello!"}
    assert [estimate(first), estimate(same), estimate(other), estimate(first)] == [5, 5, 6, 5]
    assert asked == [first, other], _("each distinct message should be estimated once")
    for _attempt in range(2):
        with pytest.raises(ValueError):
            estimate({"role": "user", "content": "refuse"})
    assert len(asked) == 4, _("a refused message should be asked again, never kept")


@pytest.mark.lab("12.2")
def test_lab_12_2_reproduces_the_budget_decision(impl: Any) -> None:
    path = chapter_path(impl)
    before = [impl.session.entry_to_json(entry) for entry in path]
    decisions = {
        100: (["u2", "a2", "u3", "calls", "r-test", "r-read", "a3"], "trimmed", 90, 85),
        60: (["u3", "calls", "r-test", "r-read", "a3"], "single_group_overflow", 50, 57),
        121: (list(CHAPTER_COSTS), "within_budget", 111, 111),
    }
    for max_tokens, (kept, reason, available, messages) in decisions.items():
        result = impl.tokens.estimated_context(path, max_tokens=max_tokens, **CHAPTER_BUDGET)
        said = _("at max_tokens={max_tokens}, keep {kept} ({reason})").format(
            max_tokens=max_tokens, kept=kept, reason=reason
        )
        assert (result.kept_entry_ids, result.reason) == (kept, reason), said
        tokens = result.tokens
        assert (tokens.system, tokens.available_for_messages, tokens.messages) == (
            4,
            available,
            messages,
        ), said
        plain = impl.context.build_context(
            path,
            max_tokens=max_tokens,
            estimate_tokens=impl.tokens.estimate_tokens,
            **CHAPTER_BUDGET,
        )
        assert result == plain, _("the cache should change no decision of build_context")
    assert [impl.session.entry_to_json(entry) for entry in path] == before
