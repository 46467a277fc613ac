"""Lab 11.1, second independent solution: explicit fields, checks before building."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from course.fields import FieldReader
from course.summary import COMPACTION_KEYS, SUMMARY_KEYS, CompactionEntry, CompactionSummary


def parse_summary(
    value: object, *, entry_id: str | None = None, path: str = ".summary"
) -> CompactionSummary:
    if isinstance(value, CompactionSummary):
        value = {
            "goal": value.goal,
            "constraints": value.constraints,
            "completed": value.completed,
            "decisions": value.decisions,
            "changedFiles": value.changed_files,
            "unresolved": value.unresolved,
            "next": value.next,
        }
    check = FieldReader(entry_id)
    raw = check.mapping(value, path, SUMMARY_KEYS)

    def strings(key: str) -> list[str]:
        return check.string_list(raw[key], f"{path}.{key}")

    return CompactionSummary(
        goal=check.string(raw["goal"], f"{path}.goal", non_blank=True),
        constraints=strings("constraints"),
        completed=strings("completed"),
        decisions=strings("decisions"),
        changed_files=strings("changedFiles"),
        unresolved=strings("unresolved"),
        next=strings("next"),
    )


def parse_compaction_entry(value: Mapping[str, Any]) -> CompactionEntry:
    check = FieldReader.of(value)
    raw = check.mapping(value, "", COMPACTION_KEYS)
    parent = check.parent_id(raw["parentId"], nullable=False)
    if parent is None:
        raise check.fail(".parentId", "a compaction always has a parent")
    return CompactionEntry(
        id=check.string(raw["id"], ".id", non_empty=True),
        parent_id=parent,
        timestamp=check.number(raw["timestamp"], ".timestamp"),
        summary=parse_summary(raw["summary"], entry_id=check.entry_id),
        first_kept_entry_id=check.string(
            raw["firstKeptEntryId"], ".firstKeptEntryId", non_empty=True
        ),
        tokens_before=check.number(raw["tokensBefore"], ".tokensBefore"),
    )
