"""Chapter 11's focused tests: 3/3 → 3/3 → 3/3 → 2/2 → 3/3 across Labs 11.1 to 11.5.

Each test names its lab (``lab_11_N`` in the name, ``@pytest.mark.lab("11.N")``) and reaches
the implementation only through the ``impl`` fixture, so the same tests grade the reference
and a learner's workspace.
"""

from __future__ import annotations

import copy
import json
import math
import re
from collections.abc import Callable
from typing import Any

import pytest

CHAPTER_IDS = ["u1", "a1", "u2", "a2", "u3", "calls", "r-test", "r-read", "a3"]
THIRD_GROUP = ["u3", "calls", "r-test", "r-read", "a3"]


# --------------------------------------------------------------------------- helpers


def chapter_json(impl: Any) -> list[dict[str, Any]]:
    return impl.fixtures.chapter_path_json()


def chapter_path(impl: Any) -> list[Any]:
    return [impl.session.parse_session_entry(value) for value in chapter_json(impl)]


def snapshot(impl: Any, path: list[Any]) -> list[dict[str, Any]]:
    return [impl.session.entry_to_json(entry) for entry in path]


def compact_1_json(impl: Any) -> dict[str, Any]:
    return {
        "type": "compaction",
        "id": "compact-1",
        "parentId": "a3",
        "timestamp": 100,
        "summary": copy.deepcopy(impl.fixtures.COMPACT_1_SUMMARY),
        "firstKeptEntryId": "u2",
        "tokensBefore": 29,
    }


def build(impl: Any, path: list[Any], max_tokens: float, estimator: Any = None) -> Any:
    options = impl.fixtures.CHAPTER_BUDGET.options() | {"max_tokens": max_tokens}
    return impl.context.build_context(
        path, **options, estimate_tokens=estimator or impl.fixtures.chapter_estimator
    )


def messages_by_id(impl: Any, ids: list[str]) -> list[dict[str, Any]]:
    by_id = {
        value["id"]: value["message"]
        for value in chapter_json(impl) + impl.fixtures.continuation_json()
    }
    return [by_id[i] for i in ids]


def compaction_record(impl: Any, raw: dict[str, Any]) -> Any:
    """A ``CompactionEntry`` built from the public types alone (no parser, no Lab 11.4 code).

    Lab 11.5's tests start from such a record so that they reach resume code first.
    """
    summary = copy.deepcopy(raw["summary"])
    return impl.session.CompactionEntry(
        id=raw["id"],
        parent_id=raw["parentId"],
        timestamp=raw["timestamp"],
        summary=impl.session.CompactionSummary(
            goal=summary["goal"],
            constraints=summary["constraints"],
            completed=summary["completed"],
            decisions=summary["decisions"],
            changed_files=summary["changedFiles"],
            unresolved=summary["unresolved"],
            next=summary["next"],
        ),
        first_kept_entry_id=raw["firstKeptEntryId"],
        tokens_before=raw["tokensBefore"],
    )


def resumed_path(impl: Any, first_kept: str = "u2") -> list[Any]:
    """u1 … a3 → compact-1 (keeps u2) → u4 → a4."""
    continuation = [impl.session.parse_session_entry(v) for v in impl.fixtures.continuation_json()]
    record = compaction_record(impl, compact_1_json(impl) | {"firstKeptEntryId": first_kept})
    return chapter_path(impl) + [record] + continuation


def summary_text(result: Any) -> str:
    first = result.messages[0]
    assert first["role"] == "user", "the summary must open the messages as a user message"
    assert isinstance(first["content"], str), "the summary message content must be a string"
    return str(first["content"])


def refused(case: str, call: Callable[[], object], naming: str | None = None) -> str:
    """Run ``call``; fail with ``case`` unless it raises a ValueError (one naming ``naming``)."""
    try:
        call()
    except ValueError as error:
        if naming is not None and not re.search(naming, str(error)):
            pytest.fail(f"{case}: the error should name {naming}, but says: {error}", pytrace=False)
        return str(error)
    pytest.fail(f"{case}: accepted, expected a ValueError", pytrace=False)


# --------------------------------------------------------------------------- Lab 11.1


