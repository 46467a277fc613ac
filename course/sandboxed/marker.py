"""A workspace's marker: finding the workspace, reading what it records, speaking its edition.

The chapter's ``conftest.py`` reads it in the sandbox too; writing one is ``harness/workspace.py``.
"""

from __future__ import annotations

import contextlib
import keyword
import os
import stat
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from ..locale import SOURCE_EDITION, set_edition
from ..locale import gettext as _
from .nofollow import Kind, UnsafePath, entry_kind, read_regular
from .tables import MISSING, TableReader
from .untrusted import safe_text

MARKER = ".course-workspace.toml"


class Chapter(Protocol):
    """What admitting a workspace asks of a chapter (a ``harness.manifest.Manifest`` has it)."""

    @property
    def chapter(self) -> str: ...

    @property
    def package(self) -> str: ...


class WorkspaceError(ValueError):
    """A workspace cannot be created here, or a directory is not a usable workspace."""


@dataclass(frozen=True)
class Workspace:
    """What a workspace's marker says about it."""

    root: Path
    chapter: str
    package: str
    starter_fingerprint: str
    checksums: dict[str, str]
    edition: str = SOURCE_EDITION  # the learner chose it (practice --lang); every door speaks it


MARKER_BYTES = 64 * 1024  # one is about 1 KiB: a larger one is refused before it is opened
WORD_CHARS = 100  # longest chapter, edition or fingerprint


def find_workspace(start: Path) -> Path | None:
    """The nearest directory upwards from ``start`` with a marker (a file, not a link), if any."""
    start = start.resolve()
    for folder in [start, *start.parents]:
        with contextlib.suppress(OSError):
            if stat.S_ISREG(os.lstat(folder / MARKER).st_mode):
                return folder
    return None


def read_workspace(root: Path, manifest: Chapter | None = None) -> Workspace:
    """The one reader of a marker, for every door: no link, capped, every field checked, and
    with ``manifest`` ``admit_workspace``'s rules; a ``WorkspaceError`` says what is wrong."""
    shown = safe_text(root / MARKER, keep="")
    not_one = _("{root}: not a practice workspace ({error})")
    try:
        directory = os.open(root, os.O_RDONLY | os.O_DIRECTORY)
    except OSError as error:
        raise WorkspaceError(not_one.format(root=root, error=error.strerror or error)) from None
    try:
        data = read_regular(directory, MARKER, shown, MARKER_BYTES)
        workspace = parse_marker(root, data, shown)
        if manifest is not None:
            admit_workspace(workspace, manifest, entry_kind(directory, workspace.package))
        return workspace
    except UnsafePath as error:
        if not os.path.lexists(root / MARKER):
            said = _(
                "{root}: not a practice workspace ({marker} is missing); create one with practice"
            )
            raise WorkspaceError(said.format(root=root, marker=MARKER)) from None
        raise WorkspaceError(not_one.format(root=root, error=error)) from None
    finally:
        os.close(directory)


def admit_workspace(workspace: Workspace, manifest: Chapter, package_kind: Kind) -> None:
    """Refuse another chapter's workspace, or one whose package is not a folder inside it."""
    root, package, wanted = workspace.root, workspace.package, manifest.package
    if workspace.chapter != manifest.chapter:
        said = _("{root} is a chapter {chapter} workspace, not chapter {wanted}")
        raise WorkspaceError(
            said.format(root=root, chapter=workspace.chapter, wanted=manifest.chapter)
        )
    if package != wanted:
        said = _("{root}: the marker names package {package}; chapter {chapter}'s is {wanted}")
        raise WorkspaceError(
            said.format(root=root, package=package, chapter=manifest.chapter, wanted=wanted)
        )
    if package_kind != "directory":
        said = _("{root}: {package} must be a folder inside the workspace, not a link or a file")
        raise WorkspaceError(said.format(root=root, package=package))


def _word(f: TableReader, key: str, default: str | None = None) -> str:
    """A short plain word (``11``, ``zh``, a fingerprint); anything else is shown cut."""
    value = f.raw(key, MISSING if default is None else default)
    plain = isinstance(value, str) and value.isprintable() and value.strip() == value
    if plain and 0 < len(value) <= WORD_CHARS and "/" not in value and value not in (".", ".."):
        return str(value)
    shown = safe_text(repr(value), WORD_CHARS, keep="")
    raise f.error(key, _("must be a plain word, got {value}").format(value=shown))


def _package(f: TableReader) -> str:
    """A plain Python identifier: the name of a folder directly inside the workspace."""
    value = _word(f, "package")
    if not (value.isascii() and value.isidentifier() and not keyword.iskeyword(value)):
        said = _("must be a plain Python identifier (a folder inside the workspace), got {value}")
        raise f.error("package", said.format(value=repr(value)))
    return value


def parse_marker(root: Path, text: bytes, marker: str) -> Workspace:
    """A workspace from its marker's bytes; a ``WorkspaceError`` names ``marker`` and the field."""
    try:
        data = tomllib.loads(text.decode("utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError, RecursionError) as error:
        # RecursionError: tables or arrays nested thousands deep
        why = _("nested too deeply") if isinstance(error, RecursionError) else error
        said = _("{marker}: not valid TOML ({error})").format(marker=marker, error=why)
        raise WorkspaceError(said) from None
    f = TableReader(data, "", marker, WorkspaceError)
    checksums = f.raw("checksums", {})
    if not isinstance(checksums, dict) or not all(isinstance(v, str) for v in checksums.values()):
        raise f.error("checksums", _("must be a table of strings"))
    workspace = Workspace(
        root=root,
        chapter=_word(f, "chapter"),
        package=_package(f),
        # ``parent_fingerprint``: the key's name in workspaces made by earlier kits
        starter_fingerprint=_word(
            f, "starter_fingerprint" if "starter_fingerprint" in f.table else "parent_fingerprint"
        ),
        checksums=dict(checksums),
        # workspaces made before editions were recorded are English
        edition=_word(f, "edition", default=SOURCE_EDITION),
    )
    if not isinstance(f.raw("created", ""), str):
        raise f.error("created", _("must be a string"))
    f.finish()
    return workspace


def speak(requested: str | None, start: Path | None = None) -> str:
    """Set this process's edition: ``requested``, else the workspace's at ``start``, else
    ``COURSE_LANG``/``LANG``. Raises ``EditionError`` for an edition the kit lacks."""
    recorded = None
    root = find_workspace(start) if start is not None else None
    if root is not None:
        # a broken marker: the door reports it itself, in the fallback edition
        with contextlib.suppress(WorkspaceError):
            recorded = read_workspace(root).edition
    return speak_recorded(requested, recorded)


def speak_recorded(requested: str | None, recorded: str | None) -> str:
    """``speak`` with the edition the marker records already read."""
    return set_edition(requested or recorded)
