"""Pi session files read (plain or gzipped; damaged lines split or skipped) and migrated to v3."""

from __future__ import annotations

import copy
import gzip
import io
import json
import os
import re
import zlib
from collections.abc import Iterator
from dataclasses import dataclass, replace
from itertools import chain
from typing import Any

from course.fields import KIND_NAMES, kind_name, kind_of
from course.jsonl import BOM, _reject_constant
from course.locale import N_, ngettext, tidy
from course.locale import gettext as _

CURRENT_VERSION = 3
"""The newest Pi session format this module reads; ``migrate`` brings every file to it."""

GZIP_MAGIC = b"\x1f\x8b"


class PiFormatError(ValueError):
    """A Pi session file cannot be read; the message names the line and the field."""

    def __init__(self, problem: str, *, line: int | None = None, field: str = "") -> None:
        where = [_("line {line}").format(line=line)] if line is not None else []
        super().__init__(_(": ").join([*where, *([field] if field else []), problem]))


@dataclass(frozen=True)
class PiLine:
    """One JSON object of a Pi session file and the 1-based line it was read from."""

    line: int
    data: dict[str, Any]
    part: int = 1
    """Which of the line's JSON objects it is (2 and on only on a damaged line)."""

    @property
    def type(self) -> str:
        kind = self.data.get("type")
        return kind if isinstance(kind, str) else ""


@dataclass(frozen=True)
class LineDamage:
    """A line that is not one JSON object: how many objects were ``read``, what was ``skipped``."""

    line: int
    read: int
    problem: str
    skipped: str = ""


@dataclass(frozen=True)
class PiSession:
    """A Pi session: its header and entries in file order, at format ``version``."""

    header: PiLine
    entries: tuple[PiLine, ...]
    source_version: int
    """The version the file was written in (1 when the header has no ``version``)."""
    damage: tuple[LineDamage, ...] = ()
    """Every line that was not one JSON object, in line order: what was read of it and what not."""
    missing_parents: tuple[tuple[int, str, str], ...] = ()
    """(line, id, parent) of each entry whose parent the file lacks (Pi's ``/fork`` leaves
    label entries out); ``migrate`` makes each a root, as Pi's context starts there."""

    @property
    def version(self) -> int:
        version = self.header.data.get("version", 1)
        return version if isinstance(version, int) else 1


def read_pi_session(path: str | os.PathLike[str]) -> PiSession:
    """Read a Pi session file (``.jsonl`` or gzipped) as written; ``migrate`` upgrades it."""
    try:
        with open(path, "rb") as handle:
            return _read(handle)
    except OSError as error:
        raise PiFormatError(
            _("cannot read ({reason})").format(reason=error.strerror or error)
        ) from None


def parse_pi_session(data: bytes) -> PiSession:
    """Parse the bytes of a Pi session file (gzip is recognised by its magic number)."""
    return _read(io.BufferedReader(io.BytesIO(data)))


def _read(stream: io.BufferedReader) -> PiSession:
    records: list[PiLine] = []
    damage: list[LineDamage] = []
    for number, raw in _lines(_text_chunks(stream)):
        read, damaged = read_line(raw, number)
        records.extend(read)
        if damaged is not None:
            damage.append(damaged)
    if not records:
        raise PiFormatError(
            _("no line of it can be read: a Pi session starts with a header line")
            if damage
            else _("empty file: a Pi session starts with a header line")
        )
    header, *entries = records
    version = _check_header(header)
    for record in entries:
        _check_entry(record)
    return PiSession(header, tuple(entries), version, tuple(damage))


MAX_SESSION_BYTES = 128 * 1024 * 1024
"""The most text a Pi session may hold, after decompression (the shipped ones hold 1-2 MiB)."""
MAX_LINE_BYTES = 16 * 1024 * 1024
"""The longest line read (the shipped sessions' longest is 114 KiB; an image is one line)."""
CHUNK_BYTES = 1024 * 1024


