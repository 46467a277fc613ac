"""The kit's import and ``build_context`` against what Pi itself sends, session by session.

``tests/interop/pi-oracle/*.json`` are written by ``scripts/pi-oracle`` from Pi's own code (its
loader, ``buildSessionContext``, ``convertToLlm`` and the provider transform); each message
there is named by the line it came from. Here the kit imports the same file and projects it at
an unlimited budget. Every difference must be one the documentation names, counted exactly:
the objects of a damaged line (Pi's loader skips the line, the kit reads them) and the messages
of a split turn (its first part under ``turn-start``, its kept part under ``next-user``). The
expected differences are counted from the raw JSON lines, not from the importer's report.
"""

from __future__ import annotations

import gzip
import hashlib
import json
import re
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from pi_raw import RawLine, raw_lines

from course.context import build_context
from course.interop import ImportedSession, SplitTurn, import_pi_session, pi_session_files
from course.session import MessageEntry

ORACLE = Path(__file__).parent / "pi-oracle"
DOC = Path(__file__).parents[2] / "docs" / "pi-import.md"
NAMES = sorted(pi_session_files())
CHOICES: tuple[SplitTurn, ...] = ("turn-start", "next-user")

Key = tuple[str, int | str, int]
"""("line", line, part), ("summary", compaction line, 1) or ("synthetic", tool call id, 1)."""


