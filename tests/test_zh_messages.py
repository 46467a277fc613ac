"""The Chinese edition of the lesson's messages: a lab stub and the given modules' errors.

With the zh edition set, what a learner reads when a lab is not written yet or an entry is
refused holds no English prose (``course.locale.english.english_words``), yet still names the
lab, the function, the entry and the field, as the English message does.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from course.context import BudgetError, check_amount
from course.curricula.ch11 import STUB_TITLES
from course.display.notebook import pending_note
from course.fields import FieldReader
from course.fixtures import chapter_path_json, compact_1_json
from course.harness.editions import in_edition
from course.harness.manifest import load_manifest
from course.labs import LabNotImplemented
from course.locale import current_edition, set_edition
from course.locale.english import english_words
from course.session import (
    InMemorySessionStore,
    SessionEntryError,
    SessionPathError,
    SessionStoreError,
    parse_entries,
    parse_session_entry,
    path_to,
    recover_jsonl,
)


def refusal(call: Callable[[], object]) -> str:
    with pytest.raises(ValueError) as raised:
        call()
    return str(raised.value)


def chinese(text: str, *data: str) -> str:
    """``text``, after checking it is the Chinese edition's: Chinese, and no English prose
    once the values the test itself supplied (``data``: an id, a bad value) are left out."""
    assert any("\u4e00" <= c <= "\u9fff" for c in text), f"not Chinese: {text!r}"
    prose = text
    for value in data:
        prose = prose.replace(value, " ")
    assert not english_words(prose), f"English left in {text!r}: {english_words(prose)}"
    return text


def changed(value: dict[str, Any], **fields: Any) -> dict[str, Any]:
    return value | fields


def test_a_lab_stub_speaks_chinese_and_keeps_its_attributes(zh: None) -> None:
    assert current_edition() == "zh"
    stub = LabNotImplemented(
        "11.1",
        "compaction entry",
        "parse_summary",
        "exactly the seven keys, a goal that is not blank, six lists of strings, fresh lists",
    )
    message = chinese(str(stub))
    assert message.startswith("Lab 11.1 compaction entry 尚未实现（parse_summary）："), message
    assert message.split()[1] == "11.1", "the lab id stays the message's second word"
    assert (stub.lab_id, stub.title, stub.function) == ("11.1", "compaction entry", "parse_summary")
    assert isinstance(stub, NotImplementedError)


def test_lab_11_1_is_named_as_the_evidence_line_but_its_stub_as_the_first_red_light(
    zh: None,
) -> None:
    titles = {lab.id: lab.title for lab in in_edition(load_manifest("11")).labs}
    assert titles["11.1"] == "记录解析", "the chapter's evidence line: 覆盖记录解析、交互分组…"
    shown = pending_note(LabNotImplemented("11.1", "compaction entry", "parse_summary", ""))
    assert shown is not None and "Lab 11.1 compaction entry 尚未实现" in shown.text
    other = str(LabNotImplemented("11.2", "interaction groups", "group_interactions", ""))
    assert other.startswith("Lab 11.2 交互分组尚未实现"), "a lab with no stub name of its own"
    assert STUB_TITLES == ("compaction entry",)


def test_the_english_edition_keeps_the_english_stub_message() -> None:
    set_edition("en")
    try:
        stub = LabNotImplemented("11.3", "budget projection", "build_context", "deduct first")
        assert (
            str(stub)
            == "Lab 11.3 budget projection not implemented yet (build_context): deduct first"
        )
    finally:
        set_edition(None)


@pytest.mark.parametrize(
    ("value", "named", "data"),
    [
        (changed(chapter_path_json()[0], timestamp=True), "u1.timestamp", ()),
        (changed(chapter_path_json()[0], extra=1), "u1.extra", ()),
        (changed(chapter_path_json()[0], message=[]), "u1.message", ()),
        (changed(chapter_path_json()[0], type="note"), "u1.type", ("'note'",)),
        (changed(compact_1_json(), tokensBefore=-1), "compact-1.tokensBefore", ()),
        (changed(compact_1_json(), tokensBefore=math.nan), "compact-1.tokensBefore", ("nan",)),
        (changed(compact_1_json(), parentId=""), "compact-1.parentId", ()),
    ],
)
def test_an_entry_error_names_the_entry_and_the_field_in_chinese(
    zh: None, value: dict[str, Any], named: str, data: tuple[str, ...]
) -> None:
    message = chinese(refusal(lambda: parse_session_entry(value)), *data)
    assert message.startswith(f"{named}："), message


def test_a_summary_error_names_the_field(zh: None) -> None:
    value = compact_1_json()
    value["summary"]["files"] = value["summary"].pop("changedFiles")
    message = chinese(refusal(lambda: parse_session_entry(value)))
    assert message.startswith("compact-1.summary."), message


def test_a_field_reader_error_names_entry_and_field(zh: None) -> None:
    reader = FieldReader("m7")
    calls: list[tuple[Callable[[], object], str]] = [
        (lambda: reader.string(3, ".key", non_empty=True), "m7.key："),
        (lambda: reader.string(" ", ".key", non_blank=True), "m7.key："),
        (lambda: reader.string_list({}, ".value"), "m7.value："),
        (lambda: reader.mapping([], ".value", ("a",)), "m7.value："),
        (lambda: reader.mapping({"b": 1}, ".value", ("a",)), "m7.value.b："),
    ]
    for call, named in calls:
        with pytest.raises(SessionEntryError) as raised:
            call()
        assert chinese(str(raised.value)).startswith(named), raised.value


def test_store_path_and_log_errors_speak_chinese(zh: None, tmp_path: Path) -> None:
    store = InMemorySessionStore()
    first = chapter_path_json()[0]
    store.append(first)
    with pytest.raises(SessionStoreError) as raised:
        store.append(first)
    assert chinese(str(raised.value)).startswith("u1"), raised.value

    with pytest.raises(SessionPathError) as walked:
        path_to(parse_entries(chapter_path_json()), "nowhere")
    assert chinese(str(walked.value), "nowhere").startswith("nowhere"), walked.value

    line = b'{"type": "message"}\n'
    with pytest.raises(SessionStoreError) as read:
        recover_jsonl(line)
    assert "1" in chinese(str(read.value)), read.value

    with pytest.raises(BudgetError) as budget:
        check_amount(-1, "max_tokens")
    assert chinese(str(budget.value)).startswith("max_tokens"), budget.value
