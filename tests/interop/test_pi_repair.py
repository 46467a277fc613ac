"""The repair policies on small sessions: strict names the place, synthesize and drop fix it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pi_builders import (
    assistant,
    call,
    entry,
    header,
    jsonl,
    project,
    result,
    text,
    tree,
    user,
    write,
)

from course.groups import group_interactions
from course.interop import (
    ImportedSession,
    PiImportError,
    Policy,
    SplitTurn,
    convert_pi_session,
    import_pi_session,
)
from course.interop.pi_format import parse_pi_session
from course.interop.pi_repair import SYNTHETIC_RESULT, SYNTHETIC_USER
from course.session import CompactionEntry, MessageEntry, MetadataEntry, SessionEntry, path_to

REPAIRS: tuple[Policy, ...] = ("synthesize", "drop")


def leaves(imported: ImportedSession) -> list[str]:
    parents = {e.parent_id for e in imported.entries}
    return [e.id for e in imported.entries if e.id not in parents]


def assert_chapter_accepts_every_branch(imported: ImportedSession) -> None:
    """Every leaf's path groups into interactions and projects into a context."""
    assert imported.entries[-1].id == imported.leaf_id
    for leaf in leaves(imported):
        path = path_to(imported.entries, leaf)
        group_interactions(path)
        project(path)


def run(tmp_path: Path, lines: list[dict[str, Any]], repair: Policy) -> ImportedSession:
    imported = import_pi_session(write(tmp_path / "s.jsonl", lines), repair=repair)
    if repair != "strict":
        assert_chapter_accepts_every_branch(imported)
    return imported


def by_id(imported: ImportedSession) -> dict[str, SessionEntry]:
    return {e.id: e for e in imported.entries}


def message_of(imported: ImportedSession, entry_id: str) -> dict[str, Any]:
    entry = by_id(imported)[entry_id]
    assert isinstance(entry, MessageEntry)
    return entry.message


UNANSWERED = [
    header(),
    user("q", 1),
    assistant(
        text("try"),
        {"type": "toolCall", "id": "c1", "name": "bash", "arguments": {}},
        stop="length",
    ),
    user("again", 3),
]


# --------------------------------------------------------------------------- unanswered calls


def test_strict_names_the_line_and_id_of_an_unanswered_call(tmp_path: Path) -> None:
    with pytest.raises(PiImportError) as caught:
        run(tmp_path, UNANSWERED, "strict")
    [item] = caught.value.items
    assert (item.line, item.id, item.kind) == (3, "L3", "unanswered_call")
    assert str(caught.value).startswith(
        "line 3: L3: unanswered_call: tool call c1 (bash) has no result before the interaction "
        "ends at L4; the assistant message stopped with 'length'"
    )
    assert "repair 'synthesize' or 'drop'" in str(caught.value)


def test_synthesize_adds_a_result_that_says_so_before_the_next_user_message(tmp_path: Path) -> None:
    imported = run(tmp_path, UNANSWERED, "synthesize")
    assert [e.id for e in imported.path] == ["sess-1", "L2", "L3", "L3~result1", "L4"]
    assert message_of(imported, "L3~result1") == {
        "role": "toolResult",
        "toolCallId": "c1",
        "toolName": "bash",
        "content": [{"type": "text", "text": SYNTHETIC_RESULT}],
        "isError": True,
    }
    [item] = imported.report.repairs
    assert (item.line, item.id) == (3, "L3") and item.message.endswith(
        "synthesised result L3~result1"
    )


def test_drop_removes_the_call_and_keeps_the_text(tmp_path: Path) -> None:
    imported = run(tmp_path, UNANSWERED, "drop")
    assert message_of(imported, "L3")["content"] == [text("try")]
    assert len(imported.entries) == 4
    assert imported.report.repairs[0].message.endswith("the call is removed from the message")


def test_a_call_unanswered_at_the_end_gets_its_result_after_the_leaf(tmp_path: Path) -> None:
    lines = UNANSWERED[:3]
    imported = run(tmp_path, lines, "synthesize")
    assert imported.leaf_id == "L3~result1"
    assert imported.path[-2].id == "L3"
    assert "its path ends (at L3)" in imported.report.repairs[0].message
    assert run(tmp_path, lines, "drop").leaf_id == "L3"


