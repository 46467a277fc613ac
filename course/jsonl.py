"""The JSONL session log: committed lines, crash recovery and the file-backed store."""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

from course.locale import gettext as _

from .entries import SessionEntry, copy_entry, entry_to_json, parse_session_entry
from .fields import SessionEntryError, escape_surrogates
from .logfile import (
    cut_back,
    failing_as,
    fsync_directory,
    open_locked,
    read_from,
    reason,
    release,
    set_aside,
    write_whole,
)
from .stores import InMemorySessionStore, SessionStoreError, check_can_append

_orjson_loads: Callable[[bytes], Any] | None
try:  # optional (the ``fast`` extra): a faster reader of the same JSON values
    from orjson import loads as _orjson_loads
except ImportError:  # pragma: no cover - depends on what is installed
    _orjson_loads = None


@dataclass(frozen=True)
class RecoveryWarning:
    """Something recovery set aside without failing: ``code`` and 1-based ``line``."""

    code: str
    line: int
    message: str

    def __str__(self) -> str:
        return _("line {line}: {code}: {message}").format(
            line=self.line, code=self.code, message=self.message
        )


@dataclass(frozen=True)
class RecoveredSession:
    """The committed entries of a JSONL log, and what was set aside."""

    entries: list[SessionEntry]
    warnings: list[RecoveryWarning]
    committed_bytes: int = 0
    """Length in bytes of the committed prefix (everything up to the last newline)."""

    @property
    def uncommitted_tail(self) -> RecoveryWarning | None:
        """The warning about a torn last line, if there is one."""
        return _tail_warning(self.warnings)

    @property
    def has_uncommitted_tail(self) -> bool:
        return self.uncommitted_tail is not None


def _tail_warning(warnings: list[RecoveryWarning]) -> RecoveryWarning | None:
    return next((w for w in warnings if w.code == "uncommitted_tail"), None)


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


BOM = b"\xef\xbb\xbf"
JSON_SPACE = b" \t\r"
"""The whitespace JSON allows around a value (besides the newline that ends a line)."""


def recover_jsonl(text: str | bytes) -> RecoveredSession:
    """Read a JSONL log: committed lines must be valid; an unterminated tail is set aside.

    Blank lines (nothing but spaces, tabs and CRs) and CRLF line ends are accepted, and so is
    a UTF-8 byte order mark at the very start. A malformed committed line raises
    ``SessionStoreError`` naming its 1-based line number: committed history is never skipped.
    After the last newline, anything but JSON whitespace is an uncommitted tail (other
    whitespace, such as a form feed, would make the next appended line invalid JSON).
    """
    data = text.encode("utf-8", "surrogatepass") if isinstance(text, str) else bytes(text)
    committed = 0
    if data.startswith(BOM):
        data = data[len(BOM) :]
        committed = len(BOM)
    entries: list[SessionEntry] = []
    ids: set[str] = set()
    warnings: list[RecoveryWarning] = []
    for number, raw, terminated in _iter_lines(data):
        if not terminated:
            if raw.strip(JSON_SPACE):
                warnings.append(
                    RecoveryWarning(
                        "uncommitted_tail",
                        number,
                        _(
                            "{count} bytes after the last newline were never committed; "
                            "they are ignored and the log refuses appends until repaired"
                        ).format(count=len(raw)),
                    )
                )
            break
        committed += len(raw) + 1
        if not raw.strip(JSON_SPACE):
            continue
        entry = _parse_line(raw, number)
        try:
            check_can_append(entry, ids)
        except SessionStoreError as error:
            raise SessionStoreError(
                _("line {line}: {error}").format(line=number, error=error)
            ) from None
        entries.append(entry)
        ids.add(entry.id)
    return RecoveredSession(entries, warnings, committed)


