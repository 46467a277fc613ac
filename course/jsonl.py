"""The JSONL session log: committed lines, crash recovery and the file-backed store."""

from __future__ import annotations

import fcntl
import json
import os
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .entries import SessionEntry, copy_entry, entry_to_json, parse_session_entry
from .fields import SessionEntryError
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
        return f"line {self.line}: {self.code}: {self.message}"


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


def recover_jsonl(text: str | bytes) -> RecoveredSession:
    """Read a JSONL log: committed lines must be valid; an unterminated tail is set aside.

    Blank lines and CRLF line ends are accepted, and so is a UTF-8 byte order mark at the
    very start. A malformed committed line raises ``SessionStoreError`` naming its 1-based
    line number: committed history is never skipped.
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
        value = _loads(raw, line)
    except (ValueError, RecursionError) as error:
        raise SessionStoreError(f"line {number}: invalid JSON ({error})") from None
    try:
        return parse_session_entry(value)
    except SessionEntryError as error:
        raise SessionStoreError(f"line {number}: {error}") from None


def _reject_constant(name: str) -> float:
    raise ValueError(f"{name} is not JSON")


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

    Guarantees when ``append`` returns: the whole line went to the kernel in one ``write`` on
    an ``O_APPEND`` descriptor, so the entry survives the process being killed; with
    ``fsync=True`` it was also flushed to the disk (and a newly created file's directory
    entry with it), so it survives a power loss. A file whose last line has no newline was
    torn by a crash: its committed entries are readable, but appends are refused until
    ``repair()`` sets the tail aside, so nothing is silently overwritten. One writer per
    file: the store holds an exclusive advisory lock while open, and a second store on the
    same file fails at once with ``SessionStoreError``.
    """

    def __init__(self, path: str | os.PathLike[str], *, fsync: bool = False) -> None:
        super().__init__()
        self.path = Path(path)
        self.fsync = fsync
        created = not self.path.exists()
        self._fd: int | None = _open_locked(self.path)
        try:
            if created and fsync:
                _fsync_directory(self.path)
            recovered = recover_jsonl(_read_all(self._fd))
        except BaseException:
            self.close()
            raise
        self.warnings = recovered.warnings
        self._committed_at_open = recovered.committed_bytes
        for entry in recovered.entries:
            self._record(entry)

    def repair(self) -> RepairResult:
        """Set an uncommitted tail aside into a backup file; appends work again afterwards."""
        if self._fd is None:
            raise SessionStoreError(f"{self.path}: store is closed")
        tail = _tail_warning(self.warnings)
        if tail is None:
            return RepairResult(self.path, None, 0, None)
        # Appends are refused while the tail is there, so the prefix read at open is current.
        result = _set_aside_tail(self._fd, self.path, self._committed_at_open, tail.line)
        self.warnings = [w for w in self.warnings if w is not tail]
        return result

    def append(self, entry: SessionEntry | Mapping[str, Any]) -> SessionEntry:
        """Validate and snapshot ``entry``, then commit it as one line."""
        if self._fd is None:
            raise SessionStoreError(f"{self.path}: store is closed")
        tail = _tail_warning(self.warnings)
        if tail is not None:
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
        """Release the file and its writer lock; later appends are refused."""
        if self._fd is not None:
            os.close(self._fd)  # closing the descriptor also drops the flock
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


def repair_jsonl(path: str | os.PathLike[str]) -> RepairResult:
    """Move a torn tail of the log at ``path`` into a backup file; committed lines stay.

    A malformed committed line is not a crash artefact and is never deleted: it raises
    ``SessionStoreError`` naming the line, for a person to look at.
    """
    target = Path(path)
    if not target.exists():
        raise SessionStoreError(f"{target}: no such session log")
    fd = _open_locked(target)
    try:
        recovered = recover_jsonl(_read_all(fd))
        tail = recovered.uncommitted_tail
        return _set_aside_tail(fd, target, recovered.committed_bytes, tail.line if tail else None)
    finally:
        os.close(fd)


def _open_locked(path: Path) -> int:
    fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_APPEND, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        os.close(fd)
        raise SessionStoreError(
            f"{path}: another writer has this session log open (one writer per log)"
        ) from None
    return fd


def _read_all(fd: int) -> bytes:
    with open(fd, "rb", closefd=False) as handle:
        handle.seek(0)
        return handle.read()


def _fsync_directory(path: Path) -> None:
    directory = os.open(path.parent, os.O_RDONLY)
    try:
        os.fsync(directory)
    finally:
        os.close(directory)


def _set_aside_tail(fd: int, path: Path, committed: int, line: int | None) -> RepairResult:
    """Copy the bytes after ``committed`` into a new backup file, then cut them off."""
    with open(fd, "rb", closefd=False) as handle:
        handle.seek(committed)
        torn = handle.read()
    if not torn:
        return RepairResult(path, None, 0, None)
    backup = _free_backup_name(path)
    with open(backup, "xb") as handle:
        handle.write(torn)
        handle.flush()
        os.fsync(handle.fileno())
    os.ftruncate(fd, committed)
    os.fsync(fd)
    _fsync_directory(path)
    return RepairResult(path, backup, len(torn), line)


def _free_backup_name(path: Path) -> Path:
    number = 1
    while (candidate := path.with_name(f"{path.name}.torn-{number}")).exists():
        number += 1
    return candidate