def test_a_missing_result_goes_right_after_its_call_as_pi_places_it(tmp_path: Path) -> None:
    """assistant(c1) -> assistant -> user: Pi adds the result before the second assistant."""
    lines = [
        header(),
        user("q", 1),
        assistant(text("a"), call("c1"), call("c2"), second=2),
        result("c2", second=3),
        assistant(text("b"), second=4, stop="stop"),
        user("next", 5),
    ]
    imported = run(tmp_path, lines, "synthesize")
    assert [e.id for e in imported.path][2:] == ["L3", "L4", "L3~result1", "L5", "L6"]
    assert message_of(imported, "L3~result1")["toolCallId"] == "c1"
    assert imported.report.repairs[0].message.endswith(
        "synthesised result L3~result1, placed before L5"
    )


def test_a_result_missing_below_one_reply_on_two_branches_is_added_once(tmp_path: Path) -> None:
    lines = [
        header(3),
        *tree(
            [user("q", 1), assistant(call("c1")), assistant(text("b")), user("x", 4), user("y", 5)],
            parents={5: 3},
        ),
    ]
    imported = run(tmp_path, lines, "synthesize")
    assert [e.id for e in imported.entries].count("e2~result1") == 1
    assert "e2~result2" not in {e.id for e in imported.entries}
    assert [i.kind for i in imported.report.repairs] == ["unanswered_call"]


# --------------------------------------------------------------------------- what Pi never sends


def failed(stop: str, error: str) -> dict[str, Any]:
    line = assistant(text("half"), call("c1"), stop=stop)
    line["message"]["errorMessage"] = error
    return line


ABORTED = [header(), user("q", 1), failed("aborted", "Request was aborted"), user("again", 3)]


def test_an_aborted_message_is_data_as_pi_never_sends_it(tmp_path: Path) -> None:
    for repair in ("strict", *REPAIRS):
        imported = run(tmp_path, ABORTED, repair)
        data = by_id(imported)["L3"]
        assert isinstance(data, MetadataEntry) and data.key == "pi.message"
        assert data.value["message"]["stopReason"] == "aborted"
        assert data.value["reason"] == "stopped with 'aborted'"
        [item] = imported.report.of_kind("failed_message")
        assert item.message.startswith(
            "assistant message stopped with 'aborted' (Request was aborted); Pi drops it"
        )
        assert imported.report.repairs == []


def test_keep_failed_keeps_it_as_a_message_for_study(tmp_path: Path) -> None:
    path = write(tmp_path / "s.jsonl", ABORTED)
    with pytest.raises(PiImportError, match="stopped with 'aborted'"):
        import_pi_session(path, keep_failed=True)
    imported = import_pi_session(path, repair="synthesize", keep_failed=True)
    assert message_of(imported, "L3")["content"] == [text("half"), call("c1")]
    assert imported.report.of_kind("failed_message")[0].message.endswith(
        "kept as a message, as asked"
    )
    assert imported.report.keep_failed is True


@pytest.mark.parametrize("stop", ["length", "refusal"])
def test_an_unusual_stop_reason_is_reported(tmp_path: Path, stop: str) -> None:
    lines = [header(), user("q", 1), assistant(text("cut"), stop=stop)]
    [item] = run(tmp_path, lines, "strict").report.of_kind("stop_reason")
    assert (item.line, item.message) == (3, f"assistant message stopped with {stop!r}")


def test_an_unanswered_call_just_before_a_compaction(tmp_path: Path) -> None:
    """The shape of the second real session: a call, a compaction, then the next user message."""
    lines = [
        header(),
        user("one", 1),
        user("two", 2),
        assistant({"type": "toolCall", "id": "c1", "name": "bash", "arguments": {}}, second=3),
        entry("compaction", 4, summary="## Goal\ngo", firstKeptEntryIndex=2, tokensBefore=9),
        user("three", 5),
    ]
    imported = run(tmp_path, lines, "synthesize")
    assert [e.id for e in imported.path][-4:] == ["L5~summary", "L5", "L4~result1", "L6"]
    context = project(imported.path)
    assert context.compaction_id == "L5"
    assert context.kept_entry_ids == ["L3", "L4", "L4~result1", "L6"]
    dropped = run(tmp_path, lines, "drop")
    assert message_of(dropped, "L4")["content"] == []


# --------------------------------------------------------------------------- other rules


