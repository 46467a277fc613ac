"""Invariants of grouping, projection and storage over generated histories."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from json_strategies import ANY_JSON, length_estimator, valid_entries

from course.compaction import create_compaction_entry
from course.context import budget_report, build_context
from course.curricula.ch11.strategies import SUMMARIES, histories
from course.groups import group_interactions
from course.session import (
    JsonlSessionStore,
    SessionEntryError,
    SessionStoreError,
    entry_to_json,
    parse_entries,
    parse_session_entry,
    recover_jsonl,
)

BUDGETS = st.fixed_dictionaries(
    {
        "max_tokens": st.integers(0, 400),
        "reserved_output": st.integers(0, 40),
        "safety_margin": st.integers(0, 20),
        "system_prompt": st.sampled_from(["", "sys", "You are a careful coding agent."]),
    }
)


def project(path: list[Any], budget: dict[str, Any]) -> Any:
    return build_context(path, estimate_tokens=length_estimator, **budget)


@given(histories(), BUDGETS)
def test_kept_ids_are_a_suffix_of_whole_groups(
    history: list[dict[str, Any]], budget: dict[str, Any]
) -> None:
    path = parse_entries(history)
    groups = group_interactions(path)
    result = project(path, budget)
    suffixes = [[i for g in groups[k:] for i in g.entry_ids] for k in range(len(groups) + 1)]
    assert result.kept_entry_ids in suffixes
    if groups:
        assert result.kept_entry_ids[-len(groups[-1].entries) :] == groups[-1].entry_ids, (
            "the newest group is always kept"
        )


@given(histories(), BUDGETS)
def test_total_fits_unless_the_newest_group_overflows(
    history: list[dict[str, Any]], budget: dict[str, Any]
) -> None:
    path = parse_entries(history)
    groups = group_interactions(path)
    result = project(path, budget)
    tokens = result.tokens
    assert (
        tokens.total
        == tokens.system + tokens.messages + tokens.reserved_output + tokens.safety_margin
    )
    assert tokens.available_for_messages == max(
        0,
        budget["max_tokens"] - tokens.system - budget["reserved_output"] - budget["safety_margin"],
    )
    if result.reason == "single_group_overflow":
        assert result.kept_entry_ids == groups[-1].entry_ids
        assert tokens.messages > tokens.available_for_messages
    else:
        assert tokens.messages <= tokens.available_for_messages
    kept_groups = [g for g in groups if g.entry_ids[0] in result.kept_entry_ids]
    if result.reason == "trimmed":
        dropped = groups[len(groups) - len(kept_groups) - 1]
        cost = sum(length_estimator(e.message) for e in dropped.entries)
        assert tokens.messages + cost > tokens.available_for_messages, (
            "the selection stops only at a group that does not fit"
        )
    if result.reason == "within_budget":
        assert len(kept_groups) == len(groups)


@given(histories(), BUDGETS)
def test_equal_inputs_give_equal_results_without_aliasing(
    history: list[dict[str, Any]], budget: dict[str, Any]
) -> None:
    path = parse_entries(history)
    first = project(path, budget)
    for message in first.messages:
        message["content"] = "mutated"
    first.kept_entry_ids.clear()
    assert project(path, budget) == project(parse_entries(history), budget)
    assert [entry_to_json(e) for e in path] == history


@given(histories(min_groups=1), st.integers(0, 200))
def test_budget_report_agrees_with_build_context(
    history: list[dict[str, Any]], available: int
) -> None:
    path = parse_entries(history)
    groups = group_interactions(path)
    report = budget_report(groups, estimate_tokens=length_estimator, available=available)
    result = build_context(
        path,
        max_tokens=available + 1,
        system_prompt="",
        reserved_output=0,
        safety_margin=0,
        estimate_tokens=length_estimator,
    )
    assert result.tokens.available_for_messages == available
    kept = [i for row in report if row.status != "trimmed" for i in row.entry_ids]
    assert kept == result.kept_entry_ids
    assert ("overflow" in [row.status for row in report]) == (
        result.reason == "single_group_overflow"
    )
    assert [row.tokens for row in report] == [
        sum(length_estimator(e.message) for e in g.entries) for g in groups
    ]


@given(histories(min_groups=2), st.data())
def test_resume_keeps_the_suffix_after_any_group_start(
    history: list[dict[str, Any]], data: st.DataObject
) -> None:
    path = parse_entries(history)
    starts = [g.entry_ids[0] for g in group_interactions(path)]
    first_kept = data.draw(st.sampled_from(starts))
    compaction = create_compaction_entry(
        path,
        id="compact",
        timestamp=1e6,
        summary=data.draw(SUMMARIES),
        first_kept_entry_id=first_kept,
        tokens_before=1,
    )
    resumed = [*path, compaction]
    result = build_context(
        resumed,
        max_tokens=10**6,
        system_prompt="",
        reserved_output=0,
        safety_margin=0,
        estimate_tokens=length_estimator,
    )
    ids = [e.id for e in path if e.type == "message"]
    assert result.kept_entry_ids == ids[ids.index(first_kept) :]
    assert len(result.messages) == len(result.kept_entry_ids) + 1
    assert result.compaction_id == "compact"


@settings(suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(valid_entries(), max_size=8, unique_by=lambda e: e["id"]))
def test_jsonl_round_trips_arbitrary_valid_entries(
    tmp_path: Path, values: list[dict[str, Any]]
) -> None:
    for value in values:
        assert entry_to_json(parse_session_entry(value)) == value
    log = tmp_path / f"log-{abs(hash(json.dumps(values, sort_keys=True)))}.jsonl"
    log.unlink(missing_ok=True)
    roots = [{**v, "parentId": None} if v["type"] != "compaction" else v for v in values]
    with JsonlSessionStore(log) as store:
        appended = []
        for value in roots:
            if value["type"] == "compaction" and value["parentId"] not in store:
                continue
            store.append(value)
            appended.append(value)
    recovered = recover_jsonl(log.read_bytes())
    assert [entry_to_json(e) for e in recovered.entries] == appended
    assert recovered.warnings == []


@given(ANY_JSON)
def test_parser_raises_only_its_own_error_on_arbitrary_json(value: Any) -> None:
    try:
        entry = parse_session_entry(value)
    except SessionEntryError:
        return
    assert entry_to_json(entry) == value


@given(valid_entries(), st.data())
def test_parser_rejects_any_damaged_field_with_its_own_error(
    value: dict[str, Any], data: st.DataObject
) -> None:
    key = data.draw(st.sampled_from(sorted(value)))
    damaged = {**value, key: data.draw(ANY_JSON)}
    try:
        entry = parse_session_entry(damaged)
    except SessionEntryError as error:
        if key != "id":
            assert str(error).startswith(value["id"]), "the error names the entry"
        return
    assert entry_to_json(entry) == damaged


@given(st.binary(max_size=200) | st.text(max_size=200))
def test_recovery_raises_only_its_own_error_on_arbitrary_input(data: bytes | str) -> None:
    try:
        recovered = recover_jsonl(data)
    except SessionStoreError as error:
        assert str(error).startswith("line ")
        return
    for entry in recovered.entries:
        parse_session_entry(entry)


@pytest.mark.parametrize("value", [{"type": "message"}, [], None, "x", 1.5])
def test_parser_names_the_entry_or_says_entry(value: Any) -> None:
    with pytest.raises(SessionEntryError, match=r"^entry"):
        parse_session_entry(value)
