"""Submitted archives (.zip, .tar.gz, .tgz…) unpacked without trusting them, or refused with why.

Every member is checked before a byte of it is written (path inside the target, a plain file or
folder, ``Caps`` on depth, files, size and compression ratio). Declared sizes are checked first
and written bytes counted too, since a header can lie. Files are created fresh (``O_EXCL``, no
link followed) in a folder only this process uses.
"""

from __future__ import annotations

import bz2
import gzip
import lzma
import os
import stat
import struct
import tarfile
import zipfile
import zlib
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Literal, cast

from ...sandboxed.untrusted import safe_name

ZIP_SUFFIXES = (".zip",)
TAR_SUFFIXES = (".tar.gz", ".tgz", ".tar", ".tar.bz2", ".tbz2", ".tar.xz", ".txz")
UNREAD_SUFFIXES = (".rar", ".7z", ".gz", ".bz2", ".xz", ".zst")  # listed, never read
READ_SUFFIXES = (*ZIP_SUFFIXES, *TAR_SUFFIXES)
CHUNK = 64 * 1024
HEADER_BYTES = 64 * 1024  # a tar's long-name or pax header past this is refused unread

MemberKind = Literal["file", "directory", "symbolic link", "hard link", "device", "FIFO", "other"]


class Refused(ValueError):
    """An archive is not unpacked; the message names the archive, the member and why."""


class Damaged(Refused):
    """An archive that cannot be read (truncated, damaged, of a format not read): not unpacked,
    like any refusal, but nothing in it is unsafe."""


def not_read(suffix: str) -> str:
    """Why an archive of ``suffix`` is not read, naming those that are."""
    return f"{suffix or 'this'} archives are not read ({', '.join(READ_SUFFIXES)} are)"


@dataclass(frozen=True)
class Caps:
    """Limits on what one archive may unpack to."""

    total_bytes: int = 64 * 1024 * 1024
    files: int = 5000
    ratio: float = 100.0  # unpacked bytes per archive byte, once past ratio_floor
    ratio_floor: int = 1024 * 1024
    depth: int = 32  # folders a member's path may go down (the kit's workspace goes down 4)


DEFAULT_CAPS = Caps()


def amount(size: int) -> str:
    """``64 MiB`` for whole mebibytes, else ``4096 bytes``."""
    return f"{size >> 20} MiB" if size and size % (1 << 20) == 0 else f"{size} bytes"


def archive_suffix(name: str) -> str:
    """The archive suffix ``name`` ends with (``.tar.gz`` before ``.gz``), or ``""``."""
    lowered = name.lower()
    for suffix in (*ZIP_SUFFIXES, *TAR_SUFFIXES, *UNREAD_SUFFIXES):
        if lowered.endswith(suffix) and len(name) > len(suffix):
            return suffix
    return ""


def is_readable_archive(name: str) -> bool:
    return archive_suffix(name) in READ_SUFFIXES


def quoted(name: str) -> str:
    """A member's name as a refusal quotes it: escaped and cut (``untrusted.safe_name``)."""
    return f"'{safe_name(name)}'"


def member_parts(name: str, depth: int = DEFAULT_CAPS.depth) -> tuple[str, ...]:
    """The path components of a member (none for the target itself, ``./``), or ``Refused``
    if it could leave the target or goes down more than ``depth`` folders."""
    if "\\" in name or "\x00" in name:
        raise Refused(f"{quoted(name)}: a path with a backslash or NUL")
    if name.startswith("/") or (len(name) > 1 and name[1] == ":"):
        raise Refused(f"{quoted(name)}: an absolute path")
    parts = tuple(part for part in name.split("/") if part not in ("", "."))
    if ".." in parts:
        raise Refused(f"{quoted(name)}: a path that climbs out with '..'")
    if len(parts) > depth + 1:
        raise Refused(f"{quoted(name)}: a path more than {depth} folders deep")
    return parts


@dataclass
class Budget:
    """What an archive has used of its caps so far (headers first, then written bytes)."""

    caps: Caps
    packed_bytes: int
    files: int = 0
    declared: int = 0

    def admit(self, name: str, kind: MemberKind, size: int) -> tuple[str, ...]:
        """Check one member, as its header describes it, against every rule; its path
        components if it may be written."""
        parts, shown = member_parts(name, self.caps.depth), quoted(name)
        if kind not in ("file", "directory"):
            raise Refused(f"{shown}: a {kind} (only files and folders are unpacked)")
        if not parts and kind == "file":
            raise Refused(f"{shown}: a file without a name")
        self.files += 1
        if self.files > self.caps.files:
            raise Refused(f"more than {self.caps.files} files")
        self.declared += size
        self.check_size(self.declared, f"{shown} declares")
        return parts

    def check_size(self, total: int, what: str) -> None:
        if total > self.caps.total_bytes:
            raise Refused(f"{what} more than {amount(self.caps.total_bytes)} unpacked in all")
        ratio = total / max(self.packed_bytes, 1)
        if total > self.caps.ratio_floor and ratio > self.caps.ratio:
            raise Refused(
                f"{what} {total} bytes from {self.packed_bytes}: a compression ratio above "
                f"{self.caps.ratio:g} (a zip bomb?)"
            )


