"""Session entries: the types, the strict parser, the stores and the active path."""

from __future__ import annotations

import json
import math
import os
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import Any, Literal, TypeAlias

JsonValue: TypeAlias = Any
"""A value made of dict (str keys), list, str, int, float, bool and None."""

Message: TypeAlias = dict[str, Any]
"""A JSON-shaped message: ``{"role": ..., "content": ...}`` and its role's fields."""

MAX_JSON_DEPTH = 64
"""Nesting deeper than this inside tool arguments or metadata values is refused."""

SUMMARY_LIST_FIELDS: tuple[tuple[str, str], ...] = (
    ("constraints", "constraints"),
    ("completed", "completed"),
    ("decisions", "decisions"),
    ("changed_files", "changedFiles"),
    ("unresolved", "unresolved"),
    ("next", "next"),
)
"""The six list fields of a summary: (attribute name, JSON key), in their fixed order."""


class SessionEntryError(ValueError):
    """An object is not a valid session entry; the message names the entry and field."""


class SessionStoreError(ValueError):
    """A store refused an append or a log could not be read back."""


class SessionPathError(ValueError):
    """The active path to a leaf cannot be walked (unknown leaf, missing parent, cycle)."""


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
class MessageEntry:
    """A message in the session tree."""

    id: str
    parent_id: str | None
    timestamp: int | float
    message: Message
    type: Literal["message"] = "message"


@dataclass(frozen=True)
class MetadataEntry:
    """A key/value fact in the session tree (model changes, labels); never sent to a model."""

    id: str
    parent_id: str | None
    timestamp: int | float
    key: str
    value: JsonValue
    type: Literal["metadata"] = "metadata"


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


SessionEntry: TypeAlias = MessageEntry | MetadataEntry | CompactionEntry
ENTRY_TYPES = (MessageEntry, MetadataEntry, CompactionEntry)


# --------------------------------------------------------------------------- parsing


class _Reader:
    """Field readers that raise errors naming ``<entry id><path>``."""

    def __init__(self, entry_id: str | None) -> None:
        self.entry_id = entry_id

    def fail(self, path: str, problem: str) -> SessionEntryError:
        where = self.entry_id if self.entry_id else "entry"
        return SessionEntryError(f"{where}{path}: {problem}")

    def mapping(
        self, value: object, path: str, required: Iterable[str], optional: Iterable[str] = ()
    ) -> Mapping[str, Any]:
        if not isinstance(value, Mapping):
            raise self.fail(path, f"must be an object, got {_kind(value)}")
        required = tuple(required)
        allowed = set(required) | set(optional)
        for key in value:
            if key not in allowed:
                raise self.fail(f"{path}.{key}", "unknown field")
        for key in required:
            if key not in value:
                raise self.fail(f"{path}.{key}", "missing field")
        return value

    def string(self, value: object, path: str, *, non_empty: bool = False) -> str:
        if not isinstance(value, str):
            raise self.fail(path, f"must be a string, got {_kind(value)}")
        if non_empty and not value:
            raise self.fail(path, "must be a non-empty string")
        return value

    def number(self, value: object, path: str) -> int | float:
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise self.fail(path, f"must be a non-negative finite number, got {_kind(value)}")
        if not math.isfinite(value) or value < 0:
            raise self.fail(path, f"must be a non-negative finite number, got {value!r}")
        return value

    def string_list(self, value: object, path: str) -> list[str]:
        if not isinstance(value, list):
            raise self.fail(path, f"must be a list of strings, got {_kind(value)}")
        return [self.string(v, f"{path}[{i}]") for i, v in enumerate(value)]

    def json(self, value: object, path: str, depth: int = 0) -> JsonValue:
        """Validate plain JSON data and return an unshared copy."""
        if depth > MAX_JSON_DEPTH:
            raise self.fail(path, f"nested deeper than {MAX_JSON_DEPTH} levels")
        if value is None or isinstance(value, (str, bool, int)):
            return value
        if isinstance(value, float):
            if not math.isfinite(value):
                raise self.fail(path, f"must be a finite number, got {value!r}")
            return value
        if isinstance(value, list):
            return [self.json(item, f"{path}[{i}]", depth + 1) for i, item in enumerate(value)]
        if isinstance(value, Mapping):
            copied: dict[str, JsonValue] = {}
            for key, item in value.items():
                if not isinstance(key, str):
                    raise self.fail(path, f"object keys must be strings, got {_kind(key)}")
                copied[key] = self.json(item, f"{path}.{key}", depth + 1)
            return copied
        raise self.fail(path, f"must be JSON data, got {_kind(value)}")


