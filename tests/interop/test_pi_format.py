"""Reading Pi session files and migrating them v1 → v2 → v3 as Pi does."""

from __future__ import annotations

import gzip
import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pi_builders import assistant, entry, header, jsonl, message, tree, user, write

from course.interop import PiFormatError, migrate, read_pi_session
from course.interop.pi_format import PiSession, parse_pi_session


def lines_of(session: PiSession) -> list[dict[str, Any]]:
    return [session.header.data, *(record.data for record in session.entries)]


def v1_with_compaction() -> list[dict[str, Any]]:
    return [
        header(),  # index 0
        user("one"),  # index 1
        assistant(text("a")),
        user("two"),  # index 3
        assistant(text("b")),
        entry("compaction", summary="## Goal\nship", firstKeptEntryIndex=3, tokensBefore=50),
        user("three"),
    ]


def text(value: str) -> dict[str, Any]:
    return {"type": "text", "text": value}


# --------------------------------------------------------------------------- reading


def test_plain_and_gzipped_files_read_the_same(tmp_path: Path) -> None:
    lines = [header(), user("hi")]
    plain = read_pi_session(write(tmp_path / "s.jsonl", lines))
    zipped = read_pi_session(write(tmp_path / "s.jsonl.gz", lines, gz=True))
    assert plain == zipped
    assert [record.line for record in plain.entries] == [2]
    assert plain.source_version == 1


def test_gzip_is_recognised_by_content_not_name(tmp_path: Path) -> None:
    path = tmp_path / "named-plain.jsonl"
    path.write_bytes(gzip.compress(jsonl([header(), user("hi")])))
    assert len(read_pi_session(path).entries) == 1


def test_blank_lines_crlf_and_bom_are_accepted_and_lines_keep_their_numbers() -> None:
    data = (
        b"\xef\xbb\xbf" + jsonl([header()]) + b"\r\n\n" + json.dumps(user("x")).encode() + b"\r\n"
    )
    session = parse_pi_session(data)
    assert [record.line for record in session.entries] == [4]


HEAD = b'{"type":"session","id":"s"}\n'


@pytest.mark.parametrize(
    ("data", "expected"),
    [
        (b"", "empty file"),
        (b"not json\n[1]\n", "no line of it can be read"),
        (b'{"type":"message"}\n', "line 1: type: the first line must be the session header"),
        (b'{"type":"session"}\n', "line 1: id: must be a non-empty string"),
        (b'{"type":"session","id":"s","version":4}\n', "line 1: version: unsupported session"),
        (b'{"type":"session","id":"s","version":"2"}\n', "line 1: version: must be an integer"),
        (b'{"type":"session","id":"s","version":0}\n', "line 1: version: unsupported session"),
        (HEAD + b'{"kind":"x"}\n', "line 2: type: must be a string, got null"),
        (HEAD + b'{"type":"session","id":"t"}\n', "line 2: type: a second session header"),
        (b"\x1f\x8bnot really gzip", "not a readable gzip file"),
        (HEAD + b'{"type":"x","text":"a \\udc00"}\n', "line 2: holds a lone surrogate"),
    ],
)
def test_bad_input_names_the_line_and_field(data: bytes, expected: str) -> None:
    with pytest.raises(PiFormatError) as caught:
        parse_pi_session(data)
    assert str(caught.value).startswith(expected)


@pytest.mark.parametrize(
    ("line", "problem", "skipped"),
    [
        (b'{"type":"message",', "is not valid JSON (Expecting property name", "the whole line"),
        (b"[1, 2]", "holds no JSON object that can be read", "a JSON array, not an object"),
        (b'{"a": NaN}', "is not valid JSON (NaN is not JSON)", "the whole line"),
        (b'"\xff"', "is not UTF-8 text (invalid start byte at byte 1)", "the whole line"),
        (b'{"type":"x"} tail', "holds one JSON object and what", "4 characters from column 14"),
    ],
)
def test_an_unreadable_line_is_listed_as_damage_with_what_was_skipped(
    line: bytes, problem: str, skipped: str
) -> None:
    session = parse_pi_session(HEAD + line + b"\n" + jsonl([user("after")]))
    (damage,) = session.damage
    assert damage.line == 2
    assert damage.problem.startswith(problem)
    assert damage.skipped.startswith(skipped)
    assert [(r.line, r.type) for r in session.entries][-1] == (3, "message")


def test_objects_back_to_back_are_split_with_nothing_lost() -> None:
    first, second = json.dumps(assistant(text("a"))), json.dumps(user("b"))
    session = parse_pi_session(HEAD + (first + second).encode() + b"\n")
    assert [(r.line, r.part, r.data) for r in session.entries] == [
        (2, 1, json.loads(first)),
        (2, 2, json.loads(second)),
    ]
    (damage,) = session.damage
    assert (damage.line, damage.read, damage.skipped) == (2, 2, "")
    assert damage.problem == "holds two JSON objects with no newline between them"
    assert [r.data["id"] for r in migrate(session).entries] == ["L2", "L2-2"]


@settings(max_examples=50, deadline=None)
@given(st.lists(st.sampled_from(["a", "b", "ü", "{", "}", '"']), max_size=6), st.integers(2, 5))
def test_any_number_of_objects_on_one_line_come_back_in_order(words: list[str], count: int) -> None:
    objects = [user("".join(words) + str(n)) for n in range(count)]
    session = parse_pi_session(HEAD + "".join(json.dumps(o) for o in objects).encode() + b"\n")
    assert [r.data for r in session.entries] == objects
    assert [r.part for r in session.entries] == list(range(1, count + 1))


