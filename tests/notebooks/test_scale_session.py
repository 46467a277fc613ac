"""The generated long session: deterministic, valid, and varied enough to test the budget."""

from __future__ import annotations

import pytest

from course.display.notebook import Implementation
from course.display.scale import generated_session_json


def test_the_same_seed_gives_the_same_session() -> None:
    assert generated_session_json(50, seed=3) == generated_session_json(50, seed=3)
    assert generated_session_json(50, seed=3) != generated_session_json(50, seed=4)


def test_it_parses_and_groups_into_the_requested_interactions(
    reference: Implementation,
) -> None:
    values = generated_session_json(300, seed=11)
    path = reference.parse(values)
    groups = reference.context.group_interactions(path)
    assert len(groups) == 300
    assert [e["parentId"] for e in values[1:]] == [e["id"] for e in values[:-1]]
    assert len({e["id"] for e in values}) == len(values)
    costs = [sum(reference.estimator()(e.message) for e in g.entries) for g in groups]
    assert max(costs) >= 4 * min(costs), "group sizes must differ widely"


def test_some_results_complete_out_of_declaration_order() -> None:
    values = generated_session_json(300, seed=11)
    orders = []
    for index, value in enumerate(values):
        content = value["message"]["content"]
        if not isinstance(content, list):
            continue
        calls = [b["id"] for b in content if b.get("type") == "toolCall"]
        if len(calls) > 1:
            following = values[index + 1 : index + 1 + len(calls)]
            orders.append([v["message"]["toolCallId"] for v in following] == calls)
    assert True in orders and False in orders


def test_a_negative_count_is_refused() -> None:
    with pytest.raises(ValueError):
        generated_session_json(-1)