def _kind(value: object) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, (int, float)):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, Mapping):
        return "object"
    if isinstance(value, list):
        return "array"
    return type(value).__name__


def _text_blocks(r: _Reader, value: object, path: str) -> list[dict[str, Any]]:
    if not isinstance(value, list):
        raise r.fail(path, f"must be a list of content blocks, got {_kind(value)}")
    blocks = []
    for i, block in enumerate(value):
        b = r.mapping(block, f"{path}[{i}]", ("type", "text"))
        if b["type"] != "text":
            raise r.fail(f"{path}[{i}].type", f"must be 'text', got {b['type']!r}")
        blocks.append({"type": "text", "text": r.string(b["text"], f"{path}[{i}].text")})
    return blocks


def _assistant_blocks(r: _Reader, value: object, path: str) -> list[dict[str, Any]]:
    if not isinstance(value, list):
        raise r.fail(path, f"must be a list of content blocks, got {_kind(value)}")
    blocks: list[dict[str, Any]] = []
    for i, block in enumerate(value):
        where = f"{path}[{i}]"
        if not isinstance(block, Mapping):
            raise r.fail(where, f"must be an object, got {_kind(block)}")
        kind = block.get("type")
        if kind == "text":
            b = r.mapping(block, where, ("type", "text"))
            blocks.append({"type": "text", "text": r.string(b["text"], f"{where}.text")})
        elif kind == "toolCall":
            b = r.mapping(block, where, ("type", "id", "name", "arguments"))
            if not isinstance(b["arguments"], Mapping):
                raise r.fail(
                    f"{where}.arguments", f"must be an object, got {_kind(b['arguments'])}"
                )
            blocks.append(
                {
                    "type": "toolCall",
                    "id": r.string(b["id"], f"{where}.id", non_empty=True),
                    "name": r.string(b["name"], f"{where}.name", non_empty=True),
                    "arguments": r.json(b["arguments"], f"{where}.arguments"),
                }
            )
        else:
            raise r.fail(f"{where}.type", f"must be 'text' or 'toolCall', got {kind!r}")
    return blocks


def _parse_message(r: _Reader, value: object, path: str) -> Message:
    if not isinstance(value, Mapping):
        raise r.fail(path, f"must be an object, got {_kind(value)}")
    role = value.get("role")
    if role == "system":
        m = r.mapping(value, path, ("role", "content"))
        return {"role": "system", "content": r.string(m["content"], f"{path}.content")}
    if role == "user":
        m = r.mapping(value, path, ("role", "content"))
        content = m["content"]
        if isinstance(content, str):
            return {"role": "user", "content": content}
        return {"role": "user", "content": _text_blocks(r, content, f"{path}.content")}
    if role == "assistant":
        m = r.mapping(value, path, ("role", "content"))
        return {
            "role": "assistant",
            "content": _assistant_blocks(r, m["content"], f"{path}.content"),
        }
    if role == "toolResult":
        m = r.mapping(value, path, ("role", "toolCallId", "toolName", "content", "isError"))
        is_error = m["isError"]
        if not isinstance(is_error, bool):
            raise r.fail(f"{path}.isError", f"must be a boolean, got {_kind(is_error)}")
        return {
            "role": "toolResult",
            "toolCallId": r.string(m["toolCallId"], f"{path}.toolCallId", non_empty=True),
            "toolName": r.string(m["toolName"], f"{path}.toolName", non_empty=True),
            "content": _text_blocks(r, m["content"], f"{path}.content"),
            "isError": is_error,
        }
    raise r.fail(
        f"{path}.role", f"must be 'system', 'user', 'assistant' or 'toolResult', got {role!r}"
    )


def parse_summary(
    value: object, *, entry_id: str | None = None, path: str = ".summary"
) -> CompactionSummary:
    """Narrow a camelCase summary object to a ``CompactionSummary`` (a fresh copy)."""
    if isinstance(value, CompactionSummary):
        value = summary_to_json(value)
    r = _Reader(entry_id)
    keys = ("goal",) + tuple(key for _, key in SUMMARY_LIST_FIELDS)
    s = r.mapping(value, path, keys)
    lists = {attr: r.string_list(s[key], f"{path}.{key}") for attr, key in SUMMARY_LIST_FIELDS}
    return CompactionSummary(goal=r.string(s["goal"], f"{path}.goal", non_empty=True), **lists)


