"""The real Pi sessions shipped with the kit, imported under every policy.

Every expected number here is counted from the raw JSON lines by ``RawCounts.scan``: a plain
walk over the file's objects (``pi_raw``) that tallies entry types, message roles and tool
calls, sets aside the aborted and failed assistant messages Pi never sends, and lists the calls
that no ``toolResult`` answers before the next ``user`` or ``bashExecution`` message (every file
is v1, so the file order is the one path). It shares no code with the importer.
"""

from __future__ import annotations

import gzip
import hashlib
import re
import tomllib
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from pi_builders import project
from pi_raw import line_count, raw_lines

from course.groups import group_interactions
from course.interop import (
    ImportedSession,
    PiImportError,
    Policy,
    import_pi_session,
    write_chapter_log,
)
from course.interop.samples import PI_SESSIONS_DIR
from course.session import CompactionEntry, JsonlSessionStore, MessageEntry, path_to

SYNTHESISED = "synthesised on import"


@dataclass
class RawCounts:
    """Tallies of a v1 Pi session file, straight from its JSON objects."""

    lines: int = 0
    objects: int = 0
    damaged: list[int] = field(default_factory=list)
    """Lines holding more than one object."""
    types: Counter[str] = field(default_factory=Counter)
    roles: Counter[str] = field(default_factory=Counter)
    """Roles of the messages Pi sends (not the failed ones)."""
    failed: list[int] = field(default_factory=list)
    """Lines of aborted and failed assistant messages."""
    calls: int = 0
    thinking_messages: int = 0
    unanswered: list[tuple[int, str]] = field(default_factory=list)
    """(line, call id) of every call left without a result, in file order."""
    compactions: list[tuple[int, str]] = field(default_factory=list)
    """(line, id of the entry the kit keeps from: the kept entry's turn start) per compaction."""
    last_message: str = ""
    """The id of the last message Pi sends."""

    @classmethod
    def scan(cls, path: Path) -> RawCounts:
        raw = raw_lines(path)
        counts = cls(lines=line_count(path), objects=len(raw))
        per_line = Counter(r.line for r in raw)
        counts.damaged = sorted(line for line, n in per_line.items() if n > 1)
        open_calls: dict[str, int] = {}
        for index, record in enumerate(raw):
            counts.types[record.data["type"]] += 1
            if record.data["type"] == "compaction":
                kept = record.data["firstKeptEntryIndex"]  # the header is index 0
                start = max(i for i in range(kept + 1) if raw[i].starts_turn)
                counts.compactions.append((record.line, raw[start].id))
            if record.failed:
                counts.failed.append(record.line)
            if not record.sent:
                continue
            counts.last_message = record.id
            role = record.role
            counts.roles[role] += 1
            if record.starts_turn:
                counts.unanswered += [(n, c) for c, n in open_calls.items()]
                open_calls = {}
            elif role == "assistant":
                kinds = [block["type"] for block in record.message["content"]]
                counts.thinking_messages += "thinking" in kinds
                for block in record.message["content"]:
                    if block["type"] == "toolCall":
                        counts.calls += 1
                        open_calls[block["id"]] = record.line
            elif role == "toolResult":
                del open_calls[record.message["toolCallId"]]
            assert index == 0 or record.data["type"] != "session"
        counts.unanswered += [(n, c) for c, n in open_calls.items()]
        return counts


def tally(imported: ImportedSession) -> tuple[Counter[str], int, int]:
    """Roles of the imported messages, tool calls, and synthesised results."""
    roles: Counter[str] = Counter()
    calls = synthesised = 0
    for entry in imported.entries:
        if not isinstance(entry, MessageEntry):
            continue
        message = entry.message
        roles[message["role"]] += 1
        if message["role"] == "assistant":
            calls += sum(block["type"] == "toolCall" for block in message["content"])
        if message["role"] == "toolResult" and SYNTHESISED in message["content"][0]["text"]:
            synthesised += 1
    return roles, calls, synthesised


def test_the_raw_counts_are_what_the_readme_says(real_session: Path) -> None:
    raw = RawCounts.scan(real_session)
    expected = {
        "large-session.jsonl.gz": (1019, []),
        "before-compaction.jsonl.gz": (1003, []),
        "damaged-line-session.jsonl.gz": (463, [440]),
    }
    assert (raw.lines, raw.damaged) == expected[real_session.name]
    assert raw.types["session"] == 1 and raw.failed


def test_strict_refuses_the_damaged_line_and_the_unanswered_calls(real_session: Path) -> None:
    raw = RawCounts.scan(real_session)
    refused = [(n, f"L{n}") for n in raw.damaged] + [(n, f"L{n}") for n, _ in raw.unanswered]
    if not refused:
        assert import_pi_session(real_session).report.repairs == []
        return
    with pytest.raises(PiImportError) as caught:
        import_pi_session(real_session)
    assert [(i.line, i.id) for i in caught.value.items] == refused
    first_line, first_id = refused[0]
    assert str(caught.value).startswith(f"line {first_line}: {first_id}: ")