@pytest.mark.lab("11.1")
def test_lab_11_1_parses_a_compaction_entry_strictly(impl: Any) -> None:
    raw = compact_1_json(impl)
    entry = impl.session.parse_session_entry(raw)
    assert entry.id == "compact-1" and entry.parent_id == "a3"
    assert entry.first_kept_entry_id == "u2" and entry.tokens_before == 29
    assert entry.summary.goal == raw["summary"]["goal"]
    assert entry.summary.changed_files == ["course/session.py"]
    assert impl.session.entry_to_json(entry) == raw, "entry_to_json must invert the parser"

    raw["summary"]["completed"].append("added after parsing")
    raw["summary"]["goal"] = "changed"
    assert entry.summary.completed == impl.fixtures.COMPACT_1_SUMMARY["completed"], (
        "the parsed summary must not share lists with the input"
    )
    entry.summary.decisions.append("changed through the result")
    assert raw["summary"]["decisions"] == impl.fixtures.COMPACT_1_SUMMARY["decisions"]

    def broken(change: Any) -> dict[str, Any]:
        value = compact_1_json(impl)
        change(value)
        return value

    def legacy_files(v: dict[str, Any]) -> None:
        v["summary"]["files"] = v["summary"].pop("changedFiles")

    cases = {
        "summary key 'files' instead of 'changedFiles'": (broken(legacy_files), "files"),
        "empty goal": (broken(lambda v: v["summary"].update(goal="")), "goal"),
        "empty parentId": (broken(lambda v: v.update(parentId="")), "parentId"),
        "empty firstKeptEntryId": (
            broken(lambda v: v.update(firstKeptEntryId="")),
            "firstKeptEntryId",
        ),
        "tokensBefore -1": (broken(lambda v: v.update(tokensBefore=-1)), "tokensBefore"),
        "tokensBefore NaN": (broken(lambda v: v.update(tokensBefore=math.nan)), "tokensBefore"),
        "tokensBefore True": (broken(lambda v: v.update(tokensBefore=True)), "tokensBefore"),
        "a number in summary.next": (broken(lambda v: v["summary"].update(next=["ok", 3])), "next"),
        "summary without constraints": (
            broken(lambda v: v["summary"].pop("constraints")),
            "constraints",
        ),
    }
    for case, (value, field) in cases.items():
        error = refused(case, lambda v=value: impl.session.parse_session_entry(v), "compact-1")
        assert field in error, f"{case}: the error should name {field}, but says: {error}"


@pytest.mark.lab("11.1")
def test_lab_11_1_memory_store_snapshots_a_compaction(impl: Any) -> None:
    store = impl.session.InMemorySessionStore()
    for value in chapter_json(impl):
        store.append(value)
    raw = compact_1_json(impl)
    store.append(raw)
    raw["summary"]["next"].append("mutated after append")

    entries = store.entries()
    assert [e.id for e in entries] == CHAPTER_IDS + ["compact-1"]
    stored = entries[-1]
    assert impl.session.entry_to_json(stored) == compact_1_json(impl)
    stored.summary.next.append("mutated through entries()")
    assert impl.session.entry_to_json(store.entries()[-1]) == compact_1_json(impl)

    with pytest.raises(ValueError, match="compact-1"):
        store.append(compact_1_json(impl))
    orphan = compact_1_json(impl) | {"id": "compact-x", "parentId": "missing"}
    with pytest.raises(ValueError, match="missing"):
        store.append(orphan)
    assert len(store.entries()) == 10, "rejected appends must leave the store unchanged"


@pytest.mark.lab("11.1")
def test_lab_11_1_jsonl_store_reopens_a_compaction(impl: Any, tmp_path: Any) -> None:
    log = tmp_path / "session.jsonl"
    store = impl.session.JsonlSessionStore(log)
    for value in chapter_json(impl) + [compact_1_json(impl)]:
        store.append(value)
    store.close()

    text = log.read_text(encoding="utf-8")
    lines = text.split("\n")
    assert text.endswith("\n") and lines[-1] == "", "every committed line ends with a newline"
    assert len(lines) - 1 == 10
    assert json.loads(lines[-2]) == compact_1_json(impl)

    with impl.session.JsonlSessionStore(log) as reopened:
        entries = reopened.entries()
        assert [e.id for e in entries] == CHAPTER_IDS + ["compact-1"]
        assert snapshot(impl, entries) == chapter_json(impl) + [compact_1_json(impl)]
        reopened.append(
            {
                "type": "message",
                "id": "u4",
                "parentId": "compact-1",
                "timestamp": 101,
                "message": {"role": "user", "content": "next"},
            }
        )
    with impl.session.JsonlSessionStore(log) as again:
        assert [e.id for e in again.entries()][-2:] == ["compact-1", "u4"]