def summary_to_json(summary: CompactionSummary) -> dict[str, Any]:
    """The camelCase JSON object of a summary (fresh lists)."""
    out: dict[str, Any] = {"goal": summary.goal}
    for attr, key in SUMMARY_LIST_FIELDS:
        items = getattr(summary, attr)
        out[key] = list(items) if isinstance(items, list) else items
    return out


_COMMON = ("type", "id", "parentId", "timestamp")


def parse_session_entry(value: object) -> SessionEntry:
    """Strictly narrow an untrusted object (or an entry) to a fresh, unshared ``SessionEntry``."""
    if isinstance(value, ENTRY_TYPES):
        value = entry_to_json(value)
    if not isinstance(value, Mapping):
        raise SessionEntryError(f"entry: must be an object, got {_kind(value)}")
    raw_id = value.get("id")
    r = _Reader(raw_id if isinstance(raw_id, str) and raw_id else None)
    entry_id = r.string(raw_id, ".id", non_empty=True) if "id" in value else None
    kind = value.get("type")
    if kind == "message":
        e = r.mapping(value, "", _COMMON + ("message",))
        return MessageEntry(
            id=r.string(e["id"], ".id", non_empty=True),
            parent_id=_parent(r, e["parentId"], nullable=True),
            timestamp=r.number(e["timestamp"], ".timestamp"),
            message=_parse_message(r, e["message"], ".message"),
        )
    if kind == "metadata":
        e = r.mapping(value, "", _COMMON + ("key", "value"))
        return MetadataEntry(
            id=r.string(e["id"], ".id", non_empty=True),
            parent_id=_parent(r, e["parentId"], nullable=True),
            timestamp=r.number(e["timestamp"], ".timestamp"),
            key=r.string(e["key"], ".key", non_empty=True),
            value=r.json(e["value"], ".value"),
        )
    if kind == "compaction":
        e = r.mapping(value, "", _COMMON + ("summary", "firstKeptEntryId", "tokensBefore"))
        parent = _parent(r, e["parentId"], nullable=False)
        assert parent is not None
        return CompactionEntry(
            id=r.string(e["id"], ".id", non_empty=True),
            parent_id=parent,
            timestamp=r.number(e["timestamp"], ".timestamp"),
            summary=parse_summary(e["summary"], entry_id=entry_id),
            first_kept_entry_id=r.string(
                e["firstKeptEntryId"], ".firstKeptEntryId", non_empty=True
            ),
            tokens_before=r.number(e["tokensBefore"], ".tokensBefore"),
        )
    if "type" not in value:
        raise r.fail(".type", "missing field")
    raise r.fail(".type", f"must be 'message', 'metadata' or 'compaction', got {kind!r}")


def _parent(r: _Reader, value: object, *, nullable: bool) -> str | None:
    if value is None and nullable:
        return None
    return r.string(value, ".parentId", non_empty=True)


def entry_to_json(entry: SessionEntry) -> dict[str, Any]:
    """The camelCase JSON object of an entry; the exact inverse of ``parse_session_entry``."""
    common: dict[str, Any] = {
        "type": entry.type,
        "id": entry.id,
        "parentId": entry.parent_id,
        "timestamp": entry.timestamp,
    }
    if isinstance(entry, MessageEntry):
        return {**common, "message": copy_json(entry.message)}
    if isinstance(entry, MetadataEntry):
        return {**common, "key": entry.key, "value": copy_json(entry.value)}
    if isinstance(entry, CompactionEntry):
        summary = entry.summary
        return {
            **common,
            "summary": (
                summary_to_json(summary)
                if isinstance(summary, CompactionSummary)
                else copy_json(summary)
            ),
            "firstKeptEntryId": entry.first_kept_entry_id,
            "tokensBefore": entry.tokens_before,
        }
    raise SessionEntryError(f"entry: not a session entry, got {type(entry).__name__}")


def copy_json(value: JsonValue) -> JsonValue:
    """A deep copy of already-valid JSON data."""
    if isinstance(value, dict):
        return {k: copy_json(v) for k, v in value.items()}
    if isinstance(value, list):
        return [copy_json(v) for v in value]
    return value