def test_a_child_of_a_skipped_line_hangs_below_the_header() -> None:
    lines = jsonl([header(3), user("a", id="x", parentId=None)]) + b"{broken\n"
    lines += jsonl([user("c", id="z", parentId="y")])
    migrated = migrate(parse_pi_session(lines))
    assert migrated.entries[-1].data["parentId"] is None
    assert [d.line for d in migrated.damage] == [3, 4]
    assert "names parent 'y'" in migrated.damage[1].problem


def test_a_surrogate_pair_is_text_not_an_error() -> None:
    data = HEAD + b'{"type":"x","text":"\\ud83d\\ude00"}\n'
    assert parse_pi_session(data).entries[0].data["text"] == "\U0001f600"


def test_a_missing_file_is_a_format_error_not_a_traceback(tmp_path: Path) -> None:
    with pytest.raises(PiFormatError, match=r"cannot read \(No such file"):
        read_pi_session(tmp_path / "absent.jsonl")


# --------------------------------------------------------------------------- migration


def test_v1_entries_get_line_ids_and_a_chain_of_parents() -> None:
    migrated = migrate(parse_pi_session(jsonl(v1_with_compaction())))
    assert migrated.version == 3 and migrated.source_version == 1
    assert [r.data["id"] for r in migrated.entries] == ["L2", "L3", "L4", "L5", "L6", "L7"]
    assert [r.data["parentId"] for r in migrated.entries] == [None, "L2", "L3", "L4", "L5", "L6"]


def test_v1_first_kept_index_counts_the_header_as_zero() -> None:
    compaction = migrate(parse_pi_session(jsonl(v1_with_compaction()))).entries[4].data
    assert compaction["firstKeptEntryId"] == "L4"  # index 3 is the user message "two"
    assert "firstKeptEntryIndex" not in compaction


def test_v1_first_kept_index_counts_entries_not_blank_lines() -> None:
    lines = v1_with_compaction()
    data = jsonl(lines[:2]) + b"\n\n" + jsonl(lines[2:])
    compaction = migrate(parse_pi_session(data)).entries[4].data
    assert compaction["firstKeptEntryId"] == "L6"  # the fourth entry now stands on line 6


@pytest.mark.parametrize("index", [0, 99, -1, "3", None])
def test_a_first_kept_index_at_the_header_or_outside_is_removed_as_pi_does(index: object) -> None:
    lines = v1_with_compaction()
    lines[5]["firstKeptEntryIndex"] = index
    compaction = migrate(parse_pi_session(jsonl(lines))).entries[4].data
    assert "firstKeptEntryId" not in compaction and "firstKeptEntryIndex" not in compaction


def test_v2_renames_hook_messages_to_custom_and_v3_is_left_alone() -> None:
    hook = message({"role": "hookMessage", "customType": "x", "content": "hi", "display": True})
    v2 = migrate(parse_pi_session(jsonl([header(2), *tree([user("u"), hook])])))
    assert v2.entries[1].data["message"]["role"] == "custom"
    assert v2.header.data["version"] == 3 and v2.source_version == 2
    v3 = parse_pi_session(jsonl([header(3), *tree([user("u"), hook])]))
    assert migrate(v3) == v3  # a v3 file has no hook messages to rename


def test_v1_hook_messages_are_renamed_too() -> None:
    hook = message({"role": "hookMessage", "customType": "x", "content": "hi", "display": True})
    migrated = migrate(parse_pi_session(jsonl([header(), user("u"), hook])))
    assert migrated.entries[1].data["message"]["role"] == "custom"


@pytest.mark.parametrize("version", [None, 2, 3])
def test_migration_is_idempotent_on_the_object_and_through_the_file(version: int | None) -> None:
    lines = v1_with_compaction() if version is None else [header(version), *tree([user("u")])]
    once = migrate(parse_pi_session(jsonl(lines)))
    assert migrate(once) == once
    again = migrate(parse_pi_session(jsonl(lines_of(once))))
    assert lines_of(again) == lines_of(once)


def test_migration_does_not_change_what_it_was_given() -> None:
    session = parse_pi_session(jsonl(v1_with_compaction()))
    before = json.dumps(lines_of(session))
    migrate(session)
    assert json.dumps(lines_of(session)) == before


@pytest.mark.parametrize(
    ("lines", "expected"),
    [
        (
            [user("a", id="x", parentId=None), user("b", id="x", parentId="x")],
            "line 3: id: id 'x' is already used",
        ),
        (
            [user("a", id="x", parentId="y"), user("b", id="y", parentId=None)],
            "line 2: parentId: parent 'y' is not an entry",
        ),
        ([user("a", parentId=None)], "line 2: id: must be a non-empty string, got null"),
        ([user("a", id="x", parentId=7)], "line 2: parentId: parent 7 is not an entry"),
    ],
)
def test_a_broken_tree_names_the_line(lines: list[dict[str, Any]], expected: str) -> None:
    with pytest.raises(PiFormatError) as caught:
        migrate(parse_pi_session(jsonl([header(3), *lines])))
    assert str(caught.value).startswith(expected)
