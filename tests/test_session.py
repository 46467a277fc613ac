"""Session entries at the parse boundary, in both stores, after a crash and along the tree."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from course.fixtures import COMPACT_1_SUMMARY, chapter_path_json, compact_1_json
from course.session import (
    CompactionEntry,
    CompactionSummary,
    InMemorySessionStore,
    JsonlSessionStore,
    MessageEntry,
    MetadataEntry,
    SessionEntryError,
    SessionPathError,
    SessionStoreError,
    entry_to_json,
    parse_entries,
    parse_session_entry,
    path_to,
    recover_jsonl,
)


def compaction(**changes: Any) -> dict[str, Any]:
    return compact_1_json() | changes


def lines(*values: dict[str, Any]) -> str:
    return "".join(json.dumps(v, ensure_ascii=False) + "\n" for v in values)


# --------------------------------------------------------------------------- parser


def test_every_entry_type_parses_to_its_dataclass() -> None:
    entries = parse_entries(chapter_path_json())
    assert all(isinstance(e, MessageEntry) for e in entries)
    assert entries[0].parent_id is None and entries[1].parent_id == "u1"
    meta = parse_session_entry(
        {
            "type": "metadata",
            "id": "m1",
            "parentId": "u1",
            "timestamp": 2,
            "key": "model",
            "value": {"name": "x"},
        }
    )
    assert isinstance(meta, MetadataEntry) and meta.value == {"name": "x"}
    compact = parse_session_entry(compaction())
    assert isinstance(compact, CompactionEntry)
    assert isinstance(compact.summary, CompactionSummary)
    assert compact.summary.changed_files == COMPACT_1_SUMMARY["changedFiles"]


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (
            lambda v: v["summary"].update(files=["context.ts"]),
            "compact-1.summary.files: unknown field",
        ),
        (
            lambda v: v["summary"].pop("changedFiles"),
            "compact-1.summary.changedFiles: missing field",
        ),
        (lambda v: v.update(extra=1), "compact-1.extra: unknown field"),
        (lambda v: v.update(parentId=None), "compact-1.parentId: must be a string"),
        (
            lambda v: v.update(tokensBefore=float("inf")),
            "compact-1.tokensBefore: must be a non-neg",
        ),
        (lambda v: v.update(tokensBefore=False), "compact-1.tokensBefore: must be a non-negative"),
        (lambda v: v.update(timestamp="1"), "compact-1.timestamp: must be a non-negative"),
        (
            lambda v: v["summary"].update(goal=" "[:0]),
            "compact-1.summary.goal: must be a non-empty",
        ),
        (lambda v: v["summary"].update(next="x"), "compact-1.summary.next: must be a list"),
        (lambda v: v["summary"]["completed"].append(None), r"compact-1.summary.completed\[2\]"),
        (lambda v: v.update(type="compacted"), "compact-1.type: must be 'message', 'metadata'"),
        (lambda v: v.update(id=""), r"entry.id: must be a non-empty string"),
        (lambda v: v.pop("id"), r"entry.id: missing field"),
    ],
)
def test_parser_errors_name_the_entry_and_the_field(change: Any, message: str) -> None:
    value = compaction()
    change(value)
    with pytest.raises(SessionEntryError, match=message):
        parse_session_entry(value)


@pytest.mark.parametrize(
    ("message", "error"),
    [
        ({"role": "user", "content": 3}, r"m.message.content\[|m.message.content: must be a list"),
        (
            {"role": "user", "content": [{"type": "image", "text": "x"}]},
            r"m.message.content\[0\].type: must be 'text'",
        ),
        ({"role": "assistant", "content": "plain"}, "m.message.content: must be a list"),
        (
            {
                "role": "assistant",
                "content": [{"type": "toolCall", "id": "c", "name": "n", "arguments": []}],
            },
            r"m.message.content\[0\].arguments: must be an object",
        ),
        (
            {
                "role": "assistant",
                "content": [
                    {"type": "toolCall", "id": "c", "name": "n", "arguments": {"x": float("nan")}}
                ],
            },
            r"m.message.content\[0\].arguments.x: must be a finite number",
        ),
        (
            {
                "role": "toolResult",
                "toolCallId": "c",
                "toolName": "t",
                "content": [],
                "isError": "no",
            },
            "m.message.isError: must be a boolean",
        ),
        (
            {"role": "toolResult", "toolCallId": "c", "toolName": "t", "content": []},
            "m.message.isError: missing field",
        ),
        ({"role": "robot", "content": "x"}, "m.message.role: must be 'system', 'user'"),
        ({"role": "user", "content": "x", "name": "me"}, "m.message.name: unknown field"),
    ],
)
def test_message_shapes_are_checked_per_role(message: dict[str, Any], error: str) -> None:
    with pytest.raises(SessionEntryError, match=error):
        parse_session_entry(
            {"type": "message", "id": "m", "parentId": None, "timestamp": 0, "message": message}
        )


def test_user_content_may_be_text_blocks_and_system_messages_parse() -> None:
    for message in (
        {"role": "user", "content": [{"type": "text", "text": "a"}]},
        {"role": "system", "content": "be brief"},
    ):
        value = {
            "type": "message",
            "id": "m",
            "parentId": None,
            "timestamp": 0.5,
            "message": message,
        }
        assert entry_to_json(parse_session_entry(value)) == value


def test_deep_nesting_is_refused_with_a_clear_error() -> None:
    deep: Any = {}
    for _ in range(200):
        deep = {"x": deep}
    with pytest.raises(SessionEntryError, match="m1.value.x.x.*nested deeper than"):
        parse_session_entry(
            {
                "type": "metadata",
                "id": "m1",
                "parentId": None,
                "timestamp": 0,
                "key": "k",
                "value": deep,
            }
        )


def test_parsing_an_entry_object_returns_an_unshared_copy() -> None:
    entry = parse_session_entry(chapter_path_json()[5])
    again = parse_session_entry(entry)
    assert again == entry and again is not entry
    assert isinstance(again, MessageEntry) and isinstance(entry, MessageEntry)
    again.message["content"][1]["arguments"]["path"] = "changed"
    assert entry.message["content"][1]["arguments"]["path"] == "context.ts"


# --------------------------------------------------------------------------- stores


@pytest.fixture(params=["memory", "jsonl"])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Any:
    made = (
        InMemorySessionStore()
        if request.param == "memory"
        else JsonlSessionStore(tmp_path / "s.jsonl")
    )
    yield made
    made.close()


def test_stores_keep_append_order_and_return_copies(store: Any) -> None:
    for value in chapter_path_json():
        store.append(value)
    first = store.entries()
    first[5].message["content"][1]["arguments"]["path"] = "changed"
    assert [entry_to_json(e) for e in store.entries()] == chapter_path_json()


def test_stores_reject_duplicates_and_unknown_parents_without_writing(store: Any) -> None:
    values = chapter_path_json()
    store.append(values[0])
    with pytest.raises(SessionStoreError, match="u1: duplicate id"):
        store.append(values[0])
    with pytest.raises(SessionStoreError, match="u2.parentId: parent a1 is not in the session"):
        store.append(values[2])
    with pytest.raises(SessionEntryError, match="compact-1.summary.files"):
        store.append(compaction(summary={**COMPACT_1_SUMMARY, "files": []}))
    assert [e.id for e in store.entries()] == ["u1"]
    if isinstance(store, JsonlSessionStore):
        assert store.path.read_text(encoding="utf-8").count("\n") == 1


def test_jsonl_store_refuses_appends_after_close(tmp_path: Path) -> None:
    store = JsonlSessionStore(tmp_path / "s.jsonl")
    store.close()
    with pytest.raises(SessionStoreError, match="closed"):
        store.append(chapter_path_json()[0])


def test_jsonl_store_writes_readable_utf8_lines(tmp_path: Path) -> None:
    with JsonlSessionStore(tmp_path / "s.jsonl") as store:
        store.append(chapter_path_json()[0])
    assert "检查 session 恢复逻辑" in (tmp_path / "s.jsonl").read_text(encoding="utf-8")


def test_lone_surrogates_are_refused_before_anything_is_written(tmp_path: Path) -> None:
    value = chapter_path_json()[0]
    value["message"]["content"] = "\ud800"
    with (
        JsonlSessionStore(tmp_path / "s.jsonl") as store,
        pytest.raises(SessionEntryError, match="u1"),
    ):
        store.append(value)
    assert (tmp_path / "s.jsonl").read_bytes() == b""


# --------------------------------------------------------------------------- recovery


def test_recovery_ignores_blank_lines_and_accepts_crlf() -> None:
    values = chapter_path_json()[:2]
    text = "\n" + json.dumps(values[0]) + "\r\n   \n" + json.dumps(values[1]) + "\n"
    recovered = recover_jsonl(text)
    assert [e.id for e in recovered.entries] == ["u1", "a1"] and recovered.warnings == []


def test_an_unterminated_tail_is_set_aside_with_a_warning(tmp_path: Path) -> None:
    values = chapter_path_json()
    text = lines(*values[:3]) + json.dumps(values[3])
    recovered = recover_jsonl(text)
    assert [e.id for e in recovered.entries] == ["u1", "a1", "u2"]
    assert [(w.code, w.line) for w in recovered.warnings] == [("uncommitted_tail", 4)]
    assert recovered.committed_bytes == len(lines(*values[:3]).encode("utf-8"))

    log = tmp_path / "torn.jsonl"
    log.write_text(text, encoding="utf-8")
    with JsonlSessionStore(log) as store:
        assert [e.id for e in store.entries()] == ["u1", "a1", "u2"]
        with pytest.raises(SessionStoreError, match="line 4 is an uncommitted tail"):
            store.append(values[3])
    assert log.read_text(encoding="utf-8") == text, "a torn log is never overwritten"


@pytest.mark.parametrize(
    ("text", "error"),
    [
        ('{"type":"message"\n', "line 1: invalid JSON"),
        ("[]\n", "line 1: entry: must be an object"),
        (
            '{"type":"metadata","id":"m","parentId":null,"timestamp":NaN,"key":"k","value":1}\n',
            "line 1: invalid JSON",
        ),
        (b"\n\xff\xfe\n", "line 2: invalid UTF-8"),
    ],
)
def test_a_malformed_committed_line_names_its_line(text: str | bytes, error: str) -> None:
    with pytest.raises(SessionStoreError, match=error):
        recover_jsonl(text)


def test_a_compaction_line_with_the_legacy_alias_names_line_and_field() -> None:
    text = lines(*chapter_path_json(), compaction(summary={**COMPACT_1_SUMMARY, "files": []}))
    with pytest.raises(SessionStoreError, match=r"line 10: compact-1.summary.files: unknown"):
        recover_jsonl(text)


def test_recovery_checks_ids_and_parents_like_append() -> None:
    values = chapter_path_json()
    with pytest.raises(SessionStoreError, match="line 2: u1: duplicate id"):
        recover_jsonl(lines(values[0], values[0]))
    with pytest.raises(SessionStoreError, match="line 1: a1.parentId: parent u1"):
        recover_jsonl(lines(values[1]))


# --------------------------------------------------------------------------- active path


def test_path_to_walks_the_selected_branch_only() -> None:
    values = chapter_path_json()
    branch = {
        "type": "message",
        "id": "b1",
        "parentId": "a1",
        "timestamp": 3,
        "message": {"role": "user", "content": "another branch"},
    }
    entries = parse_entries([*values, branch])
    assert [e.id for e in path_to(entries, "a3")] == [v["id"] for v in values]
    assert [e.id for e in path_to(entries, "b1")] == ["u1", "a1", "b1"]


def test_path_to_reports_unknown_leaf_missing_parent_and_cycle() -> None:
    values = chapter_path_json()
    entries = parse_entries(values)
    with pytest.raises(SessionPathError, match="nowhere: unknown leaf"):
        path_to(entries, "nowhere")
    with pytest.raises(SessionPathError, match="u2.parentId: parent a1 is not in the session"):
        path_to([e for e in entries if e.id != "a1"], "a3")
    loop = parse_entries([values[0] | {"parentId": "a1"}, values[1]])
    with pytest.raises(SessionPathError, match="cycle"):
        path_to(loop, "a1")