def _text_chunks(stream: io.BufferedReader) -> Iterator[bytes]:
    """The file's text in chunks: decompressed if it is gzip, without a byte order mark."""
    source: io.BufferedIOBase = stream
    if stream.peek(len(GZIP_MAGIC)).startswith(GZIP_MAGIC):
        source = gzip.GzipFile(fileobj=stream, mode="rb")
    total = 0
    while True:
        try:
            chunk = source.read(CHUNK_BYTES)
        except (OSError, EOFError, zlib.error) as error:
            if source is stream:
                raise
            raise PiFormatError(
                _("not a readable gzip file ({reason})").format(reason=error)
            ) from None
        if not total and chunk.startswith(BOM):
            chunk = chunk[len(BOM) :]
        if not chunk:
            return
        total += len(chunk)
        if total > MAX_SESSION_BYTES:
            raise PiFormatError(
                _(
                    "holds more than {limit} of text (after decompression); this importer reads "
                    "Pi sessions up to that size"
                ).format(limit=f"{MAX_SESSION_BYTES >> 20} MiB")
            )
        yield chunk


_NOT_BLANK = re.compile(rb"[^ \t\r\n\f\v]")


def _lines(chunks: Iterator[bytes]) -> Iterator[tuple[int, bytes]]:
    """The non-blank lines with their 1-based numbers; blank runs are skipped at C speed."""
    number, buffer = 1, b""
    for chunk in chain(chunks, [b"\n"]):  # the newline ends a last line that has none
        buffer += chunk
        position = 0
        while (found := _NOT_BLANK.search(buffer, position)) is not None:
            start = buffer.rfind(b"\n", position, found.start()) + 1 or position
            number += buffer.count(b"\n", position, start)
            end = buffer.find(b"\n", found.start())
            if (len(buffer) if end == -1 else end) - start > MAX_LINE_BYTES:
                raise PiFormatError(
                    _("longer than {limit}; this importer reads lines up to that length").format(
                        limit=f"{MAX_LINE_BYTES >> 20} MiB"
                    ),
                    line=number,
                )
            if end == -1:  # the line goes on in the next chunk
                buffer = buffer[start:]
                break
            yield number, buffer[start:end]
            number += 1
            position = end + 1
        else:
            number += buffer.count(b"\n", position)
            buffer = b""


_DECODER = json.JSONDecoder(parse_constant=_reject_constant)
_NUMBER_WORDS = (
    N_("no"),
    N_("one"),
    N_("two"),
    N_("three"),
    N_("four"),
    N_("five"),
    N_("six"),
    N_("seven"),
    N_("eight"),
    N_("nine"),
)
"""Small counts in words, as a sentence says them; larger ones are written in digits."""


def read_line(raw: bytes, number: int) -> tuple[list[PiLine], LineDamage | None]:
    """The JSON objects on one line, and what is wrong with the line if it is not one object."""
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as error:
        problem = _("is not UTF-8 text ({reason} at byte {start})").format(
            reason=error.reason, start=error.start
        )
        return [], LineDamage(number, 0, problem, _("the whole line"))
    values: list[Any] = []
    position = _skip_blanks(text, 0)
    unread = reason = ""
    while position < len(text):
        try:
            value, end = _DECODER.raw_decode(text, position)
        except (ValueError, RecursionError) as error:
            reason = error.msg if isinstance(error, json.JSONDecodeError) else str(error)
            unread = _("{count} characters from column {column} ({reason})").format(
                count=f"{len(text) - position:,}", column=position + 1, reason=reason
            )
            break
        values.append(value)
        position = _skip_blanks(text, end)
    objects = [v for v in values if isinstance(v, dict)]
    records = [_checked(raw, number, value, part) for part, value in enumerate(objects, 1)]
    if len(objects) == len(values) == 1 and not unread:
        return records, None
    skipped = [
        _("a JSON {kind}, not an object").format(kind=json_kind(v))
        for v in values
        if not isinstance(v, dict)
    ]
    if unread:
        skipped.append(_("{unread} that are not JSON").format(unread=unread))
    count = len(objects)
    amount = _(_NUMBER_WORDS[count]) if count < len(_NUMBER_WORDS) else f"{count:,}"
    if not skipped:
        problem = ngettext(
            "holds {amount} JSON object with no newline between them",
            "holds {amount} JSON objects with no newline between them",
            count,
        ).format(amount=amount)
        problem = tidy(problem)  # a number word in Chinese takes no spaces
    elif not values:
        problem = _("is not valid JSON ({reason})").format(reason=reason)
        skipped = [_("the whole line")]
    elif not objects:
        problem = _("holds no JSON object that can be read")
    else:
        problem = ngettext(
            "holds {amount} JSON object and what cannot be read",
            "holds {amount} JSON objects and what cannot be read",
            count,
        ).format(amount=amount)
    return records, LineDamage(number, count, problem, _("; ").join(skipped))


