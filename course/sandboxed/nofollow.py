"""Reading one learner file without trusting it: lstat first, a regular file, no link, capped."""

from __future__ import annotations

import os
import stat
from typing import Literal

Kind = Literal["file", "directory", "symlink", "other", "missing"]


class UnsafePath(ValueError):
    """A learner path cannot be read safely; the message names the path and why."""


def read_regular(directory: int, name: str, shown: str, limit: int) -> bytes:
    """The bytes of the regular file ``name`` in the open ``directory``, at most ``limit``: a
    link, device, FIFO or larger file is refused before it is opened (``UnsafePath``), the
    file opened must be the one looked at, and no more than ``limit`` bytes are read."""
    too_large = UnsafePath(f"{shown}: larger than {limit // 1024} KiB")
    try:
        try:
            seen = os.stat(name, dir_fd=directory, follow_symlinks=False)
        except FileNotFoundError:
            raise UnsafePath(f"{shown}: missing") from None
        if stat.S_ISLNK(seen.st_mode):
            raise UnsafePath(f"{shown}: a symbolic link (workspaces are read without links)")
        if not stat.S_ISREG(seen.st_mode):
            raise UnsafePath(f"{shown}: not a regular file")
        if seen.st_size > limit:
            raise too_large
        fd = os.open(name, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK, dir_fd=directory)
        try:
            opened = os.fstat(fd)
            if (opened.st_dev, opened.st_ino) != (seen.st_dev, seen.st_ino):
                raise UnsafePath(f"{shown}: replaced while it was read")
            with os.fdopen(os.dup(fd), "rb") as handle:
                data = handle.read(limit + 1)
        finally:
            os.close(fd)
    except OSError as error:
        raise UnsafePath(f"{shown}: cannot be read ({error.strerror or error})") from None
    if len(data) > limit:
        raise too_large
    return data


def kind_of(mode: int) -> Kind:
    if stat.S_ISLNK(mode):
        return "symlink"
    if stat.S_ISDIR(mode):
        return "directory"
    return "file" if stat.S_ISREG(mode) else "other"


def entry_kind(directory: int, name: str) -> Kind:
    """What ``name`` in the open ``directory`` is, without following a link."""
    try:
        return kind_of(os.stat(name, dir_fd=directory, follow_symlinks=False).st_mode)
    except OSError:
        return "missing"
