"""Sessions Pi's own ``SessionManager`` wrote (``scripts/pi-oracle/sessions.mjs``) against Pi.

``tests/interop/pi-oracle/written/NAME.jsonl`` is the file Pi wrote and ``NAME.json`` what Pi
sends for it, each message named by its entry id. Each file is imported under every lenient
policy and projected at an unlimited budget; the kit must send what Pi sends, apart from the
differences docs/pi-import.md documents, each counted here from the raw file on its own: a split
turn's first part (``turn-start``) or kept part (``next-user``), a re-declared call id renamed
``~2``, an image as a text placeholder, thinking left out of a message that has text or calls.
"""

from __future__ import annotations

import hashlib
import json
import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from course.context import build_context
from course.interop import (
    ImportedSession,
    PiImportError,
    Policy,
    SplitTurn,
    import_pi_session,
)
from course.session import MessageEntry

WRITTEN = Path(__file__).parent / "pi-oracle" / "written"
ORACLE_SCRIPT = Path(__file__).parents[2] / "scripts" / "pi-oracle"
NAMES = sorted(path.stem for path in WRITTEN.glob("*.jsonl"))
LENIENT: tuple[Policy, ...] = ("synthesize", "drop")
CHOICES: tuple[SplitTurn, ...] = ("turn-start", "next-user")
PLACEHOLDER = re.compile(r"\[image omitted on import: [^\]]*\]")
RENAMED = re.compile(r"~\d+$")

Key = tuple[str, str]
"""("id", entry id), ("summary", compaction id) or ("synthetic", tool call id)."""


