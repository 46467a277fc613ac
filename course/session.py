"""The session API in one import: entries and their parser, the compaction record, stores, path."""

from .entries import (
    ENTRY_TYPES,
    MessageEntry,
    MetadataEntry,
    SessionEntry,
    check_unique_ids,
    copy_entry,
    entry_to_json,
    parse_entries,
    parse_message_entry,
    parse_session_entry,
)
from .fields import MAX_JSON_DEPTH, JsonValue, SessionEntryError, copy_json
from .jsonl import (
    JsonlSessionStore,
    RecoveredSession,
    RecoveryWarning,
    RepairResult,
    encode_entry,
    recover_jsonl,
    repair_jsonl,
)
from .messages import Message
from .stores import InMemorySessionStore, SessionStoreError, check_can_append
from .summary import (
    SUMMARY_LIST_FIELDS,
    CompactionEntry,
    CompactionSummary,
    parse_compaction_entry,
    parse_summary,
    summary_to_json,
)
from .tree import SessionPathError, path_to

__all__ = [
    "ENTRY_TYPES",
    "MAX_JSON_DEPTH",
    "SUMMARY_LIST_FIELDS",
    "CompactionEntry",
    "CompactionSummary",
    "InMemorySessionStore",
    "JsonValue",
    "JsonlSessionStore",
    "Message",
    "MessageEntry",
    "MetadataEntry",
    "RecoveredSession",
    "RecoveryWarning",
    "RepairResult",
    "SessionEntry",
    "SessionEntryError",
    "SessionPathError",
    "SessionStoreError",
    "check_can_append",
    "check_unique_ids",
    "copy_entry",
    "copy_json",
    "encode_entry",
    "entry_to_json",
    "parse_compaction_entry",
    "parse_entries",
    "parse_message_entry",
    "parse_session_entry",
    "parse_summary",
    "path_to",
    "recover_jsonl",
    "repair_jsonl",
    "summary_to_json",
]
