"""Labs 11.4 and 11.5, second independent solution."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from course.compaction import SUMMARY_HEADINGS, SUMMARY_TITLE, CompactionError
from course.entries import MessageEntry, SessionEntry, parse_session_entry
from course.groups import split_interactions
from course.messages import Message
from course.summary import CompactionEntry, CompactionSummary, summary_to_json


def create_compaction_entry(
    path: Sequence[SessionEntry],
    *,
    id: str,
    timestamp: float,
    summary: CompactionSummary | Mapping[str, Any],
    first_kept_entry_id: str,
    tokens_before: float,
) -> CompactionEntry:
    if not path:
        raise CompactionError(f"{id}: nothing to compact")
    leaf = path[-1]
    for entry in path:
        if entry.id == id:
            raise CompactionError(f"{id}: this id is taken by an entry of the path")
    allowed = {group[0].id for group in split_interactions(path)}
    if first_kept_entry_id not in allowed:
        raise CompactionError(
            f"{id}.firstKeptEntryId: {first_kept_entry_id} does not start an interaction "
            f"(one of {', '.join(sorted(allowed))})"
        )
    value: dict[str, Any] = dict(
        type="compaction",
        id=id,
        parentId=leaf.id,
        timestamp=timestamp,
        firstKeptEntryId=first_kept_entry_id,
        tokensBefore=tokens_before,
    )
    value["summary"] = (
        summary_to_json(summary) if isinstance(summary, CompactionSummary) else summary
    )
    entry = parse_session_entry(value)
    assert isinstance(entry, CompactionEntry)
    return entry


def summary_message(summary: CompactionSummary) -> Message:
    parts = [SUMMARY_TITLE, "Goal: " + summary.goal]
    for name, title in SUMMARY_HEADINGS:
        items: list[str] = getattr(summary, name)
        parts.append(title + ":")
        parts += ["- " + item for item in items] if items else ["- (none)"]
    return {"role": "user", "content": "\n".join(parts)}


def latest_compaction(path: Sequence[SessionEntry]) -> int | None:
    indexes = [i for i, entry in enumerate(path) if entry.type == "compaction"]
    return indexes[-1] if indexes else None


def resume_suffix(
    path: Sequence[SessionEntry],
) -> tuple[CompactionEntry | None, list[SessionEntry]]:
    at = latest_compaction(path)
    if at is None:
        return None, [entry for entry in path]
    compaction = path[at]
    assert isinstance(compaction, CompactionEntry)
    wanted = compaction.first_kept_entry_id
    for start in range(at):
        candidate = path[start]
        if candidate.id != wanted:
            continue
        if isinstance(candidate, MessageEntry) and candidate.message["role"] == "user":
            tail = path[start:]
            return compaction, [e for e in tail if e.type == "message"]
        raise CompactionError(
            f"{compaction.id}: first kept {wanted} is not a user message starting an interaction"
        )
    raise CompactionError(f"{compaction.id}: first kept {wanted} is not on the path before it")