def copy_entry(entry: SessionEntry) -> SessionEntry:
    """A copy of an already-valid entry that shares no mutable object with it."""
    if isinstance(entry, MessageEntry):
        return MessageEntry(entry.id, entry.parent_id, entry.timestamp, copy_json(entry.message))
    if isinstance(entry, MetadataEntry):
        return MetadataEntry(
            entry.id, entry.parent_id, entry.timestamp, entry.key, copy_json(entry.value)
        )
    return CompactionEntry(
        entry.id,
        entry.parent_id,
        entry.timestamp,
        parse_summary(entry.summary, entry_id=entry.id),
        entry.first_kept_entry_id,
        entry.tokens_before,
    )


# --------------------------------------------------------------------------- the tree


def path_to(entries: Iterable[SessionEntry], leaf_id: str) -> list[SessionEntry]:
    """The root-to-leaf active path ending at ``leaf_id``."""
    by_id = {entry.id: entry for entry in entries}
    if leaf_id not in by_id:
        raise SessionPathError(f"{leaf_id}: unknown leaf (no entry with that id)")
    path: list[SessionEntry] = []
    seen: set[str] = set()
    current: str | None = leaf_id
    while current is not None:
        if current in seen:
            raise SessionPathError(f"{current}: cycle in parent links")
        seen.add(current)
        entry = by_id.get(current)
        if entry is None:
            child = path[-1].id
            raise SessionPathError(f"{child}.parentId: parent {current} is not in the session")
        path.append(entry)
        current = entry.parent_id
    path.reverse()
    return path


# --------------------------------------------------------------------------- stores


class InMemorySessionStore:
    """Append-only entries in memory; every append is snapshotted through the parser."""

    def __init__(self) -> None:
        self._entries: list[SessionEntry] = []
        self._ids: set[str] = set()

    def _admit(self, entry: object) -> SessionEntry:
        snapshot = parse_session_entry(entry)
        check_can_append(snapshot, self._ids)
        return snapshot

    def _record(self, snapshot: SessionEntry) -> None:
        self._entries.append(snapshot)
        self._ids.add(snapshot.id)

    def append(self, entry: SessionEntry | Mapping[str, Any]) -> SessionEntry:
        """Validate, snapshot and keep ``entry``; returns a copy of what was stored."""
        snapshot = self._admit(entry)
        self._record(snapshot)
        return copy_entry(snapshot)

    def entries(self) -> list[SessionEntry]:
        """Copies of the stored entries, in append order."""
        return [copy_entry(entry) for entry in self._entries]

    def __len__(self) -> int:
        return len(self._entries)

    def __contains__(self, entry_id: object) -> bool:
        return entry_id in self._ids

    def close(self) -> None:
        """Nothing to release; present so both stores share one interface."""

    def __enter__(self) -> InMemorySessionStore:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()


def check_can_append(entry: SessionEntry, ids: set[str] | Mapping[str, object]) -> None:
    """Reject a duplicate id or a parent that is not yet stored."""
    if entry.id in ids:
        raise SessionStoreError(f"{entry.id}: duplicate id (already in the session)")
    if entry.parent_id is not None and entry.parent_id not in ids:
        raise SessionStoreError(
            f"{entry.id}.parentId: parent {entry.parent_id} is not in the session yet"
        )


@dataclass(frozen=True)
class RecoveryWarning:
    """Something recovery set aside without failing: ``code`` and 1-based ``line``."""

    code: str
    line: int
    message: str

    def __str__(self) -> str:
        return f"line {self.line}: {self.code}: {self.message}"


@dataclass(frozen=True)
class RecoveredSession:
    """The committed entries of a JSONL log, and what was set aside."""

    entries: list[SessionEntry]
    warnings: list[RecoveryWarning]
    committed_bytes: int = 0
    """Length in bytes of the committed prefix (everything up to the last newline)."""

    @property
    def has_uncommitted_tail(self) -> bool:
        return any(w.code == "uncommitted_tail" for w in self.warnings)


def _iter_lines(data: bytes) -> Iterator[tuple[int, bytes, bool]]:
    """Yield (1-based line number, raw line, committed?) for every line of ``data``."""
    start = 0
    number = 0
    size = len(data)
    while start < size:
        number += 1
        end = data.find(b"\n", start)
        if end < 0:
            yield number, data[start:], False
            return
        yield number, data[start:end], True
        start = end + 1