def test_orphan_and_second_results_are_kept_as_data(tmp_path: Path) -> None:
    lines = [
        header(),
        user("q", 1),
        assistant({"type": "toolCall", "id": "c1", "name": "read", "arguments": {}}),
        result("c1", output="first"),
        result("c1", output="second"),
        result("zz", output="stray"),
    ]
    with pytest.raises(PiImportError) as caught:
        run(tmp_path, lines, "strict")
    assert [(i.line, i.kind) for i in caught.value.items] == [
        (5, "orphan_result"),
        (6, "orphan_result"),
    ]
    assert "second result for tool call c1" in caught.value.items[0].message
    for repair in REPAIRS:
        imported = run(tmp_path, lines, repair)
        for entry_id, output in (("L5", "second"), ("L6", "stray")):
            data = by_id(imported)[entry_id]
            assert isinstance(data, MetadataEntry) and data.key == "pi.message"
            assert data.value["message"]["content"] == [text(output)]
            assert data.value["reason"] == "orphan tool result"


def test_a_call_id_declared_twice_is_renamed_with_the_results_that_follow(tmp_path: Path) -> None:
    call = {"type": "toolCall", "id": "c1", "name": "read", "arguments": {}}
    lines = [
        header(),
        user("q", 1),
        assistant(call),
        result("c1", output="one"),
        assistant(call),
        result("c1", output="two"),
    ]
    with pytest.raises(PiImportError, match="L5: duplicate_call: tool call id c1 is declared"):
        run(tmp_path, lines, "strict")
    for repair in REPAIRS:
        imported = run(tmp_path, lines, repair)
        assert message_of(imported, "L5")["content"][0]["id"] == "c1~2"
        assert message_of(imported, "L6")["toolCallId"] == "c1~2"
        assert message_of(imported, "L4")["toolCallId"] == "c1"


def test_an_assistant_before_any_user_message(tmp_path: Path) -> None:
    call = {"type": "toolCall", "id": "c1", "name": "read", "arguments": {}}
    lines = [header(), assistant(text("hello"), call, second=1), result("c1"), user("q", 3)]
    with pytest.raises(PiImportError) as caught:
        run(tmp_path, lines, "strict")
    assert caught.value.items[0].kind == "before_user"
    synthesized = run(tmp_path, lines, "synthesize")
    assert [e.id for e in synthesized.path] == ["sess-1", "L2~user", "L2", "L3", "L4"]
    assert message_of(synthesized, "L2~user") == {"role": "user", "content": SYNTHETIC_USER}
    dropped = run(tmp_path, lines, "drop")
    assert [type(by_id(dropped)[i]).__name__ for i in ("L2", "L3")] == ["MetadataEntry"] * 2
    assert [i.kind for i in dropped.report.repairs] == ["before_user", "orphan_result"]


@pytest.mark.parametrize(
    ("first_kept", "moved_to", "says"),
    [
        (0, "L5", "has no first kept entry"),  # Pi keeps nothing: the last interaction is kept
        (99, "L5", "has no first kept entry"),
    ],
)
def test_a_compaction_first_kept_entry_is_moved_to_a_user_message(
    tmp_path: Path, first_kept: int, moved_to: str, says: str
) -> None:
    lines = [
        header(),
        user("one", 1),
        user("two", 2),
        assistant(text("a"), stop="stop"),
        user("three", 4),
        entry(
            "compaction", 5, summary="## Goal\ngo", firstKeptEntryIndex=first_kept, tokensBefore=9
        ),
    ]
    with pytest.raises(PiImportError, match=says):
        run(tmp_path, lines, "strict")
    for repair in REPAIRS:
        imported = run(tmp_path, lines, repair)
        compaction = by_id(imported)["L6"]
        assert compaction.type == "compaction" and compaction.first_kept_entry_id == moved_to
        assert imported.report.repairs[0].kind == "compaction_cut"


def test_a_compaction_with_no_user_message_before_it_is_kept_as_data(tmp_path: Path) -> None:
    lines = [header(), entry("compaction", 1, summary="s", firstKeptEntryIndex=0, tokensBefore=1)]
    for repair in REPAIRS:
        data = by_id(run(tmp_path, lines, repair))["L2"]
        assert isinstance(data, MetadataEntry) and data.key == "pi.compaction"