# --------------------------------------------------------------------------- Lab 11.2


@pytest.mark.lab("11.2")
def test_lab_11_2_groups_the_chapter_path_into_three_interactions(impl: Any) -> None:
    path = chapter_path(impl)
    before = snapshot(impl, path)
    groups = impl.groups.group_interactions(path)
    assert [g.entry_ids for g in groups] == [["u1", "a1"], ["u2", "a2"], THIRD_GROUP]
    assert [e.id for e in groups[2].entries] == THIRD_GROUP

    calls = groups[2].entries[1]
    assert calls is not path[5], "groups must hold copies, not the path's entries"
    calls.message["content"][1]["arguments"]["path"] = "changed.ts"
    assert snapshot(impl, path) == before, "mutating a group must not touch the path"

    metadata = impl.session.parse_session_entry(
        {
            "type": "metadata",
            "id": "m1",
            "parentId": "u1",
            "timestamp": 1.5,
            "key": "model",
            "value": {"name": "test"},
        }
    )
    with_metadata = path[:1] + [metadata] + path[1:]
    assert [g.entry_ids for g in impl.groups.group_interactions(with_metadata)] == [
        ["u1", "a1"],
        ["u2", "a2"],
        THIRD_GROUP,
    ], "non-message entries are skipped"
    assert impl.groups.group_interactions([]) == []


@pytest.mark.lab("11.2")
def test_lab_11_2_pairs_results_by_call_id_not_position(impl: Any) -> None:
    values = chapter_json(impl)
    by_id = {v["id"]: v for v in values}
    # r-test moved in front of calls: still one interaction, still in path order.
    moved = [by_id[i] for i in ["u1", "a1", "u2", "a2", "u3", "r-test", "calls", "r-read", "a3"]]
    path = [impl.session.parse_session_entry(v) for v in moved]
    groups = impl.groups.group_interactions(path)
    assert [g.entry_ids for g in groups] == [
        ["u1", "a1"],
        ["u2", "a2"],
        ["u3", "r-test", "calls", "r-read", "a3"],
    ]
    # results in declaration order are just as valid as the fixture's reversed order
    ordered = [by_id[i] for i in ["u3", "calls", "r-read", "r-test", "a3"]]
    groups = impl.groups.group_interactions([impl.session.parse_session_entry(v) for v in ordered])
    assert [g.entry_ids for g in groups] == [["u3", "calls", "r-read", "r-test", "a3"]]


@pytest.mark.lab("11.2")
def test_lab_11_2_rejects_broken_tool_facts(impl: Any) -> None:
    def path_with(change: Any, drop: tuple[str, ...] = ()) -> list[Any]:
        values = [v for v in chapter_json(impl) if v["id"] not in drop]
        change({v["id"]: v for v in values})
        return [impl.session.parse_session_entry(v) for v in values]

    def unknown_call(by_id: dict[str, Any]) -> None:
        by_id["r-test"]["message"]["toolCallId"] = "unknown-1"

    def duplicate_result(by_id: dict[str, Any]) -> None:
        by_id["r-read"]["message"]["toolCallId"] = "test-1"

    def duplicate_call(by_id: dict[str, Any]) -> None:
        by_id["calls"]["message"]["content"][2]["id"] = "read-1"

    def result_in_next_group(by_id: dict[str, Any]) -> None:
        by_id["a3"]["message"] = {"role": "user", "content": "interrupt"}

    cases = {
        "a result for an unknown call": (path_with(unknown_call), "unknown-1"),
        "a call without its result": (path_with(lambda _: None, drop=("r-read",)), "read-1"),
        "two results for one call": (path_with(duplicate_result), "(test-1|read-1|r-read)"),
        "one call id declared twice": (path_with(duplicate_call), "(read-1|test-1|calls)"),
    }
    interrupted = path_with(lambda _: None)
    interrupted.insert(
        6,
        impl.session.parse_session_entry(
            {
                "type": "message",
                "id": "u-mid",
                "parentId": "calls",
                "timestamp": 6.5,
                "message": {"role": "user", "content": "interrupt"},
            }
        ),
    )
    cases["a user message between calls and their results"] = (
        interrupted,
        "(test-1|read-1|r-test|r-read|calls)",
    )
    for case, (path, named) in cases.items():
        refused(case, lambda p=path: impl.groups.group_interactions(p), named)


