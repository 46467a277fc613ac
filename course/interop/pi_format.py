"""Pi session files: reading them (plain or gzipped), their versions and Pi's v1→v2→v3 migration."""

from __future__ import annotations

import copy
import gzip
import json
import os
import re
import zlib
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

CURRENT_VERSION = 3
"""The newest Pi session format this module reads; ``migrate`` brings every file to it."""

GZIP_MAGIC = b"\x1f\x8b"
BOM = b"\xef\xbb\xbf"


class PiFormatError(ValueError):
    """A Pi session file cannot be read; the message names the line and the field."""

    def __init__(self, problem: str, *, line: int | None = None, field: str = "") -> None:
        self.line = line
        self.field = field
        self.problem = problem
        where = [f"line {line}"] if line is not None else []
        super().__init__(": ".join([*where, *([field] if field else []), problem]))


@dataclass(frozen=True)
class PiLine:
    """One JSON object of a Pi session file and the 1-based line it was read from."""

    line: int
    data: dict[str, Any]

    @property
    def type(self) -> str:
        kind = self.data.get("type")
        return kind if isinstance(kind, str) else ""


@dataclass(frozen=True)
class PiSession:
    """A Pi session: its header and entries in file order, at format ``version``."""

    header: PiLine
    entries: tuple[PiLine, ...]
    source_version: int
    """The version the file was written in (1 when the header has no ``version``)."""

    @property
    def version(self) -> int:
        version = self.header.data.get("version", 1)
        return version if isinstance(version, int) else 1


# --------------------------------------------------------------------------- reading


def read_pi_session(path: str | os.PathLike[str]) -> PiSession:
    """Read a Pi session file (``.jsonl`` or gzipped) as written; ``migrate`` upgrades it."""
    target = Path(path)
    try:
        data = target.read_bytes()
    except OSError as error:
        raise PiFormatError(f"cannot read ({error.strerror or error})") from None
    return parse_pi_session(data)


def parse_pi_session(data: bytes) -> PiSession:
    """Parse the bytes of a Pi session file (gzip is recognised by its magic number)."""
    if data.startswith(GZIP_MAGIC):
        try:
            data = gzip.decompress(data)
        except (OSError, EOFError, zlib.error) as error:
            raise PiFormatError(f"not a readable gzip file ({error})") from None
    if data.startswith(BOM):
        data = data[len(BOM) :]
    records = [_parse_line(raw, number) for number, raw in _lines(data)]
    if not records:
        raise PiFormatError("empty file: a Pi session starts with a header line")
    header, *entries = records
    _check_header(header)
    for record in entries:
        _check_entry(record)
    version = _version(header)
    return PiSession(header, tuple(entries), version)


def _lines(data: bytes) -> list[tuple[int, bytes]]:
    """The non-blank lines of ``data`` with their 1-based numbers."""
    return [(number, raw) for number, raw in enumerate(data.split(b"\n"), start=1) if raw.strip()]


def _reject_constant(name: str) -> float:
    raise ValueError(f"{name} is not JSON")


def _parse_line(raw: bytes, number: int) -> PiLine:
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as error:
        raise PiFormatError(
            f"invalid UTF-8 ({error.reason} at byte {error.start})", line=number
        ) from None
    try:
        value = json.loads(text, parse_constant=_reject_constant)
    except (ValueError, RecursionError) as error:
        raise PiFormatError(f"invalid JSON ({error})", line=number) from None
    if not isinstance(value, dict):
        raise PiFormatError(f"must be a JSON object, got {json_kind(value)}", line=number)
    if _SURROGATE_ESCAPE.search(raw):  # the bytes were UTF-8: only an escape can hold one
        try:
            json.dumps(value, ensure_ascii=False).encode("utf-8")
        except UnicodeEncodeError:
            raise PiFormatError(
                "holds a lone surrogate (a \\ud800-\\udfff escape), which a chapter log in "
                "UTF-8 cannot store",
                line=number,
            ) from None
    return PiLine(number, value)


_SURROGATE_ESCAPE = re.compile(rb"\\u[dD][89a-fA-F]")


def _check_header(header: PiLine) -> None:
    if header.data.get("type") != "session":
        raise PiFormatError(
            f"the first line must be the session header (type 'session'), got type "
            f"{header.data.get('type')!r}",
            line=header.line,
            field="type",
        )
    if not _is_name(header.data.get("id")):
        raise PiFormatError("must be a non-empty string", line=header.line, field="id")
    _version(header)