_SURROGATE_ESCAPE = re.compile(rb"\\u[dD][89a-fA-F]")


def _skip_blanks(text: str, position: int) -> int:
    while position < len(text) and text[position] in " \t\r\n":
        position += 1
    return position


def _checked(raw: bytes, number: int, value: dict[str, Any], part: int) -> PiLine:
    if _SURROGATE_ESCAPE.search(raw):  # the bytes were UTF-8: only an escape can hold one
        try:
            json.dumps(value, ensure_ascii=False).encode("utf-8")
        except UnicodeEncodeError:
            raise PiFormatError(
                _(
                    "holds a lone surrogate (a \\ud800-\\udfff escape), which a chapter log in "
                    "UTF-8 cannot store"
                ),
                line=number,
            ) from None
    return PiLine(number, value, part)


def _check_header(header: PiLine) -> int:
    """The header's checks; its format version (1 when it names none)."""
    if header.data.get("type") != "session":
        raise PiFormatError(
            _(
                "the first line must be the session header (type 'session'), got type {kind!r}"
            ).format(kind=header.data.get("type")),
            line=header.line,
            field="type",
        )
    header_id = header.data.get("id")
    if not isinstance(header_id, str) or not header_id:
        raise PiFormatError(_("must be a non-empty string"), line=header.line, field="id")
    version = header.data.get("version", 1)
    if isinstance(version, bool) or not isinstance(version, int):
        problem = _("must be an integer, got {kind}").format(kind=json_kind(version))
    elif not 1 <= version <= CURRENT_VERSION:
        problem = _(
            "unsupported session version {version} (this importer reads 1 to {current})"
        ).format(version=version, current=CURRENT_VERSION)
    else:
        return version
    raise PiFormatError(problem, line=header.line, field="version")


def _check_entry(record: PiLine) -> None:
    kind = record.data.get("type")
    if not isinstance(kind, str):
        problem = _("must be a string, got {kind}").format(kind=json_kind(kind))
    elif kind == "session":
        problem = _("a second session header; a Pi session file has one, on its first line")
    else:
        return
    raise PiFormatError(problem, line=record.line, field="type")


def json_kind(value: object) -> str:
    """The JSON name of a value's type, as the current edition says it in a message."""
    if value is None:
        return _("null")
    return kind_name(value) if kind_of(value) in KIND_NAMES else _("other")


def v1_entry_id(line: int, part: int = 1) -> str:
    """The id a v1 entry gets on migration: ``L12``, or ``L440-2`` for a line's second object."""
    return f"L{line}" if part == 1 else f"L{line}-{part}"


def migrate(session: PiSession) -> PiSession:
    """Bring a session to the current version as Pi does on load (a new object; idempotent)."""
    if session.version < 2:
        session = _v1_to_v2(session)
    if session.version < 3:
        session = _v2_to_v3(session)
    session = reattach_orphans(session)
    check_tree(session)
    return session