def load_oracle(name: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((ORACLE / f"{name}.json").read_text("utf-8"))
    return data


def raw_of(name: str) -> list[RawLine]:
    return raw_lines(pi_session_files()[name])


def damaged_keys(raw: list[RawLine]) -> list[Key]:
    """The objects of lines holding more than one: Pi skips them, the kit reads them."""
    per_line = Counter(r.line for r in raw)
    return [("line", r.line, r.part) for r in raw if per_line[r.line] > 1 and r.sent]


def split_turn_keys(raw: list[RawLine], oracle: dict[str, Any]) -> tuple[list[Key], list[Key]]:
    """The split turn's messages before its kept entry, and from it to the next user message."""
    compaction = oracle["compaction"]
    if compaction is None:
        return [], []
    lines = [(r.line, r.part) for r in raw]
    kept = lines.index((compaction["firstKeptLine"], 1))
    end = lines.index((compaction["line"], 1))
    if raw[kept].starts_turn:
        return [], []
    start = max(i for i in range(kept) if raw[i].starts_turn)
    following = [i for i in range(kept, end) if raw[i].starts_turn]
    stop = following[0] if following else kept

    def keys(indexes: range) -> list[Key]:
        return [("line", raw[i].line, raw[i].part) for i in indexes if raw[i].sent]

    return keys(range(start, kept)), keys(range(kept, stop))


def key_of(entry_id: str, imported: ImportedSession) -> Key:
    found = re.fullmatch(r"L(\d+)(?:-(\d+))?", entry_id)
    if found:
        return ("line", int(found.group(1)), int(found.group(2) or 1))
    entry = next(e for e in imported.entries if e.id == entry_id)
    assert isinstance(entry, MessageEntry) and "~result" in entry_id
    return ("synthetic", entry.message["toolCallId"], 1)


def oracle_key(message: dict[str, Any]) -> Key:
    if "summaryOf" in message:
        return ("summary", message["summaryOf"], 1)
    if message.get("synthetic"):
        return ("synthetic", message["toolCallId"], 1)
    return ("line", message["line"], 1)


def text_sha256(content: str | list[dict[str, Any]]) -> str:
    blocks = [{"type": "text", "text": content}] if isinstance(content, str) else content
    texts = [block["text"] for block in blocks if block["type"] == "text"]
    return hashlib.sha256("\0".join(texts).encode("utf-8")).hexdigest()


def kit_context(name: str, choice: SplitTurn) -> tuple[list[Key], dict[Key, dict[str, Any]]]:
    """The kit's unlimited-budget context: its keys in order, and each message by key."""
    imported = import_pi_session(pi_session_files()[name], repair="synthesize", split_turn=choice)
    result = build_context(
        imported.path,
        max_tokens=10**12,
        system_prompt="",
        reserved_output=0,
        safety_margin=0,
        estimate_tokens=lambda message: 1,
    )
    keys: list[Key] = []
    if result.compaction_id is not None:
        keys.append(("summary", int(result.compaction_id[1:]), 1))
    keys += [key_of(entry_id, imported) for entry_id in result.kept_entry_ids]
    messages = result.messages[len(result.messages) - len(result.kept_entry_ids) :]
    return keys, dict(zip(keys[len(keys) - len(messages) :], messages, strict=True))


@dataclass(frozen=True)
class Difference:
    """What the kit sends that Pi doesn't, and what Pi sends that the kit doesn't."""

    kit_only: list[Key]
    pi_only: list[Key]


def difference(name: str, choice: SplitTurn) -> Difference:
    kit, _ = kit_context(name, choice)
    pi = [oracle_key(m) for m in load_oracle(name)["messages"]]
    return Difference([k for k in kit if k not in pi], [k for k in pi if k not in kit])


@pytest.mark.parametrize("name", NAMES)
def test_the_oracle_was_made_from_the_shipped_file(name: str) -> None:
    oracle = load_oracle(name)
    with gzip.open(pi_session_files()[name]) as handle:
        assert hashlib.sha256(handle.read()).hexdigest() == oracle["sha256"]


@pytest.mark.parametrize("choice", CHOICES)
@pytest.mark.parametrize("name", NAMES)
def test_the_kit_differs_from_pi_only_where_documented(name: str, choice: SplitTurn) -> None:
    oracle = load_oracle(name)
    raw = raw_of(name)
    prefix, suffix = split_turn_keys(raw, oracle)
    found = difference(name, choice)
    recovered = damaged_keys(raw)
    if choice == "turn-start":
        assert found == Difference(sorted(prefix + recovered), [])
    else:
        assert found == Difference(recovered, suffix)


@pytest.mark.parametrize("name", NAMES)
def test_same_compaction_same_order_same_text(name: str) -> None:
    oracle = load_oracle(name)
    kit, messages = kit_context(name, "turn-start")
    pi = [oracle_key(m) for m in oracle["messages"]]
    assert [k for k in kit if k in pi] == pi  # order too
    assert (kit[0] if kit[0][0] == "summary" else None) == (
        ("summary", oracle["compaction"]["line"], 1) if oracle["compaction"] else None
    )
    for expected in oracle["messages"]:
        key = oracle_key(expected)
        if key[0] == "summary":
            continue
        message = messages[key]
        assert message["role"] == expected["role"], key
        if key[0] == "line":
            assert text_sha256(message["content"]) == expected["textSha256"], key
        if expected["role"] == "assistant":
            calls = [[b["id"], b["name"]] for b in message["content"] if b["type"] == "toolCall"]
            assert calls == expected["toolCalls"], key
        if expected["role"] == "toolResult":
            assert message["toolCallId"] == expected["toolCallId"], key
            assert message["isError"] == expected["isError"], key


@pytest.mark.parametrize("name", NAMES)
def test_nothing_pi_drops_is_sent(name: str) -> None:
    dropped = {("line", d["line"], 1) for d in load_oracle(name)["droppedBeforeSend"]}
    assert dropped, "every shipped session has aborted or failed assistant messages"
    kit, _ = kit_context(name, "turn-start")
    assert dropped.isdisjoint(kit)


def documented_table() -> dict[tuple[str, str], tuple[int, int]]:
    """The split-turn table of docs/pi-import.md: (file, choice) -> (kit only, Pi only)."""
    text = DOC.read_text("utf-8")
    section = text.split("<!-- split-turn table -->", 2)[1]
    rows: dict[tuple[str, str], tuple[int, int]] = {}
    for line in section.strip().splitlines()[2:]:
        cells = [cell.strip(" `") for cell in line.strip("|").split("|")]
        rows[(cells[0], cells[1])] = (int(cells[2]), int(cells[3]))
    return rows


def test_the_documented_table_is_what_the_kit_measures() -> None:
    measured = {}
    for name in NAMES:
        for choice in CHOICES:
            found = difference(name, choice)
            measured[(f"{name}.jsonl.gz", choice)] = (len(found.kit_only), len(found.pi_only))
    assert documented_table() == measured