def _version(header: PiLine) -> int:
    if "version" not in header.data:
        return 1
    version = header.data["version"]
    if isinstance(version, bool) or not isinstance(version, int):
        raise PiFormatError(
            f"must be an integer, got {json_kind(version)}", line=header.line, field="version"
        )
    if not 1 <= version <= CURRENT_VERSION:
        raise PiFormatError(
            f"unsupported session version {version} (this importer reads 1 to {CURRENT_VERSION})",
            line=header.line,
            field="version",
        )
    return version


def _check_entry(record: PiLine) -> None:
    kind = record.data.get("type")
    if not isinstance(kind, str):
        raise PiFormatError(
            f"must be a string, got {json_kind(kind)}", line=record.line, field="type"
        )
    if kind == "session":
        raise PiFormatError(
            "a second session header; a Pi session file has one, on its first line",
            line=record.line,
            field="type",
        )


def _is_name(value: object) -> bool:
    return isinstance(value, str) and value != ""


_JSON_KINDS = {dict: "object", list: "array", str: "string", bool: "boolean", int: "number"}


def json_kind(value: object) -> str:
    """The JSON name of a value's type, for error messages."""
    if value is None:
        return "null"
    return _JSON_KINDS.get(type(value), "number" if isinstance(value, float) else "other")


# --------------------------------------------------------------------------- migration


def v1_entry_id(line: int) -> str:
    """The id a v1 entry gets on migration: ``L`` and its line number, so it is easy to find."""
    return f"L{line}"


def migrate(session: PiSession) -> PiSession:
    """Bring a session to the current version as Pi does on load (a new object; idempotent)."""
    if session.version < 2:
        session = migrate_v1_to_v2(session)
    if session.version < 3:
        session = migrate_v2_to_v3(session)
    check_tree(session)
    return session


def migrate_v1_to_v2(session: PiSession) -> PiSession:
    """Give every entry an id and its predecessor as parent; compactions get a kept id.

    Pi generates random ids here; the kit derives them from the line number instead
    (``v1_entry_id``), so the same file always imports to the same entries. A compaction's
    ``firstKeptEntryIndex`` counts the session's lines with the header as index 0; it becomes
    ``firstKeptEntryId``, or is removed without a replacement when it points at the header or
    past the end, exactly as Pi does.
    """
    if session.version >= 2:
        return session
    records = (session.header, *session.entries)
    entries: list[PiLine] = []
    previous: str | None = None
    for record in session.entries:
        data = copy.deepcopy(record.data)
        data["id"] = v1_entry_id(record.line)
        data["parentId"] = previous
        previous = data["id"]
        if data.get("type") == "compaction" and "firstKeptEntryIndex" in data:
            index = data.pop("firstKeptEntryIndex")
            if isinstance(index, int) and not isinstance(index, bool) and 0 < index < len(records):
                data["firstKeptEntryId"] = v1_entry_id(records[index].line)
        entries.append(PiLine(record.line, data))
    return replace(session, header=_with_version(session.header, 2), entries=tuple(entries))


def migrate_v2_to_v3(session: PiSession) -> PiSession:
    """Rename the message role ``hookMessage`` to ``custom``."""
    if session.version >= 3:
        return session
    entries: list[PiLine] = []
    for record in session.entries:
        message = record.data.get("message")
        if (
            record.type == "message"
            and isinstance(message, dict)
            and message.get("role") == "hookMessage"
        ):
            data = copy.deepcopy(record.data)
            data["message"]["role"] = "custom"
            record = PiLine(record.line, data)
        entries.append(record)
    return replace(session, header=_with_version(session.header, 3), entries=tuple(entries))


def _with_version(header: PiLine, version: int) -> PiLine:
    return PiLine(header.line, {**header.data, "version": version})


def check_tree(session: PiSession) -> None:
    """Every entry has a unique id, and its parent (if any) is an entry on an earlier line."""
    seen = {session.header.data["id"]}
    for record in session.entries:
        entry_id = record.data.get("id")
        if not _is_name(entry_id):
            raise PiFormatError(
                f"must be a non-empty string, got {json_kind(entry_id)}",
                line=record.line,
                field="id",
            )
        assert isinstance(entry_id, str)
        if entry_id in seen:
            raise PiFormatError(
                f"id {entry_id!r} is already used by an earlier line or the header",
                line=record.line,
                field="id",
            )
        parent = record.data.get("parentId")
        if parent is not None and (not isinstance(parent, str) or parent not in seen):
            raise PiFormatError(
                f"parent {parent!r} is not an entry on an earlier line",
                line=record.line,
                field="parentId",
            )
        seen.add(entry_id)