def _parse_line(raw: bytes, number: int) -> SessionEntry:
    try:
        line = raw.decode("utf-8")
    except UnicodeDecodeError as error:
        raise SessionStoreError(
            _("line {line}: invalid UTF-8 ({reason} at byte {start})").format(
                line=number, reason=error.reason, start=error.start
            )
        ) from None
    try:
        value = _loads(raw, line)
    except (ValueError, RecursionError) as error:
        raise SessionStoreError(
            _("line {line}: invalid JSON ({error})").format(line=number, error=error)
        ) from None
    try:
        return parse_session_entry(value)
    except SessionEntryError as error:
        raise SessionStoreError(
            _("line {line}: {error}").format(line=number, error=error)
        ) from None


def parse_json_line(raw: bytes) -> Any:
    """One line's JSON value, read as strictly as a log's lines: UTF-8 without a byte order
    mark, and no NaN or Infinity. Raises ``ValueError`` (``UnicodeDecodeError`` is one) or
    ``RecursionError``."""
    return _loads(raw, raw.decode("utf-8"))


def _reject_constant(name: str) -> float:
    raise ValueError(_("{name} is not JSON").format(name=name))


# ``raw.translate(_DIGITS)`` turns every digit into "0" and every other byte into " ", so a run
# of 19 digits (anywhere in the line, strings included) shows up as _LONG_NUMBER.
_DIGITS = bytes(0x30 if 0x30 <= byte <= 0x39 else 0x20 for byte in range(256))
_LONG_NUMBER = b"0" * 19


def _loads(raw: bytes, line: str) -> Any:
    """``json.loads`` of one line (``line`` is ``raw`` decoded), through orjson if installed.

    Where orjson reads a line it returns exactly what ``json`` returns (same types, the last
    of duplicate keys). It refuses what ``json`` treats differently (NaN and Infinity, lone
    surrogates, numbers beyond the float range) and reads integers of 19 or more digits as
    floats, so those lines, and every invalid one, go to ``json``, which decides and words
    the error.
    """
    if _orjson_loads is not None and _LONG_NUMBER not in raw.translate(_DIGITS):
        try:
            return _orjson_loads(raw)
        except ValueError:
            pass
    return json.loads(line, parse_constant=_reject_constant)


