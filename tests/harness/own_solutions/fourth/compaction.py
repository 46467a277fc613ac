"""Labs 11.4 and 11.5 · Creating a compaction record, and resuming from the latest one."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from .entries import MessageEntry, SessionEntry, parse_session_entry
from .fields import PrintableError
from .groups import split_interactions
from .messages import Message
from .summary import SUMMARY_LIST_FIELDS, CompactionEntry, CompactionSummary, summary_to_json


class CompactionError(PrintableError):
    """A compaction record cannot be created or resumed from."""


def create_compaction_entry(
    path: Sequence[SessionEntry],
    *,
    id: str,
    timestamp: float,
    summary: CompactionSummary | Mapping[str, Any],
    first_kept_entry_id: str,
    tokens_before: float,
) -> CompactionEntry:
    """A new compaction record to append after the path's leaf; writes nothing anywhere.

    Refuse an empty path and an ``id`` already on the path (``CompactionError``). The parent
    is the path's last entry, whatever its type (a metadata leaf too).
    ``first_kept_entry_id`` must be the first entry of one of the path's interactions (the
    user message that opens a group of ``split_interactions``); say which ids are allowed
    when it is not. Build the JSON object and let ``parse_session_entry`` check and copy it (a
    ``CompactionSummary`` goes through ``summary_to_json`` first): the summary, ``timestamp``
    and ``tokens_before`` follow Lab 11.1's rules, refused with its ``SessionEntryError``
    naming the JSON key (``compact-1.tokensBefore``), and the record shares no list with
    ``summary``. Every refusal is a ``ValueError``.

    Append it nowhere and change nothing it is given: ``path`` (do not ``append`` to it) and
    ``summary`` stay as they were; the caller decides when to ``store.append`` the record.
    """
    if not path:
        raise CompactionError(f"{id}: cannot compact an empty path")
    if any(entry.id == id for entry in path):
        raise CompactionError(f"{id}: id already on the path")
    parent_id = path[-1].id
    allowed = [group[0].id for group in split_interactions(path)]
    if first_kept_entry_id not in allowed:
        raise CompactionError(
            f"{id}.firstKeptEntryId: {first_kept_entry_id!r} does not start an interaction; "
            f"allowed: {', '.join(allowed) if allowed else '(none)'}"
        )
    summary_json = summary_to_json(summary) if isinstance(summary, CompactionSummary) else summary
    record = {
        "type": "compaction",
        "id": id,
        "parentId": parent_id,
        "timestamp": timestamp,
        "summary": summary_json,
        "firstKeptEntryId": first_kept_entry_id,
        "tokensBefore": tokens_before,
    }
    entry = parse_session_entry(record)
    assert isinstance(entry, CompactionEntry)
    return entry


SUMMARY_HEADINGS: tuple[tuple[str, str], ...] = (
    ("constraints", "Constraints"),
    ("completed", "Completed"),
    ("decisions", "Decisions"),
    ("changed_files", "Changed files"),
    ("unresolved", "Unresolved"),
    ("next", "Next"),
)
"""The six list fields' headings in the summary message, in their fixed order."""
assert [a for a, _ in SUMMARY_HEADINGS] == [a for a, _ in SUMMARY_LIST_FIELDS]

SUMMARY_TITLE = "[Compaction summary of earlier messages]"
"""The first line of every summary message."""


def summary_message(summary: CompactionSummary) -> Message:
    """The synthetic user message for a summary: its seven fields in fixed order.

    One ``{"role": "user", "content": text}``. The text is lines joined by single newlines
    (no blank line, no newline at the end): ``SUMMARY_TITLE``; ``Goal: `` and the goal; then,
    for each list in the order of ``SUMMARY_HEADINGS``, its heading and a colon on a line of
    its own, then one ``- item`` line per item, or one ``- (none)`` line for an empty list.
    Items are written as they are. A summary whose goal is ``Fix resume``, whose
    ``constraints`` are ``["Never rewrite an entry"]``, whose ``completed`` are
    ``["Parsed compact-1", "Grouped u2"]`` and whose other lists are empty reads::

        [Compaction summary of earlier messages]
        Goal: Fix resume
        Constraints:
        - Never rewrite an entry
        Completed:
        - Parsed compact-1
        - Grouped u2
        Decisions:
        - (none)
        Changed files:
        - (none)
        Unresolved:
        - (none)
        Next:
        - (none)
    """
    lines = [SUMMARY_TITLE, f"Goal: {summary.goal}"]
    for attr, heading in SUMMARY_HEADINGS:
        lines.append(f"{heading}:")
        items = getattr(summary, attr)
        if items:
            lines.extend(f"- {item}" for item in items)
        else:
            lines.append("- (none)")
    return {"role": "user", "content": "\n".join(lines)}


def latest_compaction(path: Sequence[SessionEntry]) -> int | None:
    """Index of the newest compaction entry on the path, searching from its end; None if none.

    The newest is the last one on the path (not the first); the path is not changed.
    """
    for index in range(len(path) - 1, -1, -1):
        if isinstance(path[index], CompactionEntry):
            return index
    return None


def resume_suffix(
    path: Sequence[SessionEntry],
) -> tuple[CompactionEntry | None, list[SessionEntry]]:
    """The latest compaction (if any) and the entries whose messages follow its summary.

    Without a compaction the whole path follows: ``(None, list(path))``, as it is. With one
    (``latest_compaction``; older compactions play no part), its ``first_kept_entry_id`` must
    be on the path before it and be a user message, else a ``CompactionError`` (a
    ``ValueError``) naming both ids, e.g. ``compact-1.firstKeptEntryId: calls is not a user
    message``. The suffix is every message entry from first kept on, in path order: metadata
    entries and every compaction entry (older ones too) are left out. For ``u1 a1 u2 a2 m2
    u3 … a3 compact-1 u4 a4``, with metadata ``m2`` and compact-1 keeping ``u2``, it is
    ``(compact-1, [u2, a2, u3, …, a3, u4, a4])``. Entries are not copied here.

    ``build_context`` (Lab 11.3) reaches this only through the given ``open_context`` in
    ``context.py``, and only for a path holding a compaction: resume is all Lab 11.5's.
    """
    index = latest_compaction(path)
    if index is None:
        return None, list(path)
    compaction = path[index]
    assert isinstance(compaction, CompactionEntry)
    first_kept = compaction.first_kept_entry_id
    start = next((i for i in range(index) if path[i].id == first_kept), None)
    if start is None:
        raise CompactionError(
            f"{compaction.id}.firstKeptEntryId: {first_kept} is not on the path "
            f"before {compaction.id}"
        )
    kept = path[start]
    if not (isinstance(kept, MessageEntry) and kept.message.get("role") == "user"):
        raise CompactionError(
            f"{compaction.id}.firstKeptEntryId: {first_kept} is not a user message"
        )
    return compaction, [entry for entry in path[start:] if isinstance(entry, MessageEntry)]
