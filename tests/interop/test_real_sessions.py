"""The two real Pi sessions shipped with the kit, imported under every policy.

Every expected number here is counted from the raw JSON lines by ``RawCounts.scan``: a plain
walk over the gzipped file that tallies entry types, message roles and tool calls, and lists
the calls that no ``toolResult`` answers before the next ``user`` or ``bashExecution`` message
(both files are v1, so the file order is the one path). It shares no code with the importer.
"""

from __future__ import annotations

import gzip
import hashlib
import json
import re
import tomllib
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from pi_builders import project

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
    """Tallies of a v1 Pi session file, straight from its JSON lines."""

    lines: int = 0
    types: Counter[str] = field(default_factory=Counter)
    roles: Counter[str] = field(default_factory=Counter)
    calls: int = 0
    thinking_messages: int = 0
    unanswered: list[tuple[int, str]] = field(default_factory=list)
    """(line, call id) of every call left without a result, in file order."""
    compactions: list[tuple[int, int]] = field(default_factory=list)
    """(line, firstKeptEntryIndex) of every compaction."""
    last_message: int = 0
    """The line of the last message."""

    @classmethod
    def scan(cls, path: Path) -> RawCounts:
        with gzip.open(path, "rt", encoding="utf-8") as handle:
            raw = handle.read().splitlines()
        counts = cls(lines=len(raw))
        open_calls: dict[str, int] = {}
        for number, line in enumerate(raw, start=1):
            assert line.strip(), "the real files have no blank lines, so index + 1 = line"
            value = json.loads(line)
            counts.types[value["type"]] += 1
            if value["type"] == "compaction":
                counts.compactions.append((number, value["firstKeptEntryIndex"]))
            if value["type"] != "message":
                continue
            counts.last_message = number
            message = value["message"]
            role = message["role"]
            counts.roles[role] += 1
            if role in ("user", "bashExecution"):
                counts.unanswered += [(n, c) for c, n in open_calls.items()]
                open_calls = {}
            elif role == "assistant":
                kinds = [block["type"] for block in message["content"]]
                counts.thinking_messages += "thinking" in kinds
                for block in message["content"]:
                    if block["type"] == "toolCall":
                        counts.calls += 1
                        open_calls[block["id"]] = number
            elif role == "toolResult":
                del open_calls[message["toolCallId"]]
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
    expected = {"large-session.jsonl.gz": 1019, "before-compaction.jsonl.gz": 1003}
    assert raw.lines == expected[real_session.name]
    assert raw.types["session"] == 1 and raw.unanswered


def test_strict_stops_at_the_first_unanswered_call_and_lists_them_all(real_session: Path) -> None:
    raw = RawCounts.scan(real_session)
    with pytest.raises(PiImportError) as caught:
        import_pi_session(real_session)
    assert [(i.line, i.id) for i in caught.value.items] == [(n, f"L{n}") for n, _ in raw.unanswered]
    first_line, first_call = raw.unanswered[0]
    assert str(caught.value).startswith(f"line {first_line}: L{first_line}: unanswered_call:")
    assert first_call in str(caught.value)


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
    # one entry per line (the header is the root metadata entry), one more per compaction
    # for its Markdown, and the synthesised results
    assert len(imported.entries) == raw.lines + len(raw.compactions) + added
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
    assert counts["unanswered_call"] == len(raw.unanswered)
    assert counts.get("thinking", 0) == raw.thinking_messages
    assert counts.get("converted", 0) == raw.roles["bashExecution"]
    assert counts.get("summary", 0) == len(raw.compactions)
    assert [i.line for i in imported.report.repairs] == [n for n, _ in raw.unanswered]


def test_the_chapter_groups_and_projects_the_active_path(repaired: Repaired) -> None:
    raw, imported = repaired.raw, repaired.imported
    groups = group_interactions(imported.path)
    assert len(groups) == raw.roles["user"] + raw.roles["bashExecution"]
    compactions = [e for e in imported.path if isinstance(e, CompactionEntry)]
    assert [(c.id, c.first_kept_entry_id) for c in compactions] == [
        (f"L{line}", f"L{index + 1}") for line, index in raw.compactions
    ]
    context = project(imported.path)
    last = f"L{raw.compactions[-1][0]}" if raw.compactions else None
    assert context.compaction_id == last
    assert context.kept_entry_ids[-1] == f"L{raw.last_message}"
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
    assert len(rows) == 2
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
            "LICENSE",
            "README.md",
        }
    )
