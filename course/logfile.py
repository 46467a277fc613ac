"""The JSONL log's file operations: the locked descriptor, whole writes and torn-tail backups.

Every ``OSError`` leaves this module as a ``SessionStoreError`` naming the file and what was
being done, except from ``write_whole``, whose caller decides how to undo a failed append.
"""

from __future__ import annotations

import errno
import os
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from pathlib import Path

from course.locale import gettext as _

from .stores import SessionStoreError

try:
    import fcntl
except ImportError:  # pragma: no cover - every POSIX CPython has it; Pyodide may not
    fcntl = None  # type: ignore[assignment]

NO_FLOCK = frozenset({errno.ENOSYS, errno.EOPNOTSUPP, errno.ENOTSUP})
"""``flock`` errors that mean "no such lock here" (Emscripten's file systems), not "taken"."""
_HELD: set[str] = set()
"""Logs this process holds open for writing where ``flock`` is absent (the browser edition).

There a kernel is the only process, so a set of resolved paths is the whole one-writer rule."""
_HELD_BY_FD: dict[int, str] = {}

BACKUP_NAMES = 10_000
"""How many ``<log>.torn-N`` names a repair tries before it gives up."""


def reason(error: OSError) -> str:
    """The operating system's words for ``error`` (``No space left on device``)."""
    return error.strerror or str(error)


@contextmanager
def failing_as(path: Path, message: str, **values: object) -> Iterator[None]:
    """Raise an ``OSError`` from the block as ``SessionStoreError``: ``message`` (translated)
    with ``{path}``, ``{reason}`` and ``values`` filled in (``path: cannot read … (reason)``)."""
    try:
        yield
    except OSError as error:
        text = message.format(path=path, reason=reason(error), **values)
        raise SessionStoreError(text) from error


def open_locked(path: Path) -> int:
    """Open (or create) the log for appending and take its one-writer lock.

    Where ``flock`` is absent (Pyodide has no ``fcntl.flock``, or it fails with ``ENOSYS``) the
    lock is held in this process instead, which is the only process there: a second open of the
    same log is refused the same way until ``release`` closes the first.
    """
    with failing_as(path, _("{path}: cannot open the session log for appending ({reason})")):
        fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_APPEND, 0o644)
    try:
        if not _flock(fd):
            _hold_in_process(fd, path)
    except BlockingIOError:
        os.close(fd)
        raise SessionStoreError(
            _("{path}: another writer has this session log open (one writer per log)").format(
                path=path
            )
        ) from None
    except OSError as error:
        os.close(fd)
        raise SessionStoreError(
            _("{path}: cannot lock the session log ({reason})").format(
                path=path, reason=reason(error)
            )
        ) from error
    return fd


def _flock(fd: int) -> bool:
    """Take the exclusive lock on ``fd``; ``False`` when this platform has no ``flock``."""
    lock = getattr(fcntl, "flock", None)
    if lock is None:
        return False
    try:
        lock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        raise
    except OSError as error:
        if error.errno in NO_FLOCK:
            return False
        raise
    return True


def _hold_in_process(fd: int, path: Path) -> None:
    key = os.path.realpath(path)
    if key in _HELD:
        raise BlockingIOError(errno.EWOULDBLOCK, "held by this process")
    _HELD.add(key)
    _HELD_BY_FD[fd] = key


def release(fd: int) -> None:
    """Close a descriptor from ``open_locked``, dropping its lock (``flock`` or in-process)."""
    _HELD.discard(_HELD_BY_FD.pop(fd, ""))
    os.close(fd)


def read_from(fd: int, path: Path, offset: int = 0) -> bytes:
    """The bytes of the open log from ``offset`` (by default, all of them) to its end."""
    cannot_read = _("{path}: cannot read the session log ({reason})")
    with failing_as(path, cannot_read), open(fd, "rb", closefd=False) as handle:
        handle.seek(offset)
        return handle.read()


def fsync_directory(path: Path) -> None:
    """Flush the directory entry of ``path`` to the disk."""
    with failing_as(
        path.parent, _("{path}: cannot flush the directory of the session log ({reason})")
    ):
        directory = os.open(path.parent, os.O_RDONLY)
        try:
            os.fsync(directory)
        finally:
            os.close(directory)


def write_whole(fd: int, data: bytes) -> None:
    """Write all of ``data``; a short write is continued, so a full disk raises its ``OSError``."""
    done = os.write(fd, data)
    while done < len(data):
        written = os.write(fd, memoryview(data)[done:])
        if written <= 0:  # pragma: no cover - a regular file either writes or fails
            raise OSError(0, "the write made no progress")
        done += written


def cut_back(fd: int, size: int, *, fsync: bool) -> None:
    """Truncate the open log to ``size`` bytes (and flush that, with ``fsync``)."""
    os.ftruncate(fd, size)
    if fsync:
        os.fsync(fd)


def set_aside(fd: int, path: Path, committed: int) -> tuple[Path, int] | None:
    """Copy the log's bytes after ``committed`` into a new backup, then cut them off.

    Returns the backup and how many bytes moved, or ``None`` when there was nothing after
    ``committed``. The backup is written and flushed before the log is touched, so a failure
    at any step loses nothing.
    """
    torn = read_from(fd, path, committed)
    if not torn:
        return None
    backup = save_backup(path, torn)
    cannot_cut = _(
        "{path}: cannot cut the torn tail off the session log (it is saved in {backup}) ({reason})"
    )
    with failing_as(path, cannot_cut, backup=backup):
        cut_back(fd, committed, fsync=True)
    fsync_directory(path)
    return backup, len(torn)


def save_backup(path: Path, data: bytes) -> Path:
    """Write ``data`` to the first free ``<log>.torn-N`` and flush it; never follows a symlink."""
    for number in range(1, BACKUP_NAMES + 1):
        backup = path.with_name(f"{path.name}.torn-{number}")
        flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW
        try:
            fd = os.open(backup, flags, 0o644)
        except FileExistsError:  # a file, a directory or a symlink, dangling or not
            continue
        except OSError as error:
            raise SessionStoreError(
                _(
                    "{backup}: cannot create the backup of a torn tail ({reason}); "
                    "the session log is unchanged"
                ).format(backup=backup, reason=reason(error))
            ) from error
        try:
            write_whole(fd, data)
            os.fsync(fd)
        except OSError as error:
            with suppress(OSError):
                os.unlink(backup)
            raise SessionStoreError(
                _(
                    "{backup}: cannot write the backup of a torn tail ({reason}); "
                    "the session log is unchanged"
                ).format(backup=backup, reason=reason(error))
            ) from error
        finally:
            os.close(fd)
        return backup
    raise SessionStoreError(
        _(
            "{path}: no free backup name up to {name}.torn-{last}; the session log is unchanged"
        ).format(path=path, name=path.name, last=BACKUP_NAMES)
    )