# --------------------------------------------------------------------------- Lab 11.3


@pytest.mark.lab("11.3")
def test_lab_11_3_deducts_fixed_costs_before_choosing_groups(impl: Any) -> None:
    path = chapter_path(impl)
    before = snapshot(impl, path)
    result = build(impl, path, 31)
    kept = ["u2", "a2"] + THIRD_GROUP
    assert result.system_prompt == "sys"
    assert result.kept_entry_ids == kept
    assert result.reason == "trimmed"
    tokens = result.tokens
    assert (
        tokens.max_tokens,
        tokens.system,
        tokens.messages,
        tokens.reserved_output,
        tokens.safety_margin,
        tokens.available_for_messages,
        tokens.total,
    ) == (31, 3, 22, 4, 2, 22, 31)
    assert result.messages == messages_by_id(impl, kept)
    result.messages[3]["content"][1]["arguments"]["path"] = "changed.ts"
    assert snapshot(impl, path) == before, "returned messages must be copies"

    everything = build(impl, path, 40)
    assert everything.kept_entry_ids == CHAPTER_IDS and everything.reason == "within_budget"
    assert everything.tokens.messages == 29 and everything.tokens.total == 38

    starved = build(impl, path, 5)
    assert starved.tokens.available_for_messages == 0, "fixed costs never go negative"
    assert starved.kept_entry_ids == THIRD_GROUP

    for bad in (
        {"max_tokens": math.nan},
        {"max_tokens": -1},
        {"max_tokens": True},
        {"reserved_output": math.inf},
        {"safety_margin": -0.5},
    ):
        options = impl.fixtures.CHAPTER_BUDGET.options() | bad
        refused(
            f"build_context with {bad}",
            lambda o=options: impl.context.build_context(
                path, estimate_tokens=impl.fixtures.chapter_estimator, **o
            ),
        )
    for answer in (math.nan, -1, True, "3"):
        refused(
            f"an estimator answering {answer!r}",
            lambda a=answer: build(impl, path, 31, estimator=lambda message: a),
        )


@pytest.mark.lab("11.3")
def test_lab_11_3_keeps_an_overflowing_newest_group_whole(impl: Any) -> None:
    result = build(impl, chapter_path(impl), 19)
    assert result.tokens.available_for_messages == 10
    assert result.kept_entry_ids == THIRD_GROUP, (
        "the newest group must come back whole: user, both calls, both results, answer"
    )
    assert [m["role"] for m in result.messages] == [
        "user",
        "assistant",
        "toolResult",
        "toolResult",
        "assistant",
    ]
    assert result.reason == "single_group_overflow"
    assert result.tokens.messages == 15 and result.tokens.total == 24 > 19


@pytest.mark.lab("11.3")
def test_lab_11_3_trims_only_at_group_boundaries(impl: Any) -> None:
    path = chapter_path(impl)
    expected = {
        15: (THIRD_GROUP, "trimmed"),
        21: (THIRD_GROUP, "trimmed"),
        22: (["u2", "a2"] + THIRD_GROUP, "trimmed"),
        28: (["u2", "a2"] + THIRD_GROUP, "trimmed"),
        29: (CHAPTER_IDS, "within_budget"),
    }
    for available, (kept, reason) in expected.items():
        result = build(impl, path, available + 9)
        assert (result.kept_entry_ids, result.reason) == (kept, reason), (
            f"with {available} tokens for messages"
        )
    allowed = [CHAPTER_IDS, CHAPTER_IDS[2:], THIRD_GROUP]
    for max_tokens in range(0, 45):
        result = build(impl, path, max_tokens)
        assert result.kept_entry_ids in allowed, f"cut inside a group at max_tokens={max_tokens}"
        assert result.tokens.total <= max_tokens or result.reason == "single_group_overflow"

    seen: list[dict[str, Any]] = []

    def meddling(message: dict[str, Any]) -> int:
        seen.append(message)
        cost = int(impl.fixtures.chapter_estimator(message))
        message["content"] = "overwritten by the estimator"
        return cost

    before = snapshot(impl, path)
    result = build(impl, path, 31, estimator=meddling)
    assert result.kept_entry_ids == ["u2", "a2"] + THIRD_GROUP
    assert snapshot(impl, path) == before, "the estimator must receive copies"
    assert result.messages == messages_by_id(impl, result.kept_entry_ids)
    assert all(m is not r for m in seen for r in result.messages)


