"""Labs 11.4 and 11.5, first independent solution."""

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
    if len(path) == 0:
        raise CompactionError(f"{id}: the path is empty")
    if id in {entry.id for entry in path}:
        raise CompactionError(f"{id}: already on the path")
    firsts = [group[0].id for group in split_interactions(path)]
    if first_kept_entry_id not in firsts:
        raise CompactionError(f"{id}: first kept {first_kept_entry_id} must be one of {firsts}")
    raw_summary = summary_to_json(summary) if isinstance(summary, CompactionSummary) else summary
    record = parse_session_entry(
        {
            "type": "compaction",
            "id": id,
            "parentId": path[len(path) - 1].id,
            "timestamp": timestamp,
            "summary": raw_summary,
            "firstKeptEntryId": first_kept_entry_id,
            "tokensBefore": tokens_before,
        }
    )
    if not isinstance(record, CompactionEntry):
        raise CompactionError(f"{id}: not a compaction")
    return record


def summary_message(summary: CompactionSummary) -> Message:
    text = SUMMARY_TITLE + "\nGoal: " + summary.goal
    for attribute, heading in SUMMARY_HEADINGS:
        text += "\n" + heading + ":"
        values = getattr(summary, attribute)
        if not values:
            text += "\n- (none)"
        for value in values:
            text += "\n- " + value
    return {"role": "user", "content": text}


def latest_compaction(path: Sequence[SessionEntry]) -> int | None:
    found = None
    for position, entry in enumerate(path):
        if isinstance(entry, CompactionEntry):
            found = position
    return found


def resume_suffix(
    path: Sequence[SessionEntry],
) -> tuple[CompactionEntry | None, list[SessionEntry]]:
    where = latest_compaction(path)
    if where is None:
        return None, list(path)
    record = path[where]
    assert isinstance(record, CompactionEntry)
    ids = [entry.id for entry in path[:where]]
    if record.first_kept_entry_id not in ids:
        raise CompactionError(
            f"{record.id}: first kept {record.first_kept_entry_id} is not before it on the path"
        )
    begin = ids.index(record.first_kept_entry_id)
    first = path[begin]
    if not isinstance(first, MessageEntry) or first.message["role"] != "user":
        raise CompactionError(
            f"{record.id}: first kept {record.first_kept_entry_id} is not a user message"
        )
    return record, [e for e in path[begin:] if isinstance(e, MessageEntry)]
