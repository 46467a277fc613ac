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
    """A new compaction record to append after the path's leaf; it writes nothing anywhere.

    Takes the active path and the record's ``id``, ``timestamp``, ``summary`` (a JSON object or a
    ``CompactionSummary``), ``first_kept_entry_id`` and ``tokens_before``. Returns a fresh
    ``CompactionEntry`` whose ``parent_id`` is the path's last entry, whatever its type (a
    metadata leaf too), and whose fields obey Lab 11.1's rules (``parse_session_entry`` checks
    and copies a record; ``summary_to_json`` gives a ``CompactionSummary``'s JSON object).

    Refuses, each with a ``ValueError``: an empty path; an ``id`` already on the path (a
    ``CompactionError`` naming that id); a ``first_kept_entry_id`` that is not the first message
    of one of the path's interactions (one inside an interaction, like ``calls``, or one not on
    the path), naming every id that is allowed; a broken history; a summary, ``timestamp`` or
    ``tokens_before`` Lab 11.1 refuses, with its ``SessionEntryError`` naming the record's id
    and the JSON key (``compact-1.tokensBefore``).

    ``path`` and ``summary`` are left as they were: nothing is appended, and the record shares no
    list with ``summary``; the caller decides when to ``store.append`` it. Appended after the
    path to either store (and read back from a reopened JSONL log), with turns after it, the
    record is one ``build_context`` resumes from. Cost: linear in the path. On the chapter's
    nine entries, compact-1 with first kept ``u2`` and ``tokens_before=29`` gets
    ``parent_id="a3"``; ``u1``, ``u2`` and ``u3`` are the allowed first kept ids (section
    "`compact-1` 记录摘要与保留起点").
    """
    if not path:
        raise CompactionError(f"{id}: cannot compact an empty path (no leaf to append after)")
    if any(entry.id == id for entry in path):
        raise CompactionError(f"{id}: id is already used on the active path")
    starts = [group[0].id for group in split_interactions(path)]
    if first_kept_entry_id not in starts:
        raise CompactionError(
            f"{id}.firstKeptEntryId: {first_kept_entry_id} is not the first message of an "
            f"interaction on the path (allowed: {', '.join(starts) or 'none'})"
        )
    if isinstance(summary, CompactionSummary):
        summary = summary_to_json(summary)
    entry = parse_session_entry(
        {
            "type": "compaction",
            "id": id,
            "parentId": path[-1].id,
            "timestamp": timestamp,
            "summary": summary,
            "firstKeptEntryId": first_kept_entry_id,
            "tokensBefore": tokens_before,
        }
    )
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
    """The synthetic user message for a summary: its seven fields in a fixed order.

    A new ``{"role": "user", "content": text}``; ``summary`` is left as it was. The text's lines
    are joined by single newlines (no blank line, no newline at the end): ``SUMMARY_TITLE``;
    ``Goal: `` and the goal; and for each list, in the order of ``SUMMARY_HEADINGS``, its
    heading and a colon on a line of its own, followed by one ``- item`` line per item, or one
    ``- (none)`` line for an empty list. Items are written as they are. These words face the
    model and are English in every edition. A summary whose goal is ``Fix resume``, whose
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
        items = getattr(summary, attr)
        lines.append(f"{heading}:")
        lines.extend(f"- {item}" for item in items or ["(none)"])
    return {"role": "user", "content": "\n".join(lines)}


def latest_compaction(path: Sequence[SessionEntry]) -> int | None:
    """The index of the newest compaction entry on ``path``; ``None`` when it holds none.

    The newest is the last one on the path, not the first, whatever the timestamps say: on
    ``u1 … a3 compact-1 u4 a4 compact-2`` it is compact-2's index. ``path`` is left as it was.
    Cost: linear in the path at worst, without recursion (section
    "恢复时把最新摘要接在保留后缀前面").
    """
    for index in range(len(path) - 1, -1, -1):
        if isinstance(path[index], CompactionEntry):
            return index
    return None


def resume_suffix(
    path: Sequence[SessionEntry],
) -> tuple[CompactionEntry | None, list[SessionEntry]]:
    """The latest compaction (if any) and the entries whose messages follow its summary.

    Without a compaction the whole path follows: ``(None, list(path))``, a new list, never the
    caller's own. With one, only the newest counts (``latest_compaction``'s; older ones play no
    part): its ``first_kept_entry_id`` must be on the path before it and be a user message,
    else a ``CompactionError`` (a ``ValueError``) naming both ids, e.g.
    ``compact-1.firstKeptEntryId: calls is not a user message``. The suffix holds every message
    entry from first kept on, in path order; metadata entries and every compaction entry (older
    ones too) are left out. Its entries are the path's own, not copied; ``path`` is left as it
    was. Cost: linear in the path, without recursion.

    For ``u1 a1 u2 a2 m2 u3 … a3 compact-1 u4 a4``, with metadata ``m2`` and compact-1 keeping
    ``u2``, it is ``(compact-1, [u2, a2, u3, …, a3, u4, a4])``; section
    "恢复时把最新摘要接在保留后缀前面". ``build_context`` (Lab 11.3) reaches this only through
    the given ``open_context``, and only for a path holding a compaction: resume is all Lab
    11.5's.
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
            f"{compaction.id}.firstKeptEntryId: {first_kept} is not on the path before "
            f"{compaction.id}"
        )
    kept = path[start]
    if not (isinstance(kept, MessageEntry) and kept.message.get("role") == "user"):
        raise CompactionError(
            f"{compaction.id}.firstKeptEntryId: {first_kept} is not a user message, so it "
            "does not start an interaction"
        )
    return compaction, [entry for entry in path[start:] if isinstance(entry, MessageEntry)]