@dataclass(frozen=True)
class Repaired:
    raw: RawCounts
    imported: ImportedSession
    repair: Policy


@pytest.fixture(params=["synthesize", "drop"])
def repaired(real_session: Path, request: pytest.FixtureRequest) -> Repaired:
    """A real session imported under each repair policy, and its raw counts."""
    repair: Policy = request.param
    return Repaired(
        RawCounts.scan(real_session), import_pi_session(real_session, repair=repair), repair
    )


def test_each_repair_imports_with_counts_derived_from_the_raw_lines(repaired: Repaired) -> None:
    raw, imported, repair = repaired.raw, repaired.imported, repaired.repair
    added = len(raw.unanswered) if repair == "synthesize" else 0
    # one entry per object (the header is the root metadata entry), one more per compaction
    # for its Markdown, and the synthesised results
    assert len(imported.entries) == raw.objects + len(raw.compactions) + added
    assert imported.path == imported.entries  # a v1 session is one path
    roles, calls, synthesised = tally(imported)
    assert roles == {
        "user": raw.roles["user"] + raw.roles["bashExecution"],
        "assistant": raw.roles["assistant"],
        "toolResult": raw.roles["toolResult"] + added,
    }
    assert synthesised == added
    assert calls == raw.calls - (len(raw.unanswered) if repair == "drop" else 0)
    counts = imported.report.counts()
    assert counts.get("unanswered_call", 0) == len(raw.unanswered)
    assert counts.get("thinking", 0) == raw.thinking_messages
    assert counts.get("converted", 0) == raw.roles["bashExecution"]
    assert counts.get("summary", 0) == len(raw.compactions)
    assert [i.line for i in imported.report.of_kind("failed_message")] == raw.failed
    assert [i.line for i in imported.report.of_kind("damaged_line")] == raw.damaged
    assert [i.line for i in imported.report.repairs] == sorted(
        raw.damaged + [n for n, _ in raw.unanswered]
    )


def test_the_chapter_groups_and_projects_the_active_path(repaired: Repaired) -> None:
    raw, imported = repaired.raw, repaired.imported
    groups = group_interactions(imported.path)
    assert len(groups) == raw.roles["user"] + raw.roles["bashExecution"]
    compactions = [e for e in imported.path if isinstance(e, CompactionEntry)]
    assert [(c.id, c.first_kept_entry_id) for c in compactions] == [
        (f"L{line}", kept) for line, kept in raw.compactions
    ]
    context = project(imported.path)
    last = f"L{raw.compactions[-1][0]}" if raw.compactions else None
    assert context.compaction_id == last
    assert context.kept_entry_ids[-1] == raw.last_message
    assert imported.leaf_id == f"L{raw.lines}"


def test_the_written_log_opens_in_the_store_with_the_same_entries(
    repaired: Repaired, tmp_path: Path
) -> None:
    imported = repaired.imported
    out = write_chapter_log(imported.entries, tmp_path / "chapter.jsonl")
    assert out.read_bytes() == imported.to_jsonl()
    with JsonlSessionStore(out) as store:
        reopened = store.entries()
    assert reopened == imported.entries
    assert path_to(reopened, reopened[-1].id) == imported.path


# --------------------------------------------------------------------------- shipped data


def test_the_files_ship_as_recorded_with_their_licence() -> None:
    readme = (PI_SESSIONS_DIR / "README.md").read_text(encoding="utf-8")
    rows = re.findall(r"`([\w-]+\.jsonl\.gz)` \| [\d,]+ \| `([0-9a-f]{64})`", readme)
    assert len(rows) == 3
    for name, digest in rows:
        with gzip.open(PI_SESSIONS_DIR / name, "rb") as handle:
            assert hashlib.sha256(handle.read()).hexdigest() == digest
    licence = (PI_SESSIONS_DIR / "LICENSE").read_text(encoding="utf-8")
    assert licence.startswith("MIT License") and "Mario Zechner" in licence


def test_the_files_are_package_data() -> None:
    pyproject = tomllib.loads((Path(__file__).parents[2] / "pyproject.toml").read_text())
    patterns = pyproject["tool"]["setuptools"]["package-data"]["course"]
    shipped = {p.name for p in PI_SESSIONS_DIR.iterdir()}
    declared = {
        p.name
        for pattern in patterns
        if pattern.startswith("data/pi-sessions/")
        for p in PI_SESSIONS_DIR.glob(pattern.removeprefix("data/pi-sessions/"))
    }
    assert (
        shipped
        == declared
        == {
            "large-session.jsonl.gz",
            "before-compaction.jsonl.gz",
            "damaged-line-session.jsonl.gz",
            "LICENSE",
            "README.md",
        }
    )
