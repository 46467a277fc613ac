"""Lab 11.1 · The compaction record: its seven-field summary, its entry, their strict parsers."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

from .fields import FieldReader
from .labs import LabNotImplemented

SUMMARY_LIST_FIELDS: tuple[tuple[str, str], ...] = (
    ("constraints", "constraints"),
    ("completed", "completed"),
    ("decisions", "decisions"),
    ("changed_files", "changedFiles"),
    ("unresolved", "unresolved"),
    ("next", "next"),
)
"""The six list fields of a summary: (attribute name, JSON key), in their fixed order."""

SUMMARY_KEYS: tuple[str, ...] = ("goal",) + tuple(key for _, key in SUMMARY_LIST_FIELDS)
"""The seven JSON keys of a summary object; no other key is allowed."""

COMPACTION_KEYS: tuple[str, ...] = (
    "type",
    "id",
    "parentId",
    "timestamp",
    "summary",
    "firstKeptEntryId",
    "tokensBefore",
)
"""The JSON keys of a compaction entry; no other key is allowed."""


@dataclass(frozen=True)
class CompactionSummary:
    """The seven facts a compaction keeps about the messages it replaces."""

    goal: str
    constraints: list[str]
    completed: list[str]
    decisions: list[str]
    changed_files: list[str]
    unresolved: list[str]
    next: list[str]


@dataclass(frozen=True)
class CompactionEntry:
    """An appended summary of older messages; resume keeps originals from the first kept id."""

    id: str
    parent_id: str
    timestamp: int | float
    summary: CompactionSummary
    first_kept_entry_id: str
    tokens_before: int | float
    type: Literal["compaction"] = "compaction"


def summary_to_json(summary: CompactionSummary) -> dict[str, Any]:
    """The camelCase JSON object of a summary (fresh lists)."""
    out: dict[str, Any] = {"goal": summary.goal}
    for attr, key in SUMMARY_LIST_FIELDS:
        items = getattr(summary, attr)
        out[key] = list(items) if isinstance(items, list) else items
    return out


def parse_summary(
    value: object, *, entry_id: str | None = None, path: str = ".summary"
) -> CompactionSummary:
    """A fresh ``CompactionSummary`` read strictly from a camelCase summary object.

    Takes the JSON object, or a ``CompactionSummary`` (read as its ``summary_to_json``, as the
    given ``copy_entry`` hands one over); ``entry_id`` and ``path`` only name the place in errors.
    Accepts exactly the seven keys of ``SUMMARY_KEYS``: a ``goal`` that is a string and not
    blank, and six lists whose items are all strings. Strings are kept as they are given (a goal
    is not stripped).

    Refuses with a ``SessionEntryError`` (a ``ValueError``) naming ``entry_id`` and the field, e.g.
    ``compact-1.summary.files: unknown field``: a value that is not an object (a list holding a
    summary too), a missing key, an extra one such as the old ``files`` alias, a goal ``""``,
    ``"  "`` or ``3``, a list given as a string (``"constraints": "one item"`` is never wrapped
    into a list), an item that is not a string. The given ``FieldReader(entry_id)`` reads each
    kind of field and names it this way.

    The lists returned are new: the caller's summary and the parsed one share nothing, and
    ``value`` is left as it was. The chapter's compact-1 summary keeps its goal and its
    ``changedFiles`` ``["course/session.py"]`` (section "摘要先成为 session 中的一条普通事实").
    """
    raise LabNotImplemented(
        "11.1",
        "compaction entry",
        "parse_summary",
        "exactly the seven keys, a goal that is not blank, six lists of strings, fresh lists",
    )


def parse_compaction_entry(value: Mapping[str, Any]) -> CompactionEntry:
    """A fresh ``CompactionEntry`` read strictly from an object whose ``type`` is ``"compaction"``.

    Takes what ``parse_session_entry`` hands over for that type, so ``type`` needs no check of its
    own. Accepts exactly the keys of ``COMPACTION_KEYS``: ``id``, ``parentId`` and
    ``firstKeptEntryId`` non-empty strings (a compaction always has a parent); ``timestamp`` and
    ``tokensBefore`` non-negative finite numbers, kept as given (``0`` is valid; an ``int`` stays
    an ``int``: ``29``, never ``29.0``); a summary by ``parse_summary``'s rules.
    ``tokensBefore`` is the caller's figure: checked, never recomputed.

    Refuses with a ``SessionEntryError`` (a ``ValueError``) naming the entry and the key, e.g.
    ``compact-1.tokensBefore: must be a non-negative finite number, got -1``: a missing key
    (``summary`` too), an unknown one (``"note"``), an empty or ``null`` parentId, and ``-5``,
    ``NaN``, ``Infinity``, ``True`` or ``"29"`` for either number. The given
    ``FieldReader.of(value)`` reads each kind of field and names it this way.

    The record shares no list with ``value``, which is left as it was. The chapter's compact-1
    (section "摘要先成为 session 中的一条普通事实") reads as ``parent_id="a3"``,
    ``first_kept_entry_id="u2"`` and ``tokens_before=29``, and ``entry_to_json`` gives the object
    back unchanged.
    """
    raise LabNotImplemented(
        "11.1",
        "compaction entry",
        "parse_compaction_entry",
        "exactly COMPACTION_KEYS: non-empty ids, non-negative finite numbers, a strict summary",
    )
