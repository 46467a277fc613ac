"""The chapter API the importer relies on, imported in this one place."""

from course.groups import InteractionError, group_interactions
from course.session import (
    CompactionEntry,
    CompactionSummary,
    MessageEntry,
    MetadataEntry,
    SessionEntry,
    SessionEntryError,
    SessionPathError,
    SessionStoreError,
    encode_entry,
    entry_to_json,
    parse_session_entry,
    path_to,
    recover_jsonl,
    summary_to_json,
)

__all__ = [
    "CompactionEntry",
    "CompactionSummary",
    "InteractionError",
    "MessageEntry",
    "MetadataEntry",
    "SessionEntry",
    "SessionEntryError",
    "SessionPathError",
    "SessionStoreError",
    "encode_entry",
    "entry_to_json",
    "group_interactions",
    "parse_session_entry",
    "path_to",
    "recover_jsonl",
    "summary_to_json",
]