SPLIT = [
    header(),
    user("one", 1),
    user("two", 2),  # line 3: the turn starts
    assistant(call("c1"), second=3),
    result("c1", second=4),
    assistant(text("a"), stop="stop", second=5),  # line 6: Pi keeps from here
    user("three", 6),
    assistant(text("b"), stop="stop", second=7),
    entry("compaction", 8, summary="## Goal\ngo", firstKeptEntryIndex=5, tokensBefore=9),
]


@pytest.mark.parametrize(
    ("choice", "first_kept", "says"),
    [
        ("turn-start", "L3", "the kept range starts at L3, so the turn's first 3 messages"),
        ("next-user", "L7", "starts at the next user message L7, so the turn is left to the"),
    ],
)
def test_a_split_turn_is_accepted_under_every_policy_where_the_choice_says(
    tmp_path: Path, choice: SplitTurn, first_kept: str, says: str
) -> None:
    path = write(tmp_path / "s.jsonl", SPLIT)
    for repair in ("strict", *REPAIRS):
        imported = import_pi_session(path, repair=repair, split_turn=choice)
        compaction = by_id(imported)["L9"]
        assert isinstance(compaction, CompactionEntry)
        assert compaction.first_kept_entry_id == first_kept
        [item] = imported.report.of_kind("split_turn")
        assert item.message.startswith("first kept entry L6 (assistant) is in the middle of a turn")
        assert says in item.message and imported.report.repairs == []
        kept = project(imported.path).kept_entry_ids
        assert kept[0] == first_kept


def test_a_kept_setting_change_before_a_user_message_is_no_split(tmp_path: Path) -> None:
    lines = [
        header(),
        user("one", 1),
        entry("thinking_level_change", 2, thinkingLevel="high"),
        user("two", 3),
        entry("compaction", 4, summary="## Goal\ngo", firstKeptEntryIndex=2, tokensBefore=9),
    ]
    imported = run(tmp_path, lines, "strict")
    compaction = by_id(imported)["L5"]
    assert isinstance(compaction, CompactionEntry) and compaction.first_kept_entry_id == "L4"
    assert [i.kind for i in imported.report.items if i.line == 5] == ["summary", "converted"]


# --------------------------------------------------------------------------- branches


BRANCHED = [
    header(3),
    *tree(
        [
            user("q", 1),
            assistant({"type": "toolCall", "id": "c1", "name": "read", "arguments": {}}),
            result("c1", output="answered here"),
            user("next", 4),
            user("instead", 5),  # e5 branches off the assistant: c1 is unanswered on this path
        ],
        parents={5: 2},
    ),
]


def test_synthesize_repairs_only_the_branch_where_the_call_is_unanswered(tmp_path: Path) -> None:
    imported = run(tmp_path, BRANCHED, "synthesize")
    assert [e.id for e in imported.path] == ["sess-1", "e1", "e2", "e2~result1", "e5"]
    other = path_to(imported.entries, "e4")
    assert [e.id for e in other] == ["sess-1", "e1", "e2", "e3", "e4"]


def test_drop_removes_the_call_everywhere_and_the_result_on_the_other_branch(
    tmp_path: Path,
) -> None:
    imported = run(tmp_path, BRANCHED, "drop")
    assert message_of(imported, "e2")["content"] == []
    assert isinstance(by_id(imported)["e3"], MetadataEntry)
    assert [i.kind for i in imported.report.repairs] == ["unanswered_call", "orphan_result"]


# --------------------------------------------------------------------------- properties

CALL_IDS = st.sampled_from(["c1", "c2", "c3"])
EVENT = st.one_of(
    st.builds(lambda: ("user",)),
    st.tuples(st.just("assistant"), st.lists(CALL_IDS, max_size=3)),
    st.tuples(st.just("result"), CALL_IDS),
    st.tuples(st.just("compaction"), st.integers(0, 40)),
    st.builds(lambda: ("model",)),
)