def reattach_orphans(session: PiSession) -> PiSession:
    """Entries whose parent the file lacks hang below the header, where Pi's path starts; each
    is listed in ``damage`` if lines were skipped, else in ``missing_parents`` (a ``/fork``)."""
    held = {session.header.data["id"], None} | {r.data.get("id") for r in session.entries}
    skipped = any(damage.skipped for damage in session.damage)
    if not skipped and all(r.data.get("parentId") in held for r in session.entries):
        return session
    seen = {session.header.data["id"]}
    entries: list[PiLine] = []
    notes: list[LineDamage] = []
    missing: list[tuple[int, str, str]] = []
    for record in session.entries:
        parent = record.data.get("parentId")
        if isinstance(parent, str) and parent not in (seen if skipped else held):
            record = replace(record, data={**record.data, "parentId": None})
            if skipped:
                problem = _(
                    "names parent {parent!r}, which no line that can be read holds; it now hangs "
                    "below the header"
                ).format(parent=parent)
                notes.append(LineDamage(record.line, 1, problem))
            else:
                missing.append((record.line, str(record.data.get("id")), parent))
        seen.add(str(record.data.get("id")))
        entries.append(record)
    damage = tuple(sorted((*session.damage, *notes), key=lambda item: item.line))
    return replace(
        session,
        entries=tuple(entries),
        damage=damage,
        missing_parents=(*session.missing_parents, *missing),
    )


def _v1_to_v2(session: PiSession) -> PiSession:
    """Give every entry an id (``v1_entry_id``, not Pi's random one, so imports repeat) and its
    predecessor as parent; a compaction's ``firstKeptEntryIndex`` (the header is index 0)
    becomes ``firstKeptEntryId``, or is removed when it points at the header or past the end,
    exactly as Pi does."""
    records = (session.header, *session.entries)
    entries: list[PiLine] = []
    previous: str | None = None
    for record in session.entries:
        data = copy.deepcopy(record.data)
        data["id"] = v1_entry_id(record.line, record.part)
        data["parentId"] = previous
        previous = data["id"]
        if data.get("type") == "compaction" and "firstKeptEntryIndex" in data:
            index = data.pop("firstKeptEntryIndex")
            if isinstance(index, int) and not isinstance(index, bool) and 0 < index < len(records):
                kept = records[index]
                data["firstKeptEntryId"] = v1_entry_id(kept.line, kept.part)
        entries.append(replace(record, data=data))
    return replace(session, header=_with_version(session.header, 2), entries=tuple(entries))


def _v2_to_v3(session: PiSession) -> PiSession:
    """Rename the message role ``hookMessage`` to ``custom``."""
    entries: list[PiLine] = []
    for record in session.entries:
        message = record.data.get("message") if record.type == "message" else None
        if isinstance(message, dict) and message.get("role") == "hookMessage":
            data = copy.deepcopy(record.data)
            data["message"]["role"] = "custom"
            record = replace(record, data=data)
        entries.append(record)
    return replace(session, header=_with_version(session.header, 3), entries=tuple(entries))


def _with_version(header: PiLine, version: int) -> PiLine:
    return replace(header, data={**header.data, "version": version})


def check_tree(session: PiSession) -> None:
    """Every entry has a unique id, and its parent (if any) is an entry on an earlier line."""
    seen = {session.header.data["id"]}
    for record in session.entries:
        entry_id = record.data.get("id")
        parent = record.data.get("parentId")
        if not isinstance(entry_id, str) or not entry_id:
            field = "id"
            problem = _("must be a non-empty string, got {kind}").format(kind=json_kind(entry_id))
        elif entry_id in seen:
            field = "id"
            problem = _("id {id!r} is already used by an earlier line or the header").format(
                id=entry_id
            )
        elif parent is not None and (not isinstance(parent, str) or parent not in seen):
            field = "parentId"
            problem = _("parent {parent!r} is not an entry on an earlier line").format(
                parent=parent
            )
        else:
            seen.add(entry_id)
            continue
        raise PiFormatError(problem, line=record.line, field=field)