def encode_entry(entry: SessionEntry) -> bytes:
    """One committed JSONL line (with its terminating newline) for a valid entry.

    What a log cannot hold raises ``SessionEntryError`` naming the entry and the field: a
    string with a lone surrogate (UTF-8 has no bytes for it) or an integer with more digits
    than Python reads back by default (4300).
    """
    value = entry_to_json(entry)
    try:
        if sys.get_int_max_str_digits() != DEFAULT_INT_DIGITS:  # json.dumps would not refuse
            _refuse_long_integers(value)
        text = json.dumps(value, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
        return (text + "\n").encode("utf-8")
    except ValueError as error:  # UnicodeEncodeError included
        raise _unwritable(entry.id, value, error) from None


DEFAULT_INT_DIGITS = sys.int_info.default_max_str_digits
"""The longest integer, in digits, that a Python process converts from text by default."""


def _int_digits() -> int:
    """The longest integer that this process writes and every default process reads back."""
    limit = sys.get_int_max_str_digits()
    return limit if 0 < limit < DEFAULT_INT_DIGITS else DEFAULT_INT_DIGITS


@cache
def _ten_to_the(power: int) -> int:
    return int(10**power)


def _is_long_integer(value: object) -> bool:
    if not isinstance(value, int) or isinstance(value, bool):
        return False
    return abs(value) >= _ten_to_the(_int_digits())


def _has_lone_surrogate(value: object) -> bool:
    if not isinstance(value, str):
        return False
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        return True
    return False


def _refuse_long_integers(value: object) -> None:
    if _find(value, "", _is_long_integer) is not None:
        raise ValueError("an integer is too long")


def _find(value: object, path: str, bad: Callable[[object], bool]) -> str | None:
    """The path (``.key``, ``[i]``) of the first value or key in ``value`` that is ``bad``."""
    if bad(value):
        return path
    if isinstance(value, dict):
        for key, item in value.items():
            where = f"{path}.{key}"
            if bad(key):
                return where
            found = _find(item, where, bad)
            if found is not None:
                return found
    elif isinstance(value, list):
        for index, item in enumerate(value):
            found = _find(item, f"{path}[{index}]", bad)
            if found is not None:
                return found
    return None


def _unwritable(entry_id: str, value: object, error: ValueError) -> SessionEntryError:
    """The error for an entry ``json.dumps`` or UTF-8 refused, naming the field at fault."""
    where = _find(value, "", _is_long_integer)
    if where is not None:
        digits = _int_digits()
        problem = _(
            "an integer of more than {digits} digits, which Python cannot read back"
        ).format(digits=digits)
    elif (where := _find(value, "", _has_lone_surrogate)) is not None:
        problem = _("contains a lone surrogate, which UTF-8 cannot store")
    else:  # pragma: no cover - the parser lets nothing else through
        where, problem = "", _("cannot be written as JSON ({error})").format(error=error)
    return SessionEntryError(escape_surrogates(f"{entry_id}{where}: {problem}"))


class JsonlSessionStore(InMemorySessionStore):
    """Entries in a JSONL file, one object per line; the newline is the commit point.

    Guarantees when ``append`` returns: the whole line went to the kernel before ``append``
    returned, on an ``O_APPEND`` descriptor, so the entry survives the process being killed;
    with ``fsync=True`` it was also flushed to the disk (and a newly created file's directory
    entry with it), so it survives a power loss. An append that fails (a full disk, a file
    size limit, an I/O error) raises ``SessionStoreError`` and cuts the file back to its last
    committed line, so the entry is neither in the file nor in ``entries()``; if even that
    cut fails, the partial line is an uncommitted tail and appends are refused until
    ``repair()``. A file whose last line has no newline was torn by a crash: its committed
    entries are readable, but appends are refused until ``repair()`` sets the tail aside, so
    nothing is silently overwritten. One writer per file: the store holds an exclusive
    advisory lock while open, and a second store on the same file fails at once with
    ``SessionStoreError``.
    """

    def __init__(self, path: str | os.PathLike[str], *, fsync: bool = False) -> None:
        super().__init__()
        self.path = Path(path)
        self.fsync = fsync
        created = not self.path.exists()
        self._fd: int | None = open_locked(self.path)
        try:
            if created and fsync:
                fsync_directory(self.path)
            data = read_from(self._fd, self.path)
            recovered = _recover_log(self.path, data)
        except BaseException:
            self.close()
            raise
        self.warnings = recovered.warnings
        tail = recovered.uncommitted_tail
        # Where the next line goes, and how many lines come before it.
        self._end = recovered.committed_bytes if tail else len(data)
        self._lines = tail.line - 1 if tail else data.count(b"\n")
        for entry in recovered.entries:
            self._record(entry)

    def _open_fd(self) -> int:
        if self._fd is None:
            raise SessionStoreError(_("{path}: store is closed").format(path=self.path))
        return self._fd

    def repair(self) -> RepairResult:
        """Set an uncommitted tail aside into a backup file; appends work again afterwards."""
        fd = self._open_fd()
        tail = _tail_warning(self.warnings)
        if tail is None:
            return RepairResult(self.path, None, 0, None)
        # Appends are refused while the tail is there, so everything before _end is committed.
        result = _repair_result(self.path, set_aside(fd, self.path, self._end), tail.line)
        self.warnings = [w for w in self.warnings if w is not tail]
        return result

    def append(self, entry: SessionEntry | Mapping[str, Any]) -> SessionEntry:
        """Validate and snapshot ``entry``, then commit it as one line."""
        fd = self._open_fd()
        tail = _tail_warning(self.warnings)
        if tail is not None:
            raise SessionStoreError(
                _(
                    "{path}: line {line} is an uncommitted tail; repair the log before "
                    "appending (committed entries are intact)"
                ).format(path=self.path, line=tail.line)
            )
        snapshot = self._admit(entry)
        self._commit(fd, encode_entry(snapshot), snapshot.id)
        self._record(snapshot)
        return copy_entry(snapshot)

    def _commit(self, fd: int, line: bytes, entry_id: str) -> None:
        """Write ``line`` at the end of the log, or leave the log as it was and raise."""
        try:
            write_whole(fd, line)
            if self.fsync:
                os.fsync(fd)
        except BaseException as error:
            undone = self._cut_back(fd)
            if not isinstance(error, OSError):
                raise
            raise SessionStoreError(
                _("{path}: cannot append {entry} ({reason}); {undone}").format(
                    path=self.path, entry=entry_id, reason=reason(error), undone=undone
                )
            ) from error
        self._end += len(line)
        self._lines += 1

    def _cut_back(self, fd: int) -> str:
        """Cut off what a failed append wrote; if that fails, keep it as an uncommitted tail."""
        try:
            cut_back(fd, self._end, fsync=self.fsync)
        except OSError as error:
            line = self._lines + 1
            self.warnings.append(
                RecoveryWarning(
                    "uncommitted_tail",
                    line,
                    _(
                        "a failed append left a partial line, which could not be cut off "
                        "({reason}); the log refuses appends until repaired"
                    ).format(reason=reason(error)),
                )
            )
            return _(
                "its partial line {line} could not be cut off ({reason}), so the log "
                "refuses appends until repaired (committed entries are intact)"
            ).format(line=line, reason=reason(error))
        return _("the log is back at its last committed line and the entry was not stored")

    def close(self) -> None:
        """Release the file and its writer lock; later appends are refused."""
        if self._fd is not None:
            release(self._fd)
            self._fd = None

    def __enter__(self) -> JsonlSessionStore:
        return self


@dataclass(frozen=True)
class RepairResult:
    """What a repair set aside: the backup file and the torn bytes (``None``/0 if nothing)."""

    path: Path
    backup: Path | None
    removed_bytes: int
    line: int | None


def _repair_result(path: Path, moved: tuple[Path, int] | None, line: int | None) -> RepairResult:
    if moved is None:
        return RepairResult(path, None, 0, None)
    backup, size = moved
    return RepairResult(path, backup, size, line)


def read_jsonl(path: str | os.PathLike[str]) -> RecoveredSession:
    """``recover_jsonl`` of the file at ``path`` (no lock needed); every error names the file."""
    target = Path(path)
    with failing_as(target, _("{path}: cannot read the session log ({reason})")):
        data = target.read_bytes()
    return _recover_log(target, data)


def _recover_log(path: Path, data: bytes) -> RecoveredSession:
    """``recover_jsonl`` of the log at ``path``, its errors naming the file as well."""
    try:
        return recover_jsonl(data)
    except SessionStoreError as error:
        raise SessionStoreError(f"{path}: {error}") from None


def repair_jsonl(path: str | os.PathLike[str]) -> RepairResult:
    """Move a torn tail of the log at ``path`` into a backup file; committed lines stay.

    The backup is the first free ``<log>.torn-N``; an existing file or symlink of that name is
    never written to. A malformed committed line is not a crash artefact and is never
    deleted: it raises ``SessionStoreError`` naming the line, for a person to look at.
    """
    target = Path(path)
    if not target.exists():
        raise SessionStoreError(_("{path}: no such session log").format(path=target))
    fd = open_locked(target)
    try:
        recovered = _recover_log(target, read_from(fd, target))
        tail = recovered.uncommitted_tail
        if tail is None:
            return RepairResult(target, None, 0, None)
        moved = set_aside(fd, target, recovered.committed_bytes)
        return _repair_result(target, moved, tail.line)
    finally:
        release(fd)