# --------------------------------------------------------------------------- Lab 11.4


@pytest.mark.lab("11.4")
def test_lab_11_4_creates_a_record_after_the_leaf_without_writing(impl: Any) -> None:
    path = chapter_path(impl)
    before = snapshot(impl, path)
    summary = copy.deepcopy(impl.fixtures.COMPACT_1_SUMMARY)
    entry = impl.compaction.create_compaction_entry(
        path,
        id="compact-1",
        timestamp=100,
        summary=summary,
        first_kept_entry_id="u2",
        tokens_before=29,
    )
    assert impl.session.entry_to_json(entry) == compact_1_json(impl)
    summary["completed"].append("mutated input")
    entry.summary.next.append("mutated record")
    assert snapshot(impl, path) == before
    again = impl.compaction.create_compaction_entry(
        path,
        id="compact-1",
        timestamp=100,
        summary=impl.fixtures.COMPACT_1_SUMMARY,
        first_kept_entry_id="u2",
        tokens_before=29,
    )
    assert impl.session.entry_to_json(again) == compact_1_json(impl)

    metadata = impl.session.parse_session_entry(
        {
            "type": "metadata",
            "id": "m9",
            "parentId": "a3",
            "timestamp": 99,
            "key": "model",
            "value": "other",
        }
    )
    after_metadata = impl.compaction.create_compaction_entry(
        path + [metadata],
        id="compact-1",
        timestamp=100,
        summary=summary,
        first_kept_entry_id="u3",
        tokens_before=15,
    )
    assert after_metadata.parent_id == "m9", "the parent is the path's last entry, whatever it is"


@pytest.mark.lab("11.4")
def test_lab_11_4_rejects_empty_paths_duplicate_ids_and_in_group_cuts(impl: Any) -> None:
    path = chapter_path(impl)

    def create(on: list[Any], entry_id: str = "compact-1", first_kept: str = "u2") -> Any:
        return impl.compaction.create_compaction_entry(
            on,
            id=entry_id,
            timestamp=100,
            summary=impl.fixtures.COMPACT_1_SUMMARY,
            first_kept_entry_id=first_kept,
            tokens_before=29,
        )

    refused("an empty path", lambda: create([]))
    refused("an id already on the path (a3)", lambda: create(path, entry_id="a3"), "a3")
    for inside in ("a1", "a2", "calls", "r-test", "r-read", "a3", "nowhere"):
        refused(f"first kept {inside}", lambda i=inside: create(path, first_kept=i), inside)
    for start in ("u1", "u2", "u3"):
        assert create(path, first_kept=start).first_kept_entry_id == start
    bad_summary = copy.deepcopy(impl.fixtures.COMPACT_1_SUMMARY)
    bad_summary["files"] = bad_summary.pop("changedFiles")
    with pytest.raises(ValueError, match="files"):
        impl.compaction.create_compaction_entry(
            path,
            id="compact-1",
            timestamp=100,
            summary=bad_summary,
            first_kept_entry_id="u2",
            tokens_before=29,
        )
    with pytest.raises(ValueError):
        impl.compaction.create_compaction_entry(
            path,
            id="compact-1",
            timestamp=100,
            summary=impl.fixtures.COMPACT_1_SUMMARY,
            first_kept_entry_id="u2",
            tokens_before=-1,
        )


# --------------------------------------------------------------------------- Lab 11.5


