"""Learner directories read without trusting them, and the grader's files written atomically.

Paths are walked one component at a time with ``O_NOFOLLOW``: a symbolic link on the way
(``pi_course -> ../bob/pi_course``) is refused, so a learner's folder never hands the grader
another's files or the machine's. Only regular files are read, up to a size. Output goes to a
fresh temporary file renamed over the target, replacing a link rather than writing through it.
"""

from __future__ import annotations

import contextlib
import errno
import os
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from ...sandboxed.nofollow import Kind, entry_kind, kind_of, read_regular
from ...sandboxed.nofollow import UnsafePath as UnsafePath  # the refusal of every learner read

MAX_FILE_BYTES = 1024 * 1024


def _parts(relative: str) -> tuple[str, ...]:
    parts = PurePosixPath(relative).parts
    if not parts or PurePosixPath(relative).is_absolute() or ".." in parts:
        raise UnsafePath(f"{relative!r}: not a relative path inside the directory")
    return parts


@dataclass(frozen=True)
class Tree:
    """A directory below a trusted ``base``, reached through ``below`` without symlinks."""

    base: Path
    below: tuple[str, ...] = ()

    def where(self, relative: str = "") -> str:
        return "/".join([*self.below, *([relative] if relative else [])]) or str(self.base)

    @contextlib.contextmanager
    def _directory(self, parts: tuple[str, ...]) -> Iterator[int]:
        """A file descriptor of ``base/below/parts`` opened without following any link."""
        fd = os.open(self.base, os.O_RDONLY | os.O_DIRECTORY)
        try:
            for index, part in enumerate((*self.below, *parts)):
                shown = "/".join((*self.below, *parts)[: index + 1])
                try:
                    if entry_kind(fd, part) != "directory":  # looked at before it is opened
                        raise NotADirectoryError(errno.ENOTDIR, "not a directory")
                    inner = os.open(part, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW, dir_fd=fd)
                except OSError as error:
                    raise self._refusal(fd, part, shown, error) from None
                os.close(fd)
                fd = inner
            yield fd
        finally:
            os.close(fd)

    @staticmethod
    def _refusal(fd: int, name: str, shown: str, error: OSError) -> UnsafePath:
        kind = entry_kind(fd, name)
        if kind == "symlink":
            return UnsafePath(f"{shown}: a symbolic link (workspaces are read without links)")
        if kind == "missing":
            return UnsafePath(f"{shown}: missing")
        if error.errno in (errno.ENOTDIR, errno.ELOOP):
            return UnsafePath(f"{shown}: not a directory")
        return UnsafePath(f"{shown}: cannot be read ({error.strerror or error})")

    def kind(self, relative: str) -> Kind:
        """What ``relative`` is, without following a link (``missing`` if any part is)."""
        parts = _parts(relative)
        try:
            with self._directory(parts[:-1]) as fd:
                return entry_kind(fd, parts[-1])
        except UnsafePath:
            return "missing"

    def kinds(self, relative: str = "") -> dict[str, Kind]:
        """Each entry of a directory (sorted) and what it is, one ``lstat`` each."""
        with self._directory(_parts(relative) if relative else ()) as fd:
            try:
                names = sorted(os.listdir(fd))
            except OSError as error:
                raise UnsafePath(f"{self.where(relative)}: cannot be listed ({error})") from None
            return {name: entry_kind(fd, name) for name in names}

    def read(self, relative: str, limit: int = MAX_FILE_BYTES) -> bytes:
        """A regular file's bytes; ``UnsafePath`` for a link, a device, a FIFO, a huge file
        (``nofollow.read_regular``: nothing is opened before ``lstat`` says it may be)."""
        parts = _parts(relative)
        with self._directory(parts[:-1]) as directory:
            return read_regular(directory, parts[-1], self.where(relative), limit)


def lstat_kind(path: Path) -> Kind:
    """What ``path`` is, without following a final link."""
    try:
        return kind_of(os.lstat(path).st_mode)
    except OSError:
        return "missing"


def atomic_write(target: Path, data: bytes) -> None:
    """Write ``target`` whole or not at all, replacing (never following) a link at its name;
    ``IsADirectoryError`` if a directory holds the name (never replaced)."""
    if lstat_kind(target) == "directory":
        raise IsADirectoryError(errno.EISDIR, "a directory has this name", str(target))
    fd, temporary = tempfile.mkstemp(prefix=f".{target.name}.", dir=target.parent)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.chmod(temporary, 0o644)
        os.replace(temporary, target)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        raise