def recover_jsonl(text: str | bytes) -> RecoveredSession:
    """Read a JSONL log: committed lines must be valid; an unterminated tail is set aside."""
    data = text.encode("utf-8", "surrogatepass") if isinstance(text, str) else bytes(text)
    entries: list[SessionEntry] = []
    ids: set[str] = set()
    warnings: list[RecoveryWarning] = []
    committed = 0
    for number, raw, terminated in _iter_lines(data):
        if not terminated:
            if raw.strip():
                warnings.append(
                    RecoveryWarning(
                        "uncommitted_tail",
                        number,
                        f"{len(raw)} bytes after the last newline were never committed; "
                        "they are ignored and the log refuses appends until repaired",
                    )
                )
            break
        committed += len(raw) + 1
        if not raw.strip():
            continue
        entry = _parse_line(raw, number)
        try:
            check_can_append(entry, ids)
        except SessionStoreError as error:
            raise SessionStoreError(f"line {number}: {error}") from None
        entries.append(entry)
        ids.add(entry.id)
    return RecoveredSession(entries, warnings, committed)


def _parse_line(raw: bytes, number: int) -> SessionEntry:
    try:
        line = raw.decode("utf-8")
    except UnicodeDecodeError as error:
        raise SessionStoreError(
            f"line {number}: invalid UTF-8 ({error.reason} at byte {error.start})"
        ) from None
    try:
        value = json.loads(line, parse_constant=_reject_constant)
    except (ValueError, RecursionError) as error:
        raise SessionStoreError(f"line {number}: invalid JSON ({error})") from None
    try:
        return parse_session_entry(value)
    except SessionEntryError as error:
        raise SessionStoreError(f"line {number}: {error}") from None


def _reject_constant(name: str) -> float:
    raise ValueError(f"{name} is not JSON")


def encode_entry(entry: SessionEntry) -> bytes:
    """One committed JSONL line (with its terminating newline) for a valid entry."""
    text = json.dumps(
        entry_to_json(entry), ensure_ascii=False, separators=(",", ":"), allow_nan=False
    )
    try:
        return (text + "\n").encode("utf-8")
    except UnicodeEncodeError:
        raise SessionEntryError(
            f"{entry.id}: contains a lone surrogate, which UTF-8 cannot store"
        ) from None


class JsonlSessionStore(InMemorySessionStore):
    """Entries in a JSONL file, one object per line; the newline is the commit point.

    ``append`` writes the whole line with one ``write`` on an ``O_APPEND`` descriptor before
    it returns, so a killed process never loses an acknowledged entry; with ``fsync=True`` the
    line is also flushed to the disk (survives power loss). A file whose last line has no
    newline was torn by a crash: its committed entries are readable, but appends are refused
    until the tail is repaired, so nothing is silently overwritten.
    """

    def __init__(self, path: str | os.PathLike[str], *, fsync: bool = False) -> None:
        super().__init__()
        self.path = Path(path)
        self.fsync = fsync
        self._fd: int | None = os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_APPEND, 0o644)
        try:
            with open(self._fd, "rb", closefd=False) as handle:
                recovered = recover_jsonl(handle.read())
        except BaseException:
            self.close()
            raise
        self.warnings = recovered.warnings
        for entry in recovered.entries:
            self._record(entry)

    def append(self, entry: SessionEntry | Mapping[str, Any]) -> SessionEntry:
        """Validate and snapshot ``entry``, then commit it as one line."""
        if self._fd is None:
            raise SessionStoreError(f"{self.path}: store is closed")
        if any(w.code == "uncommitted_tail" for w in self.warnings):
            tail = next(w for w in self.warnings if w.code == "uncommitted_tail")
            raise SessionStoreError(
                f"{self.path}: line {tail.line} is an uncommitted tail; repair the log before "
                "appending (committed entries are intact)"
            )
        snapshot = self._admit(entry)
        line = encode_entry(snapshot)
        written = os.write(self._fd, line)
        if written != len(line):  # pragma: no cover - regular files write whole buffers
            raise SessionStoreError(f"{self.path}: short write ({written} of {len(line)} bytes)")
        if self.fsync:
            os.fsync(self._fd)
        self._record(snapshot)
        return copy_entry(snapshot)

    def close(self) -> None:
        """Release the file; later appends are refused."""
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None

    def __enter__(self) -> JsonlSessionStore:
        return self


def parse_entries(values: Sequence[object]) -> list[SessionEntry]:
    """Parse a list of untrusted entry objects (for fixtures and notebooks)."""
    return [parse_session_entry(value) for value in values]
