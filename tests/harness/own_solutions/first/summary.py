"""Lab 11.1, first independent solution: a loop over the list fields."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from course.fields import FieldReader
from course.summary import (
    COMPACTION_KEYS,
    SUMMARY_KEYS,
    SUMMARY_LIST_FIELDS,
    CompactionEntry,
    CompactionSummary,
    summary_to_json,
)


def parse_summary(
    value: object, *, entry_id: str | None = None, path: str = ".summary"
) -> CompactionSummary:
    reader = FieldReader(entry_id)
    if isinstance(value, CompactionSummary):
        value = summary_to_json(value)
    fields = reader.mapping(value, path, SUMMARY_KEYS)
    goal = reader.string(fields["goal"], path + ".goal", non_blank=True)
    found = {}
    for attribute, key in SUMMARY_LIST_FIELDS:
        found[attribute] = reader.string_list(fields[key], path + "." + key)
    return CompactionSummary(goal, **found)


def parse_compaction_entry(value: Mapping[str, Any]) -> CompactionEntry:
    reader = FieldReader.of(value)
    fields = reader.mapping(value, "", COMPACTION_KEYS)
    entry_id = reader.string(fields["id"], ".id", non_empty=True)
    parent = reader.string(fields["parentId"], ".parentId", non_empty=True)
    when = reader.number(fields["timestamp"], ".timestamp")
    kept = reader.string(fields["firstKeptEntryId"], ".firstKeptEntryId", non_empty=True)
    before = reader.number(fields["tokensBefore"], ".tokensBefore")
    summary = parse_summary(fields["summary"], entry_id=entry_id)
    return CompactionEntry(entry_id, parent, when, summary, kept, before)