def pi_lines(events: list[tuple[Any, ...]], parents: list[int]) -> list[dict[str, Any]]:
    """A v3 session from events; entry ``i`` hangs below entry ``parents[i]`` (0: the root)."""
    lines: list[dict[str, Any]] = []
    for position, event in enumerate(events, start=1):
        kind = event[0]
        if kind == "user":
            line = user(f"u{position}", position)
        elif kind == "assistant":
            calls = [{"type": "toolCall", "id": c, "name": "t", "arguments": {}} for c in event[1]]
            line = assistant(text("a"), *calls, second=position)
        elif kind == "result":
            line = result(event[1], name="t", second=position)
        elif kind == "compaction":
            target = f"e{event[1] % position}" if event[1] % position else "nowhere"
            line = entry("compaction", position, summary="## Goal\ng", tokensBefore=1)
            line["firstKeptEntryId"] = target
        else:
            line = entry("model_change", position, provider="p", modelId="m")
        parent = min(parents[position - 1], position - 1) if parents else position - 1
        lines.append(line | {"id": f"e{position}", "parentId": f"e{parent}" if parent else None})
    return [header(3), *lines]


SESSIONS = st.lists(EVENT, min_size=1, max_size=14).flatmap(
    lambda events: st.tuples(
        st.just(events),
        st.lists(st.integers(0, 14), min_size=len(events), max_size=len(events)) | st.just([]),
    )
)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(SESSIONS)
def test_repairs_make_every_branch_acceptable_and_keep_every_user_message(
    session: tuple[list[tuple[Any, ...]], list[int]],
) -> None:
    """Random small v3 trees (a linear log when no parents are drawn) with unanswered calls,
    orphan and second results, re-declared ids, assistants before any user message and
    compactions pointing anywhere."""
    lines = pi_lines(*session)
    parsed = parse_pi_session(jsonl(lines))
    users = {line["id"]: line["message"]["content"] for line in lines[1:] if "message" in line}
    users = {k: v for k, v in users.items() if lines[int(k[1:])]["message"]["role"] == "user"}
    for repair in REPAIRS:
        imported = convert_pi_session(parsed, repair=repair)
        assert_chapter_accepts_every_branch(imported)
        entries = by_id(imported)
        for user_id, content in users.items():
            assert message_of(imported, user_id) == {"role": "user", "content": content}
        if not session[1]:  # a linear log: the active path holds every user message
            assert set(users) <= {e.id for e in imported.path}
        calls = sum(
            block["type"] == "toolCall"
            for e in entries.values()
            if isinstance(e, MessageEntry)
            for block in (e.message["content"] if e.message["role"] == "assistant" else [])
        )
        declared = sum(len(event[1]) for event in session[0] if event[0] == "assistant")
        if repair == "synthesize":
            assert calls == declared  # nothing taken away, results added instead
    try:
        convert_pi_session(parsed, repair="strict")
    except PiImportError as error:
        assert all(2 <= item.line <= len(lines) for item in error.items)


GLUED = st.lists(
    st.sampled_from(["user", "assistant", "call", "result", "aborted"]), min_size=2, max_size=10
)


@settings(max_examples=60, deadline=None)
@given(GLUED, st.data())
def test_two_lines_glued_together_lose_nothing(kinds: list[str], data: st.DataObject) -> None:
    """A v1 file with one newline missing imports to the same messages as the intact file."""
    lines: list[dict[str, Any]] = [header()]
    for second, kind in enumerate(kinds, start=1):
        if kind == "user":
            lines.append(user(f"u{second}", second))
        elif kind == "call":
            lines.append(assistant(call(f"c{second}"), second=second))
        elif kind == "result":
            lines.append(result(f"c{second - 1}", second=second))
        else:
            stop = "aborted" if kind == "aborted" else "stop"
            lines.append(assistant(text(f"a{second}"), second=second, stop=stop))
    glue = data.draw(st.integers(1, len(lines) - 1), label="glued after line")
    intact = jsonl(lines)
    parts = intact.split(b"\n")
    damaged = b"\n".join([*parts[: glue - 1], parts[glue - 1] + parts[glue], *parts[glue + 1 :]])

    def messages(raw: bytes) -> list[Any]:
        imported = convert_pi_session(parse_pi_session(raw), repair="synthesize")
        return [
            (type(e).__name__, getattr(e, "message", None) or getattr(e, "value", None))
            for e in imported.entries
        ]

    assert messages(damaged) == messages(intact)
    with pytest.raises(PiImportError) as caught:
        convert_pi_session(parse_pi_session(damaged))
    [item] = [i for i in caught.value.items if i.kind == "damaged_line"]
    assert item.line == glue and item.message.startswith("holds two JSON objects with no newline")
