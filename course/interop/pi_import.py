"""Importing a Pi session: the chapter entries, the active path and the report; writing the log."""

from __future__ import annotations

import contextlib
import errno
import os
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from course.groups import InteractionError, group_interactions
from course.locale import gettext as _
from course.session import SessionEntry, encode_entry, path_to, recover_jsonl

from .pi_format import LineDamage, PiSession, migrate, read_pi_session
from .pi_mapping import chapter_entry, map_session
from .pi_repair import repair as repair_drafts
from .pi_report import (
    POLICIES,
    SPLIT_TURNS,
    ImportReport,
    PiImportError,
    Policy,
    ReportItem,
    SplitTurn,
    sorted_items,
)

REFUSED_KINDS = ("damaged_line", "unknown_type", "missing_parent")
"""What ``strict`` refuses before the chapter's rules are even checked."""


@dataclass(frozen=True)
class ImportedSession:
    """A Pi session as the chapter's entries (parents first; the last is the leaf, Pi's last
    line or what a repair appended after it), its active path and the report."""

    entries: list[SessionEntry]
    leaf_id: str
    path: list[SessionEntry]
    report: ImportReport

    def to_jsonl(self) -> bytes:
        return chapter_log_bytes(self.entries)


def import_pi_session(
    path: str | os.PathLike[str],
    *,
    repair: Policy = "strict",
    split_turn: SplitTurn = "turn-start",
    keep_failed: bool = False,
) -> ImportedSession:
    """Read, migrate, map and repair the Pi session file at ``path`` (plain or gzipped); raises
    ``PiFormatError`` or, under ``strict``, ``PiImportError`` (see docs/pi-import.md)."""
    return convert_pi_session(
        read_pi_session(path), repair=repair, split_turn=split_turn, keep_failed=keep_failed
    )


def convert_pi_session(
    session: PiSession,
    *,
    repair: Policy = "strict",
    split_turn: SplitTurn = "turn-start",
    keep_failed: bool = False,
) -> ImportedSession:
    """The pure part of ``import_pi_session``: a parsed Pi session to chapter entries."""
    if repair not in POLICIES:
        raise ValueError(f"repair: must be one of {', '.join(POLICIES)}, got {repair!r}")
    if split_turn not in SPLIT_TURNS:
        raise ValueError(f"split_turn: must be one of {', '.join(SPLIT_TURNS)}, got {split_turn!r}")
    migrated = migrate(session)
    mapped, lossy = map_session(migrated, keep_failed=keep_failed)
    damage = [_damage_item(damaged, migrated) for damaged in migrated.damage]
    found = [*damage, *map(_missing_parent_item, migrated.missing_parents), *lossy]
    refused = [item for item in found if item.kind in REFUSED_KINDS]
    try:
        drafts, repairs = repair_drafts(mapped, repair, split_turn)
    except PiImportError as error:
        raise PiImportError(list(sorted_items([*refused, *error.items]))) from None
    if repair == "strict" and refused:
        raise PiImportError(refused)
    entries = [chapter_entry(draft.entry, draft.line) for draft in drafts]
    leaf_id = entries[-1].id
    path = path_to(entries, leaf_id)
    try:  # the chapter's own grouping must accept the active path; its error names the line
        group_interactions(path)
    except InteractionError as error:
        entry_id = str(error).split(":", 1)[0]
        line = next((d.line for d in drafts if d.id == entry_id), 0)
        raise PiImportError([ReportItem(line, entry_id, "interaction", str(error))]) from None
    items = sorted_items([*found, *repairs])
    report = ImportReport(session.source_version, repair, items, split_turn, keep_failed)
    return ImportedSession(entries, leaf_id, path, report)