@pytest.mark.lab("11.5")
def test_lab_11_5_resumes_from_the_latest_summary(impl: Any) -> None:
    path = resumed_path(impl)
    metadata = impl.session.parse_session_entry(
        {
            "type": "metadata",
            "id": "m2",
            "parentId": "a2",
            "timestamp": 4.5,
            "key": "model",
            "value": {"name": "other"},
        }
    )
    path.insert(4, metadata)
    kept = ["u2", "a2"] + THIRD_GROUP + ["u4", "a4"]

    result = build(impl, path, 200)
    text = summary_text(result)
    summary = impl.fixtures.COMPACT_1_SUMMARY
    assert summary["goal"] in text
    assert all(item in text for key in summary if key != "goal" for item in summary[key])
    assert result.kept_entry_ids == kept, "keep from first kept, skip metadata and compaction"
    assert result.messages[1:] == messages_by_id(impl, kept)
    assert result.reason == "within_budget"
    cost = impl.fixtures.chapter_estimator(result.messages[0])
    assert result.tokens.messages == cost + 7 + 15 + 6

    # the summary's cost comes off the budget first: 27 left for groups of 7, 15 and 6
    tight = build(impl, path, 9 + cost + 27)
    assert tight.kept_entry_ids == THIRD_GROUP + ["u4", "a4"]
    assert tight.reason == "trimmed"
    assert tight.tokens.messages == cost + 21
    assert summary_text(tight) == text

    # a record read back from a log may carry a first kept id that no creator would accept
    for first_kept in ("calls", "a2", "u4", "nowhere"):
        error = refused(
            f"resuming from a record whose first kept is {first_kept}",
            lambda f=first_kept: build(impl, resumed_path(impl, first_kept=f), 200),
            "compact-1",
        )
        assert first_kept in error, f"the error should name {first_kept}, but says: {error}"


@pytest.mark.lab("11.5")
def test_lab_11_5_repeated_builds_are_equal_and_isolated(impl: Any) -> None:
    path = resumed_path(impl)
    before = snapshot(impl, path)
    first = build(impl, path, 60)
    second = build(impl, path, 60)
    assert first == second
    first.messages[0]["content"] = "rewritten summary"
    calls = next(
        m
        for m in first.messages
        if m["role"] == "assistant" and any(b["type"] == "toolCall" for b in m["content"])
    )
    calls["content"][1]["arguments"]["path"] = "rewritten.ts"
    first.kept_entry_ids.append("bogus")
    third = build(impl, path, 60)
    assert third == second, "a later build must not see changes made to an earlier result"
    assert snapshot(impl, path) == before, "building must never rewrite session entries"


@pytest.mark.lab("11.5")
def test_lab_11_5_second_compaction_renders_only_the_latest_summary(impl: Any) -> None:
    path = resumed_path(impl)
    before = summary_text(build(impl, path, 200))
    assert "The active path restores only the selected branch" in before, (
        "until compact-2 exists, compact-1's summary opens the messages"
    )
    with pytest.raises(ValueError, match="calls"):
        impl.compaction.create_compaction_entry(
            path,
            id="compact-2",
            timestamp=200,
            summary=impl.fixtures.COMPACT_2_SUMMARY,
            first_kept_entry_id="calls",
            tokens_before=50,
        )
    compact_2 = impl.compaction.create_compaction_entry(
        path,
        id="compact-2",
        timestamp=200,
        summary=impl.fixtures.COMPACT_2_SUMMARY,
        first_kept_entry_id="u3",
        tokens_before=50,
    )
    assert compact_2.parent_id == "a4"
    path = path + [compact_2]

    result = build(impl, path, 200)
    text = summary_text(result)
    summaries = [
        m
        for m in result.messages
        if isinstance(m["content"], str) and "Check that session resume" in m["content"]
    ]
    assert len(summaries) == 1, "only the latest summary becomes a message"
    assert "The active path restores only the selected branch" not in text, (
        "compact-1's summary must not be rendered once compact-2 exists"
    )
    second = impl.fixtures.COMPACT_2_SUMMARY
    order = [text.index(second["goal"])] + [
        text.index(second[key][0])
        for key in ("constraints", "completed", "decisions", "changedFiles", "unresolved", "next")
    ]
    assert order == sorted(order), "the seven fields appear in their fixed order"
    assert result.kept_entry_ids == THIRD_GROUP + ["u4", "a4"]
    assert "compact-1" not in result.kept_entry_ids and "compact-2" not in result.kept_entry_ids