_MODE_KINDS: dict[int, MemberKind] = {
    stat.S_IFREG: "file",
    stat.S_IFDIR: "directory",
    stat.S_IFLNK: "symbolic link",
    stat.S_IFCHR: "device",
    stat.S_IFBLK: "device",
    stat.S_IFIFO: "FIFO",
}
_TAR_KINDS: dict[bytes, MemberKind] = {
    tarfile.DIRTYPE: "directory",
    tarfile.SYMTYPE: "symbolic link",
    tarfile.LNKTYPE: "hard link",
    tarfile.CHRTYPE: "device",
    tarfile.BLKTYPE: "device",
    tarfile.FIFOTYPE: "FIFO",
}


def _zip_kind(info: zipfile.ZipInfo) -> MemberKind:
    mode = info.external_attr >> 16
    if stat.S_IFMT(mode) == 0:  # no file type recorded (DOS attributes, or permissions only)
        return "directory" if info.is_dir() else "file"
    return _MODE_KINDS.get(stat.S_IFMT(mode), "other")


def _tar_kind(info: tarfile.TarInfo) -> MemberKind:
    return "file" if info.isreg() else _TAR_KINDS.get(info.type, "other")


@dataclass
class Writer:
    """Creates an archive's folders and files below ``target``, counting the bytes written."""

    target: Path
    budget: Budget
    written: int = 0

    def folder(self, parts: tuple[str, ...]) -> Path:
        path, shown = self.target.joinpath(*parts), quoted("/".join(parts))
        try:
            path.mkdir(mode=0o700, parents=True, exist_ok=True)
        except OSError as error:
            raise Refused(f"{shown}: cannot be made a folder ({error.strerror})") from None
        if path.is_symlink() or not path.is_dir():  # never: only this writer creates entries
            raise Refused(f"{shown}: not a folder")
        return path

    def file(self, parts: tuple[str, ...], source: IO[bytes]) -> None:
        folder, shown = self.folder(parts[:-1]), quoted("/".join(parts))
        flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW
        try:
            fd = os.open(folder / parts[-1], flags, 0o600)
        except FileExistsError:
            raise Refused(f"{shown}: appears twice in the archive") from None
        except OSError as error:
            raise Refused(f"{shown}: cannot be written ({error.strerror})") from None
        with os.fdopen(fd, "wb") as out:
            while chunk := source.read(CHUNK):
                self.written += len(chunk)
                self.budget.check_size(self.written, "unpacks to")
                out.write(chunk)


END_OF_DIRECTORY = struct.Struct("<4s4H2LH")  # the end of a zip's central directory
ZIP64_LOCATOR = struct.Struct("<4sLQL")
ZIP64_END = struct.Struct("<4sQ2H2L4Q")
DIRECTORY_ENTRY = struct.Struct("<4s4B4HL2L5H2L")  # one central directory entry, names after
LISTING_SEARCH = END_OF_DIRECTORY.size + 0xFFFF  # the end record, then a comment of up to 64 KiB


def check_zip_listing(handle: IO[bytes], files: int) -> None:
    """Count a zip's central directory entries without reading them into objects: ``Refused``
    past ``files`` entries, declared or found (the standard library lists every entry before
    any cap could look: a 48 MiB listing of a million entries took 466 MB). Anything it cannot
    find is left to ``zipfile`` to refuse."""
    size = handle.seek(0, os.SEEK_END)
    start = max(size - LISTING_SEARCH, 0)
    handle.seek(start)
    tail = handle.read(size - start)
    at = tail.rfind(b"PK\x05\x06")
    if at < 0 or len(tail) - at < END_OF_DIRECTORY.size:
        return
    fields = END_OF_DIRECTORY.unpack_from(tail, at)
    entries, length, end = fields[4], fields[5], start + at
    locator = end - ZIP64_LOCATOR.size
    if (entries == 0xFFFF or length == 0xFFFFFFFF) and locator >= ZIP64_END.size:
        handle.seek(locator)
        found = ZIP64_LOCATOR.unpack(handle.read(ZIP64_LOCATOR.size))
        if found[0] == b"PK\x06\x07":
            end = locator - ZIP64_END.size
            handle.seek(end)
            record = ZIP64_END.unpack(handle.read(ZIP64_END.size))
            if record[0] == b"PK\x06\x06":
                entries, length = record[7], record[8]
    if entries > files:
        raise Refused(f"more than {files} files")  # as ``Budget.admit`` says it
    first = end - length
    if first < 0:
        return
    handle.seek(first)
    counted, left = 0, length
    while left >= DIRECTORY_ENTRY.size:  # as ``zipfile`` walks it: entry after entry
        header = handle.read(DIRECTORY_ENTRY.size)
        if len(header) < DIRECTORY_ENTRY.size or header[:4] != b"PK\x01\x02":
            break
        entry = DIRECTORY_ENTRY.unpack(header)
        skipped = entry[12] + entry[13] + entry[14]  # name, extra field, comment
        counted += 1
        if counted > files:
            raise Refused(f"more than {files} files")
        handle.seek(skipped, os.SEEK_CUR)
        left -= DIRECTORY_ENTRY.size + skipped
    handle.seek(0)