def _damage_item(damage: LineDamage, session: PiSession) -> ReportItem:
    ids = [str(r.data["id"]) for r in session.entries if r.line == damage.line]
    several, skipped = len(ids) > 1, bool(damage.skipped)
    if several and not skipped:
        text = _("{problem}; read as {ids} and {last}, where Pi's loader skips the whole line")
    elif several:
        text = _(
            "{problem}; read as {ids} and {last}; skipped, as Pi's loader skips it: "
            "{skipped} (what was read is {read})"
        )
    elif skipped and ids:
        text = _("{problem}; skipped, as Pi's loader skips it: {skipped} (what was read is {read})")
    elif skipped:
        text = _("{problem}; skipped, as Pi's loader skips it: {skipped}")
    else:
        text = "{problem}"
    text = text.format(
        problem=damage.problem,
        ids=_(", ").join(ids[:-1]),
        last=ids[-1] if ids else "",
        skipped=damage.skipped,
        read=_(", ").join(ids),
    )
    return ReportItem(damage.line, ids[0] if ids else "-", "damaged_line", text)


def _missing_parent_item(orphan: tuple[int, str, str]) -> ReportItem:
    line, entry_id, parent = orphan
    text = _(
        "parent {parent!r} is not in this file (Pi's /fork leaves label entries out of the new "
        "file); the entry now starts its path below the header, where Pi's context starts too"
    ).format(parent=parent)
    return ReportItem(line, entry_id, "missing_parent", text)


def chapter_log_bytes(entries: Sequence[SessionEntry]) -> bytes:
    """One committed JSONL line per entry, as the chapter's store writes them."""
    return b"".join(encode_entry(entry) for entry in entries)


def write_chapter_log(
    entries: Sequence[SessionEntry], out: str | os.PathLike[str], *, force: bool = False
) -> Path:
    """Write ``entries`` as a chapter JSONL log at ``out``, atomically, after the store's own
    reader accepts the bytes; an existing file is replaced only with ``force``."""
    data = chapter_log_bytes(entries)
    recover_jsonl(data)
    return write_atomically(Path(out), data, force=force)


class OutputExistsError(FileExistsError):
    """The file to write exists and replacing it was not asked for."""

    def __init__(self, path: Path) -> None:
        self.path = path
        super().__init__(self.explain())

    def explain(self, option: str = "force") -> str:
        """The error's text; ``option`` names the setting that allows replacing the file."""
        return _("{path}: already exists (pass {option} to replace it)").format(
            path=self.path, option=option
        )


NO_HARD_LINKS = frozenset(
    {errno.EMLINK, errno.ENOSYS, errno.EPERM, errno.ENOTSUP, errno.EOPNOTSUPP}
)
"""``link`` errors meaning no hard links here (Emscripten answers ``EMLINK``), not "name taken"."""


def move_in_if_free(temporary: str, target: Path) -> None:
    """Give the flushed ``temporary`` the name ``target`` unless ``target`` exists meanwhile.

    A hard link claims the name atomically. Without hard links (Pyodide) the name is checked,
    then the file renamed: still atomic against a crash, and there is no rival writer there.
    """
    try:
        os.link(temporary, target)  # fails if the name was taken meanwhile
    except (AttributeError, OSError) as error:  # Pyodide's os has no link at all
        if isinstance(error, OSError) and error.errno not in NO_HARD_LINKS:
            raise
        if os.path.lexists(target):
            raise FileExistsError(errno.EEXIST, os.strerror(errno.EEXIST), str(target)) from None
        os.replace(temporary, target)
        return
    os.unlink(temporary)


def write_atomically(target: Path, data: bytes, *, force: bool) -> Path:
    """Write ``data`` to a temporary file beside ``target``, flush it, then move it in place."""
    if target.exists() and not force:
        raise OutputExistsError(target)
    if not target.parent.is_dir():
        raise FileNotFoundError(2, "no such directory", str(target.parent))
    fd, temporary = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".tmp")
    try:
        umask = os.umask(0o022)  # read it: setting it back is the only way
        os.umask(umask)
        os.fchmod(fd, 0o666 & ~umask)
        with open(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        if force:
            os.replace(temporary, target)
        else:
            move_in_if_free(temporary, target)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(temporary)
        raise
    directory = os.open(target.parent, os.O_RDONLY)
    try:
        os.fsync(directory)
    finally:
        os.close(directory)
    return target
