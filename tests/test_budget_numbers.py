"""What build_context refuses to answer for: repeated entries and numbers that are not finite."""

from __future__ import annotations

from typing import Any

import pytest

from course.context import BudgetError, build_context, check_amount
from course.fixtures import chapter_estimator, chapter_path
from course.session import (
    MetadataEntry,
    SessionEntry,
    SessionEntryError,
    parse_session_entry,
)


def project(path: list[SessionEntry], estimate: Any = chapter_estimator, **options: Any) -> Any:
    settings: dict[str, Any] = {
        "max_tokens": 100,
        "system_prompt": "sys",
        "reserved_output": 0,
        "safety_margin": 0,
        "estimate_tokens": estimate,
    }
    return build_context(path, **(settings | options))


class LyingInt(int):
    """Says it is never below anything, whatever its value."""

    def __lt__(self, other: object) -> bool:
        return False

    def __le__(self, other: object) -> bool:
        return False

    def __ge__(self, other: object) -> bool:
        return True

    def __gt__(self, other: object) -> bool:
        return True


class Disguised(int):
    """Converts to numbers other than its own value."""

    def __float__(self) -> float:
        return 5.0

    def __int__(self) -> int:
        return 5

    def __index__(self) -> int:
        return 5


class DisguisedFloat(float):
    def __float__(self) -> float:
        return 5.0


# --------------------------------------------------------------------------- repeated entries


def test_a_path_that_lists_its_entries_twice_is_refused_naming_the_entry() -> None:
    path = chapter_path()
    with pytest.raises(SessionEntryError, match=r"^u1: appears twice on the path \(again at 9\)"):
        project(path + path)


def test_a_repeated_id_is_refused_before_the_estimator_is_asked() -> None:
    path = chapter_path()
    asked: list[object] = []

    def recording(message: dict[str, Any]) -> int:
        asked.append(message)
        return 1

    with pytest.raises(SessionEntryError, match=r"^a3: appears twice"):
        project([*path, path[-1]], recording)
    assert asked == []


# --------------------------------------------------------------------------- non-finite totals


def test_estimates_whose_sum_overflows_are_a_budget_error_not_an_infinite_total() -> None:
    with pytest.raises(BudgetError, match=r"must be a non-negative finite number, got inf"):
        project(chapter_path(), lambda message: 1e308, max_tokens=0)


def test_a_request_total_that_overflows_is_a_budget_error() -> None:
    with pytest.raises(BudgetError, match=r"^the request's total: .* got inf"):
        project(chapter_path(), reserved_output=1e308, safety_margin=1e308)


def test_an_integer_estimate_too_large_for_a_float_is_a_budget_error() -> None:
    with pytest.raises(BudgetError, match=r"^estimate_tokens\(system prompt\): .* huge integer"):
        project(chapter_path(), lambda message: 10**400)


def test_an_integer_budget_too_large_for_a_float_is_a_budget_error() -> None:
    with pytest.raises(BudgetError, match=r"^max_tokens: .* huge integer"):
        project(chapter_path(), max_tokens=10**400)


# --------------------------------------------------------------------------- numbers as floats


def test_an_int_subclass_whose_comparisons_lie_cannot_bring_a_negative_cost() -> None:
    with pytest.raises(BudgetError, match=r"^estimate_tokens\(system prompt\): .* got -7\.0"):
        project(chapter_path(), lambda message: LyingInt(-7))
    with pytest.raises(BudgetError, match=r"^reserved_output: .* got -9994\.0"):
        project(chapter_path(), reserved_output=LyingInt(-9994))


def test_a_number_is_read_as_its_value_not_as_what_its_conversions_say() -> None:
    with pytest.raises(BudgetError, match=r"got -3\.0"):
        check_amount(Disguised(-3), "x")
    with pytest.raises(BudgetError, match=r"got -3\.0"):
        check_amount(DisguisedFloat(-3.0), "x")
    assert check_amount(Disguised(3), "x") == 3


def test_subclassed_numbers_come_back_as_plain_ints_and_floats() -> None:
    for value, plain in ((LyingInt(4), 4), (Disguised(2), 2), (DisguisedFloat(2.5), 2.5)):
        checked = check_amount(value, "x")
        assert type(checked) is type(plain) and checked == plain


def test_lying_estimates_give_plain_totals_that_add_up() -> None:
    outcome = project(chapter_path(), lambda message: LyingInt(1), max_tokens=LyingInt(1000))
    tokens = outcome.tokens
    numbers = [tokens.max_tokens, tokens.system, tokens.messages, tokens.total]
    assert all(type(number) is int for number in numbers)
    assert tokens.messages == len(outcome.messages) and tokens.total == 1 + tokens.messages


# --------------------------------------------------------------------------- numbers in entries


@pytest.mark.parametrize("number", [Disguised(-3), LyingInt(-3), DisguisedFloat(-3.0)])
def test_an_entry_number_is_read_for_its_own_value_not_what_it_says(number: int) -> None:
    raw = {
        "type": "message",
        "id": "u9",
        "parentId": None,
        "timestamp": number,
        "message": {"role": "user", "content": "hi"},
    }
    with pytest.raises(SessionEntryError, match=r"^u9\.timestamp: must be a non-negative finite"):
        parse_session_entry(raw)


def test_a_disguised_number_is_stored_as_the_plain_number_it_is() -> None:
    raw = {
        "type": "message",
        "id": "u9",
        "parentId": None,
        "timestamp": Disguised(7),
        "message": {"role": "user", "content": [{"type": "text", "text": "hi"}]},
    }
    entry = parse_session_entry(raw)
    assert type(entry.timestamp) is int and entry.timestamp == 7
    metadata = parse_session_entry(
        {
            "type": "metadata",
            "id": "m1",
            "parentId": None,
            "timestamp": 1,
            "key": "k",
            "value": {"n": Disguised(9), "f": DisguisedFloat(2.5)},
        }
    )
    assert isinstance(metadata, MetadataEntry)
    value = metadata.value
    assert value == {"n": 9, "f": 2.5}
    assert type(value["n"]) is int and type(value["f"]) is float