def _unpack_zip(handle: IO[bytes], writer: Writer) -> None:
    check_zip_listing(handle, writer.budget.caps.files)
    with zipfile.ZipFile(handle) as archive:
        admitted = [
            (info, writer.budget.admit(info.filename, _zip_kind(info), info.file_size))
            for info in archive.infolist()
        ]
        for info, parts in admitted:
            if info.flag_bits & 0x1:
                raise Refused(f"{quoted(info.filename)}: encrypted")
            if _zip_kind(info) == "directory":
                writer.folder(parts)
                continue
            with archive.open(info) as source:
                writer.file(parts, source)


class _CappedTarInfo(tarfile.TarInfo):
    """A tar header whose long name or pax data is refused past ``HEADER_BYTES``, unread."""

    def _proc_member(self, archive: tarfile.TarFile) -> tarfile.TarInfo:
        if self.type in _HEADER_TYPES and self.size > HEADER_BYTES:
            raise Refused(f"a header of {self.size} bytes (more than {amount(HEADER_BYTES)})")
        return super()._proc_member(archive)  # type: ignore[misc,no-any-return]


_HEADER_TYPES = (
    tarfile.GNUTYPE_LONGNAME,
    tarfile.GNUTYPE_LONGLINK,
    tarfile.XHDTYPE,
    tarfile.XGLTYPE,
    tarfile.SOLARIS_XHDTYPE,
)


# A compressed tar's first bytes and the reader that decompresses it a chunk at a time.
COMPRESSIONS: tuple[tuple[bytes, Callable[[IO[bytes]], object]], ...] = (
    (b"\x1f\x8b", lambda handle: gzip.GzipFile(fileobj=handle, mode="rb")),
    (b"BZh", bz2.BZ2File),
    (b"\xfd7zXZ\x00", lzma.LZMAFile),
)


def _decompressed(handle: IO[bytes]) -> IO[bytes]:
    """``handle``'s tar stream, decompressed as it is read: never more than a read asks for
    (``tarfile``'s own streams decompress a whole chunk at once, a bomb's gigabyte included)."""
    magic = handle.read(6)
    handle.seek(0)
    for start, reader in COMPRESSIONS:
        if magic.startswith(start):
            return cast(IO[bytes], reader(handle))  # a binary file object, read-only
    return handle


def _unpack_tar(handle: IO[bytes], writer: Writer) -> None:
    stream = _decompressed(handle)
    with tarfile.open(fileobj=stream, mode="r|", tarinfo=_CappedTarInfo) as archive:
        for info in iter(archive.next, None):
            parts = writer.budget.admit(info.name, _tar_kind(info), info.size)
            if info.isdir():
                writer.folder(parts)
                continue
            source = archive.extractfile(info)
            if source is None:
                raise Damaged(f"{quoted(info.name)}: its data cannot be read")
            writer.file(parts, source)


UNREADABLE = (  # what a damaged, truncated or unsupported archive makes the stdlib raise
    zipfile.BadZipFile,
    tarfile.TarError,
    EOFError,
    OSError,
    ValueError,
    RuntimeError,  # NotImplementedError and RecursionError too
    zlib.error,
    lzma.LZMAError,
)


def unpack(archive: Path, target: Path, caps: Caps = DEFAULT_CAPS) -> None:
    """Unpack ``archive`` into the existing empty folder ``target``, or raise ``Refused``
    (``target`` may then hold part of it; the caller removes it)."""
    suffix = archive_suffix(archive.name)
    if suffix not in READ_SUFFIXES:
        raise Damaged(not_read(suffix))
    try:
        seen = os.lstat(archive)  # looked at before it is opened: a FIFO's open would block
        if not stat.S_ISREG(seen.st_mode):
            raise Refused("not a regular file")
        fd = os.open(archive, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError as error:
        raise Damaged(f"cannot be opened ({error.strerror})") from None
    with os.fdopen(fd, "rb") as handle:
        info = os.fstat(handle.fileno())
        if not os.path.samestat(info, seen) or not stat.S_ISREG(info.st_mode):
            raise Refused("replaced while it was read")
        writer = Writer(target, Budget(caps, info.st_size))
        try:
            (_unpack_zip if suffix in ZIP_SUFFIXES else _unpack_tar)(handle, writer)
        except Refused:
            raise
        except UNREADABLE as error:
            kind = "zip" if suffix in ZIP_SUFFIXES else "tar"
            why = f"{type(error).__name__}: {safe_name(error)}"
            raise Damaged(f"not a readable {kind} archive ({why})") from None
