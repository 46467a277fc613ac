"""Lab 11.1 · The compaction record: its seven-field summary, its entry, their strict parsers."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

from course.locale import gettext as _

from .fields import FieldReader, kind_name

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
    """Narrow a camelCase summary object to a fresh ``CompactionSummary``.

    ``value`` may also be a ``CompactionSummary`` already (the given ``copy_entry`` copies a
    record's summary this way): read it as its JSON object (``summary_to_json``) and check it
    the same. Read it with a ``FieldReader(entry_id)``; the rules:

    - ``value`` is an object (a list, even one holding a summary, is an error);
    - exactly the seven keys of ``SUMMARY_KEYS``: a missing key, or an extra one such as an
      old ``files`` alias, is an error;
    - ``goal`` is a string that is not blank (``""`` and ``"  "`` are errors);
    - each of the six list fields is a list of strings (``FieldReader.string_list``): a
      field given as a string, ``"constraints": "one item"``, is an error, never wrapped into
      ``["one item"]``; so is an item that is not a string.

    The lists returned are new: the caller's summary and the parsed one share nothing. Every
    error is a ``SessionEntryError`` (a ``ValueError``) naming ``entry_id`` and the field,
    e.g. ``compact-1.summary.files: unknown field``.
    """
    if isinstance(value, CompactionSummary):
        value = summary_to_json(value)
    r = FieldReader(entry_id)
    obj = r.mapping(value, path, SUMMARY_KEYS)
    goal = r.string(obj["goal"], f"{path}.goal", non_blank=True)
    lists = {attr: r.string_list(obj[key], f"{path}.{key}") for attr, key in SUMMARY_LIST_FIELDS}
    return CompactionSummary(goal=goal, **lists)


def parse_compaction_entry(value: Mapping[str, Any]) -> CompactionEntry:
    """Narrow an object whose ``type`` is ``"compaction"`` to a fresh ``CompactionEntry``.

    Read every field with ``FieldReader.of(value)``; the rules:

    - exactly the keys of ``COMPACTION_KEYS``: a missing key (``summary`` too) or an unknown
      one (``"note"``) is an error;
    - ``id``, ``parentId`` and ``firstKeptEntryId`` are non-empty strings (a compaction
      always has a parent: a ``null`` parentId is an error too);
    - ``timestamp`` and ``tokensBefore`` are non-negative finite numbers
      (``FieldReader.number``): ``-5``, ``NaN``, ``Infinity``, ``True`` and ``"29"`` are
      errors, for either field; an ``int`` stays an ``int``. ``tokensBefore`` is the
      caller's figure: check it, do not recompute it;
    - the summary goes through ``parse_summary(..., entry_id=...)``, so the record shares no
      list with ``value``.

    Every error is a ``SessionEntryError`` (a ``ValueError``) naming the entry and the field,
    e.g. ``compact-1.tokensBefore: must be a non-negative finite number, got -1``.
    """
    if not isinstance(value, Mapping):
        raise FieldReader(None).fail(
            "", _("must be an object, got {kind}").format(kind=kind_name(value))
        )
    r = FieldReader.of(value)
    e = r.mapping(value, "", COMPACTION_KEYS)
    entry_id = r.string(e["id"], ".id", non_empty=True)
    if e["type"] != "compaction":
        raise r.fail(".type", _("must be 'compaction', got {kind}").format(kind=repr(e["type"])))
    parent_id = r.parent_id(e["parentId"], nullable=False)
    timestamp = r.number(e["timestamp"], ".timestamp")
    summary = parse_summary(e["summary"], entry_id=entry_id)
    first_kept = r.string(e["firstKeptEntryId"], ".firstKeptEntryId", non_empty=True)
    tokens_before = r.number(e["tokensBefore"], ".tokensBefore")
    assert parent_id is not None
    return CompactionEntry(
        id=entry_id,
        parent_id=parent_id,
        timestamp=timestamp,
        summary=summary,
        first_kept_entry_id=first_kept,
        tokens_before=tokens_before,
    )
