"""Small v1, v2 and v3 Pi files import to exactly the chapter entries the mapping table states."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from pi_builders import (
    assistant,
    at,
    call,
    entry,
    header,
    message,
    ms,
    result,
    text,
    tree,
    user,
    write,
)

from course.interop import PiFormatError, PiImportError, import_pi_session
from course.interop.pi_mapping import (
    BRANCH_PREFIX,
    BRANCH_SUFFIX,
    COMPACTION_PREFIX,
    COMPACTION_SUFFIX,
    MESSAGE_KEY,
    iso_to_millis,
)
from course.session import CompactionEntry, MetadataEntry, entry_to_json


def imported_json(tmp_path: Path, lines: list[dict[str, Any]], **options: Any) -> list[Any]:
    imported = import_pi_session(write(tmp_path / "s.jsonl", lines), **options)
    return [entry_to_json(e) for e in imported.entries]


def chapter(kind: str, entry_id: str, parent: str | None, second: int, **body: Any) -> Any:
    return {"type": kind, "id": entry_id, "parentId": parent, "timestamp": ms(second), **body}


def say(role: str, content: Any) -> dict[str, Any]:
    return {"role": role, "content": content}


def tool_result(call_id: str, output: str, name: str = "read") -> dict[str, Any]:
    return {
        "role": "toolResult",
        "toolCallId": call_id,
        "toolName": name,
        "content": [{"type": "text", "text": output}],
        "isError": False,
    }


def session_value(version: int) -> dict[str, Any]:
    return {"cwd": "/w", "version": 3, "sourceVersion": version}


V1_LINES = [
    header(),
    user("hi", 1),
    assistant(text("reading"), call("c1", path="a.txt"), second=2),
    result("c1", output="A", second=3),
    entry("model_change", 4, provider="openai", modelId="gpt"),
    entry("thinking_level_change", 5, thinkingLevel="high"),
    assistant(text("done"), second=6, stop="stop"),
]


def test_a_v1_file_imports_to_the_expected_entries(tmp_path: Path) -> None:
    assert imported_json(tmp_path, V1_LINES) == [
        chapter("metadata", "sess-1", None, 0, key="pi.session", value=session_value(1)),
        chapter("message", "L2", "sess-1", 1, message=say("user", [text("hi")])),
        chapter(
            "message",
            "L3",
            "L2",
            2,
            message=say(
                "assistant",
                [text("reading"), call("c1", path="a.txt")],
            ),
        ),
        chapter("message", "L4", "L3", 3, message=tool_result("c1", "A")),
        chapter(
            "metadata",
            "L5",
            "L4",
            4,
            key="pi.model_change",
            value={"provider": "openai", "modelId": "gpt"},
        ),
        chapter(
            "metadata",
            "L6",
            "L5",
            5,
            key="pi.thinking_level_change",
            value={"thinkingLevel": "high"},
        ),
        chapter("message", "L7", "L6", 6, message=say("assistant", [text("done")])),
    ]


def test_a_v2_tree_keeps_its_ids_and_branches_and_its_last_line_is_the_leaf(
    tmp_path: Path,
) -> None:
    lines = tree(
        [user("q", 1), assistant(text("a"), second=2), user("again", 3), user("other", 4)],
        parents={4: 2},  # e4 branches off e2, so e3 is on the other branch
    )
    imported = import_pi_session(write(tmp_path / "s.jsonl", [header(2), *lines]))
    assert [(e.id, e.parent_id) for e in imported.entries] == [
        ("sess-1", None),
        ("e1", "sess-1"),
        ("e2", "e1"),
        ("e3", "e2"),
        ("e4", "e2"),
    ]
    assert imported.leaf_id == "e4"
    assert [e.id for e in imported.path] == ["sess-1", "e1", "e2", "e4"]
    assert imported.report.source_version == 2


def test_v3_entry_types_map_as_the_table_says(tmp_path: Path) -> None:
    custom = {"role": "custom", "customType": "note", "content": "from a hook", "display": False}
    lines = tree(
        [
            user("q", 1),
            entry("label", 2, targetId="e1", label="start"),
            entry("session_info", 3, name="my session"),
            entry("custom", 4, customType="ext", data={"k": [1, 2]}),
            entry("branch_summary", 5, fromId="e1", summary="tried X"),
            entry("custom_message", 6, customType="ext", content=[text("injected")], display=True),
            message(custom, 7),
        ]
    )
    got = imported_json(tmp_path, [header(3), *lines])
    assert got[2:] == [
        chapter(
            "metadata", "e2", "e1", 2, key="pi.label", value={"targetId": "e1", "label": "start"}
        ),
        chapter("metadata", "e3", "e2", 3, key="pi.session_info", value={"name": "my session"}),
        chapter(
            "metadata",
            "e4",
            "e3",
            4,
            key="pi.custom",
            value={"customType": "ext", "data": {"k": [1, 2]}},
        ),
        chapter(
            "message",
            "e5",
            "e4",
            5,
            message=say("user", [text(BRANCH_PREFIX + "tried X" + BRANCH_SUFFIX)]),
        ),
        chapter("message", "e6", "e5", 6, message=say("user", [text("injected")])),
        chapter("message", "e7", "e6", 7, message=say("user", "from a hook")),
    ]


@pytest.mark.parametrize(
    ("role", "prefix", "suffix"),
    [
        ("branchSummary", BRANCH_PREFIX, BRANCH_SUFFIX),
        ("compactionSummary", COMPACTION_PREFIX, COMPACTION_SUFFIX),
    ],
)
def test_summary_messages_become_the_user_text_pi_sends(
    tmp_path: Path, role: str, prefix: str, suffix: str
) -> None:
    line = message({"role": role, "summary": "earlier", "timestamp": 5})
    imported = import_pi_session(write(tmp_path / "s.jsonl", [header(), line]))
    assert entry_to_json(imported.entries[1])["message"] == say(
        "user", [text(prefix + "earlier" + suffix)]
    )
    assert [i.kind for i in imported.report.items] == ["converted", "fields"]


def test_assistant_blocks_thinking_is_left_out_and_reported(tmp_path: Path) -> None:
    thinking = {"type": "thinking", "thinking": "hmm", "thinkingSignature": "sig"}
    partial = call("c1") | {"partialJson": '{"pa'}
    lines = [header(), user("q"), assistant(thinking, text("t"), partial), result("c1")]
    imported = import_pi_session(write(tmp_path / "s.jsonl", lines))
    assert entry_to_json(imported.entries[2])["message"]["content"] == [text("t"), call("c1")]
    by_kind = {(item.kind, item.id) for item in imported.report.items}
    assert ("thinking", "L3") in by_kind
    fields = next(i for i in imported.report.of_kind("fields") if i.id == "L3")
    assert "message.content[2].partialJson" in fields.message and "message.usage" in fields.message
    assert fields.line == 3


def test_images_become_placeholders_that_say_so(tmp_path: Path) -> None:
    image = {"type": "image", "data": "QUJD", "mimeType": "image/png"}
    shot = message({"role": "user", "content": [text("look"), image]})
    imported = import_pi_session(write(tmp_path / "s.jsonl", [header(), shot]))
    content = entry_to_json(imported.entries[1])["message"]["content"]
    assert content == [
        text("look"),
        text("[image omitted on import: image/png, 4 base64 characters]"),
    ]
    [item] = imported.report.of_kind("image")
    assert (item.line, item.id) == (2, "L2") and "message.content[1]" in item.message


@pytest.mark.parametrize(
    ("fields", "expected"),
    [
        ({"output": "a\nb", "exitCode": 0}, "Ran `ls`\n```\na\nb\n```"),
        ({"output": "", "exitCode": 0}, "Ran `ls`\n(no output)"),
        ({"output": "x", "exitCode": 2}, "Ran `ls`\n```\nx\n```\n\nCommand exited with code 2"),
        (
            {"output": "x", "cancelled": True, "exitCode": 2},
            "Ran `ls`\n```\nx\n```\n\n(command cancelled)",
        ),
        (
            {"output": "x", "exitCode": 0, "truncated": True, "fullOutputPath": "/t/log"},
            "Ran `ls`\n```\nx\n```\n\n[Output truncated. Full output: /t/log]",
        ),
    ],
)
def test_bash_executions_become_the_user_text_pi_sends(
    tmp_path: Path, fields: dict[str, Any], expected: str
) -> None:
    bash = {"role": "bashExecution", "command": "ls", "cancelled": False, "truncated": False}
    line = message(bash | fields)
    imported = import_pi_session(write(tmp_path / "s.jsonl", [header(), line]))
    assert entry_to_json(imported.entries[1])["message"] == say("user", [text(expected)])
    assert imported.report.of_kind("converted")[0].id == "L2"


def test_a_bash_execution_excluded_from_context_is_data_only(tmp_path: Path) -> None:
    bash = {"role": "bashExecution", "command": "ls", "output": "x", "excludeFromContext": True}
    imported = import_pi_session(write(tmp_path / "s.jsonl", [header(), user("q"), message(bash)]))
    data = imported.entries[2]
    assert data.type == "metadata" and data.key == "pi.message"
    assert data.value == {"message": bash, "reason": "excluded from context"}


def test_a_compaction_keeps_its_markdown_as_data_just_before_it(tmp_path: Path) -> None:
    markdown = "## Goal\nShip it\n\n## Next Steps\n1. test\n2. release"
    lines = [
        header(),
        user("one", 1),
        user("two", 2),
        entry("compaction", 3, summary=markdown, firstKeptEntryIndex=2, tokensBefore=120),
    ]
    got = imported_json(tmp_path, lines)
    summary = {
        "goal": "Ship it",
        "constraints": [],
        "completed": [],
        "decisions": [],
        "changedFiles": [],
        "unresolved": [],
        "next": ["test", "release"],
    }
    assert got[3:] == [
        chapter(
            "metadata",
            "L4~summary",
            "L3",
            3,
            key="pi.compaction.summary",
            value={"compactionId": "L4", "summary": markdown, "firstKeptEntryId": "L3"},
        ),
        chapter(
            "compaction",
            "L4",
            "L4~summary",
            3,
            summary=summary,
            firstKeptEntryId="L3",
            tokensBefore=120,
        ),
    ]


def test_report_items_carry_line_id_kind_and_message(tmp_path: Path) -> None:
    imported = import_pi_session(write(tmp_path / "s.jsonl", V1_LINES))
    item = imported.report.items[0]
    assert item.to_json() == {
        "line": 2,
        "id": "L2",
        "kind": "fields",
        "message": "not carried: message.timestamp",
    }
    assert str(item) == "line 2: L2: fields: not carried: message.timestamp"
    assert [i.line for i in imported.report.items] == sorted(i.line for i in imported.report.items)


# --------------------------------------------------------------------------- timestamps


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (at(0), 1_735_689_600_000),
        ("2025-12-08T22:41:05.306Z", 1_765_233_665_306),
        ("2025-12-08T22:41:05.306+01:00", 1_765_230_065_306),
        ("2025-12-08T22:41:05.306123Z", 1_765_233_665_306.123),
        ("2025-12-08T22:41:05", 1_765_233_665_000),
        (1_765_233_665_292, 1_765_233_665_292),
    ],
)
def test_iso_timestamps_become_unix_milliseconds(value: object, expected: float) -> None:
    got = iso_to_millis(value)
    assert got == expected and type(got) is type(expected)


@pytest.mark.parametrize(
    ("value", "problem"),
    [
        ("yesterday", "must be an ISO 8601 timestamp"),
        ("1969-12-31T23:59:59Z", "is before 1970"),
        (None, "must be an ISO 8601 string, got null"),
        (-5, "must be a non-negative number"),
    ],
)
def test_bad_timestamps_are_refused(value: object, problem: str) -> None:
    with pytest.raises(ValueError, match=problem):
        iso_to_millis(value)


# --------------------------------------------------------------------------- bad input

ROBOT = "unknown message role 'robot'"


@pytest.mark.parametrize(
    ("line", "key", "value", "text"),
    [
        (entry("mystery", 1, answer=42), "pi.mystery", {"answer": 42}, "unknown entry type"),
        (
            message({"role": "robot", "content": "x"}),
            MESSAGE_KEY,
            {"message": {"role": "robot", "content": "x"}, "reason": ROBOT},
            ROBOT,
        ),
    ],
)
def test_what_pi_does_not_know_is_data_in_the_lenient_modes_and_refused_in_strict(
    tmp_path: Path, line: dict[str, Any], key: str, value: dict[str, Any], text: str
) -> None:
    path = write(tmp_path / "s.jsonl", [header(), user("hi"), line, user("after")])
    with pytest.raises(PiImportError) as caught:
        import_pi_session(path)
    assert str(caught.value).startswith(f"line 3: L3: unknown_type: {text}")
    for policy in ("synthesize", "drop"):
        imported = import_pi_session(path, repair=policy)
        kept = next(e for e in imported.entries if e.id == "L3")
        assert isinstance(kept, MetadataEntry) and (kept.key, kept.value) == (key, value)
        assert [i.kind for i in imported.report.of_kind("unknown_type")] == ["unknown_type"]
        assert [e.id for e in imported.path][-2:] == ["L3", "L4"]


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        ({"type": "message", "message": say("user", "x")}, "line 2: timestamp: missing field"),
        (message({"role": "user"}), "line 2: message.content: missing field"),
        (
            message({"role": "user", "content": [{"type": "video"}]}),
            "line 2: message.content[0].type",
        ),
        (
            message(
                {"role": "assistant", "content": [{"type": "toolCall", "id": "c", "name": "r"}]}
            ),
            "line 2: message.content[0].arguments: missing field",
        ),
        (
            message({"role": "assistant", "content": [call("", "read")]}),
            "line 2: L2.message.content[0].id: must be a non-empty string",
        ),
        (
            message(tool_result("c1", "x") | {"isError": "no"}),
            "line 2: message.isError: has the wrong type (string)",
        ),
        (entry("compaction", 1, summary=7, tokensBefore=1), "line 2: summary: has the wrong type"),
        (
            entry("compaction", 1, summary="s", tokensBefore=-1),
            "line 2: tokensBefore: has the wrong",
        ),
        (message(say("user", "x"), timestamp="soon"), "line 2: timestamp: must be an ISO 8601"),
    ],
)
def test_bad_entries_name_the_line_and_field(tmp_path: Path, line: Any, expected: str) -> None:
    path = write(tmp_path / "s.jsonl", [header(), line])
    with pytest.raises(PiFormatError) as caught:
        import_pi_session(path)
    assert str(caught.value).startswith(expected)


def test_a_summary_without_a_goal_takes_the_sessions_first_request(tmp_path: Path) -> None:
    lines = [
        header(),
        user("Port the parser to Python", 1),
        user("and its tests", 2),
        entry("compaction", 3, summary="# Checkpoint\n## Done\n- x", tokensBefore=5),
    ]
    lines[-1]["firstKeptEntryIndex"] = 2
    imported = import_pi_session(write(tmp_path / "s.jsonl", lines))
    compaction = next(e for e in imported.entries if isinstance(e, CompactionEntry))
    assert compaction.summary.goal == "Port the parser to Python"