def oracle(name: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((WRITTEN / f"{name}.json").read_text("utf-8"))
    return data


def raw_entries(name: str) -> dict[str, dict[str, Any]]:
    lines = (WRITTEN / f"{name}.jsonl").read_text("utf-8").splitlines()
    return {entry["id"]: entry for entry in map(json.loads, lines[1:])}


def pi_key(message: dict[str, Any]) -> Key:
    if "summaryOf" in message:
        return ("summary", message["id"])
    if message.get("synthetic"):
        return ("synthetic", message["toolCallId"])
    return ("id", message["id"])


def split_turn_keys(name: str) -> tuple[list[Key], list[Key] | None]:
    """The split turn's messages before Pi's kept entry, and from it to the next user message
    (None when no user message follows the kept entry before the compaction)."""
    leaf = oracle(name)["messages"]
    summary = next((m for m in leaf if "summaryOf" in m), None)
    if summary is None:
        return [], []
    entries = raw_entries(name)
    path: list[dict[str, Any]] = []
    at: str | None = entries[summary["id"]]["parentId"]
    while at in entries:
        path.insert(0, entries[at])
        at = entries[at]["parentId"]
    ids = [e["id"] for e in path]
    kept_id = entries[summary["id"]]["firstKeptEntryId"]
    if kept_id not in ids:
        return [], []

    def role(entry: dict[str, Any]) -> str:
        return str(entry["message"]["role"]) if entry["type"] == "message" else ""

    def sent(entry: dict[str, Any]) -> bool:
        return entry["type"] == "message" and entry["message"].get("stopReason") not in (
            "aborted",
            "error",
        )

    kept = ids.index(kept_id)
    following = [i for i in range(kept, len(path)) if entry_type(path[i]) != "setting"]
    if not following or role(path[following[0]]) == "user":
        return [], []  # a setting change before a user message, or a user message: no split
    starts = [i for i in range(kept) if role(path[i]) == "user"]
    if not starts:
        return [], []
    later = [i for i in range(kept, len(path)) if role(path[i]) == "user"]
    prefix = [("id", path[i]["id"]) for i in range(starts[-1], kept) if sent(path[i])]
    if not later:
        return prefix, None  # next-user has no user message to start at: it starts the turn too
    suffix = [("id", path[i]["id"]) for i in range(kept, later[0]) if sent(path[i])]
    return prefix, suffix


def entry_type(entry: dict[str, Any]) -> str:
    return "setting" if entry["type"] in ("model_change", "thinking_level_change") else "other"


def kit_context(
    name: str, policy: Policy, choice: SplitTurn = "turn-start"
) -> tuple[ImportedSession, list[Key], dict[Key, dict[str, Any]]]:
    imported = import_pi_session(WRITTEN / f"{name}.jsonl", repair=policy, split_turn=choice)
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
        keys.append(("summary", result.compaction_id))
    by_id = {entry.id: entry for entry in imported.entries}
    for entry_id in result.kept_entry_ids:
        entry = by_id[entry_id]
        if "~result" in entry_id:
            assert isinstance(entry, MessageEntry)
            keys.append(("synthetic", RENAMED.sub("", entry.message["toolCallId"])))
        else:
            keys.append(("id", entry_id))
    messages = result.messages[len(result.messages) - len(result.kept_entry_ids) :]
    return imported, keys, dict(zip(keys[len(keys) - len(messages) :], messages, strict=True))


def text_sha256(content: str | list[dict[str, Any]]) -> str:
    blocks = [{"type": "text", "text": content}] if isinstance(content, str) else content
    texts = [PLACEHOLDER.sub("", b["text"]) for b in blocks if b["type"] == "text"]
    texts = [text for text in texts if text]
    return hashlib.sha256("\0".join(texts).encode("utf-8")).hexdigest()


def expected_sha256(expected: dict[str, Any], raw: dict[str, Any]) -> str:
    """A thinking-only reply is sent as its thinking; otherwise the message's own text."""
    message = raw.get("message", {})
    own = message.get("content") if message.get("role") == "assistant" else None
    if isinstance(own, list) and all(b["type"] == "thinking" for b in own):
        return str(expected.get("sentTextSha256", expected["textSha256"]))
    return str(expected["textSha256"])


def test_every_written_session_has_its_oracle() -> None:
    assert len(NAMES) >= 15
    for name in NAMES:
        data = oracle(name)
        digest = hashlib.sha256((WRITTEN / f"{name}.jsonl").read_bytes()).hexdigest()
        assert data["sha256"] == digest, name


@pytest.mark.parametrize("policy", LENIENT)
@pytest.mark.parametrize("name", NAMES)
def test_the_kit_sends_what_pi_sends(name: str, policy: Policy) -> None:
    expected = oracle(name)["messages"]
    raw = raw_entries(name)
    _, keys, messages = kit_context(name, policy)
    pi = [pi_key(m) for m in expected]
    prefix, _suffix = split_turn_keys(name)
    assert [k for k in keys if k not in pi] == prefix, "kit-only messages"
    assert [k for k in keys if k in pi] == pi, "Pi's messages, in Pi's order"
    for want in expected:
        key = pi_key(want)
        if key[0] == "summary":
            continue  # the kit sends its seven fields, not Pi's Markdown (documented)
        got = messages[key]
        assert got["role"] == want["role"], key
        if key[0] == "id":
            assert text_sha256(got["content"]) == expected_sha256(want, raw[key[1]]), key
        if want["role"] == "assistant":
            calls = [
                [RENAMED.sub("", b["id"]), b["name"]]
                for b in got["content"]
                if b["type"] == "toolCall"
            ]
            assert calls == want["toolCalls"], key
        if want["role"] == "toolResult":
            assert RENAMED.sub("", got["toolCallId"]) == want["toolCallId"], key
            assert got["isError"] == want["isError"], key


@pytest.mark.parametrize("name", NAMES)
def test_next_user_leaves_out_only_the_split_turns_kept_part(name: str) -> None:
    pi = [pi_key(m) for m in oracle(name)["messages"]]
    _, keys, _ = kit_context(name, "synthesize", "next-user")
    prefix, suffix = split_turn_keys(name)
    assert [k for k in pi if k not in keys] == (suffix if suffix is not None else [])
    assert [k for k in keys if k not in pi] == (prefix if suffix is None else [])


STRICT_REFUSES = {"reused-call-id": ["duplicate_call"], "fork-after-label": ["missing_parent"]}
"""The written sessions ``strict`` refuses, and the kinds it names; it imports all the others."""


@pytest.mark.parametrize("name", NAMES)
def test_strict_imports_or_names_what_it_refuses(name: str) -> None:
    if name not in STRICT_REFUSES:
        import_pi_session(WRITTEN / f"{name}.jsonl")
        return
    with pytest.raises(PiImportError) as refused:
        import_pi_session(WRITTEN / f"{name}.jsonl")
    assert [item.kind for item in refused.value.items] == STRICT_REFUSES[name]


@pytest.mark.skipif(
    shutil.which("node") is None or not (ORACLE_SCRIPT / "node_modules").is_dir(),
    reason="needs node and `npm ci` in scripts/pi-oracle",
)
def test_the_committed_fixtures_are_what_pi_writes() -> None:
    done = subprocess.run(
        ["node", "oracle.mjs", "--check"], cwd=ORACLE_SCRIPT, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stdout + done.stderr


def written(name: str, policy: Policy = "synthesize") -> ImportedSession:
    return import_pi_session(WRITTEN / f"{name}.jsonl", repair=policy)


def first_entry(name: str, match: Any) -> str:
    """The id of the first raw entry for which ``match(entry)`` holds."""
    return next(entry_id for entry_id, entry in raw_entries(name).items() if match(entry))


def test_a_forked_sessions_missing_parent_is_reported_and_its_entry_starts_the_path() -> None:
    entries = raw_entries("fork-after-label")
    orphan = first_entry("fork-after-label", lambda e: e["parentId"] not in [*entries, None])
    for policy in LENIENT:
        imported = written("fork-after-label", policy)
        [item] = imported.report.of_kind("missing_parent")
        assert (item.id, repr(entries[orphan]["parentId"]) in item.message) == (orphan, True)
        assert [entry.id for entry in imported.path[1:2]] == [orphan]
    with pytest.raises(PiImportError) as refused:
        written("fork-after-label", "strict")
    assert str(refused.value).startswith(f"line 6: {orphan}: missing_parent: parent ")


def test_a_reused_call_id_is_reported_once_naming_the_message_that_declared_it_first() -> None:
    def declares(entry: dict[str, Any]) -> bool:
        content = entry.get("message", {}).get("content")
        return isinstance(content, list) and any(b.get("id") == "call_0" for b in content)

    first = first_entry("reused-call-id", declares)
    with pytest.raises(PiImportError) as refused:
        written("reused-call-id", "strict")
    [item] = refused.value.items
    assert "tool call id call_0 is declared again" in item.message
    assert f"(first in {first})" in item.message
    [renamed] = written("reused-call-id").report.of_kind("duplicate_call")
    assert f"(first in {first}); renamed call_0~2" in renamed.message


def test_split_turn_items_claim_a_turn_context_only_where_pis_summary_has_one() -> None:
    first, follow_up = written("split-turn-follow-up").report.of_kind("split_turn")
    assert first.message.endswith("Pi's summary holds that part of the turn in its Turn Context")
    assert follow_up.message.endswith("Pi's summary has no Turn Context for this turn")


def test_a_split_turns_summary_keeps_its_file_lists_as_plain_paths() -> None:
    details = raw_entries("split-turn")[first_entry("split-turn", lambda e: "details" in e)]
    files = details["details"]
    assert files["modifiedFiles"] and files["readFiles"]
    [compaction] = [e for e in written("split-turn").entries if e.type == "compaction"]
    assert compaction.summary.changed_files == files["modifiedFiles"]
    read = [f"read-files — {path}" for path in files["readFiles"]]
    assert [item for item in compaction.summary.constraints if item in read] == read


def test_a_reply_that_is_only_thinking_is_sent_as_its_thinking() -> None:
    imported = written("thinking-only")
    entries = raw_entries("thinking-only")
    only = [
        entry_id
        for entry_id, entry in entries.items()
        if entry["type"] == "message"
        and entry["message"]["role"] == "assistant"
        and all(b["type"] == "thinking" for b in entry["message"]["content"])
    ]
    sent = {e.id: e.message["content"] for e in imported.path if isinstance(e, MessageEntry)}
    thoughts = [[b["thinking"] for b in entries[i]["message"]["content"]] for i in only]
    got = [[b["text"] for b in sent[i]] for i in only]
    assert got == [[t for t in ts if t.strip()] for ts in thoughts]  # blank thinking: nothing
    assert len(imported.report.of_kind("thinking")) == 4
