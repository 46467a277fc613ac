"""Practice workspaces: laying one out, its marker file, and finding and checking it later."""

from __future__ import annotations

import json
import keyword
import os
import shutil
import stat
import tempfile
import tomllib
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from ..locale import N_, SOURCE_EDITION, translations
from ..locale import gettext as _
from .commands import BY_NAME, Commands
from .docstrings import localized
from .kit import digest, fingerprint, notebook_sources, read_source, scaffold_files
from .learning import render_learning
from .manifest import Manifest
from .nofollow import Kind, UnsafePath, entry_kind, read_regular
from .tables import MISSING, TableReader
from .untrusted import safe_text

MARKER = ".course-workspace.toml"
REUSE_REFUSED = N_("start a new practice directory; do not reuse a modified scaffold")

PYTEST_INI = """\
[pytest]
testpaths = tests
# The focused tests need no plugin, and every installed one (nbval, hypothesis...) costs
# seconds at each start: autoloading is off, and no cache is written here.
addopts = --disable-plugin-autoload -p no:cacheprovider
markers =
    lab(id): the lab a focused test belongs to
"""


class WorkspaceError(ValueError):
    """A workspace cannot be created here, or a directory is not a usable workspace."""


@dataclass(frozen=True)
class Workspace:
    """What a workspace's marker says about it."""

    root: Path
    chapter: str
    package: str
    starter_fingerprint: str
    """The fingerprint of the starter scaffold the workspace was made from."""
    checksums: dict[str, str]
    edition: str = SOURCE_EDITION
    """The language edition the learner chose (``practice --lang``); every door speaks it."""


MARKER_BYTES = 64 * 1024
"""Largest marker read (one is about 1 KiB): a larger one is refused before it is opened."""
WORD_CHARS = 100
"""Longest ``chapter``, ``edition`` or fingerprint a marker may hold."""


def _is_marker(path: Path) -> bool:
    """Whether ``path`` is a regular file (a link to a marker does not make a workspace)."""
    try:
        return stat.S_ISREG(os.lstat(path).st_mode)
    except OSError:
        return False


def find_workspace(start: Path) -> Path | None:
    """The workspace holding ``start`` (the nearest directory upwards with a marker), if any."""
    start = start.resolve()
    for folder in [start, *start.parents]:
        if _is_marker(folder / MARKER):
            return folder
    return None


def read_workspace(root: Path, manifest: Manifest | None = None) -> Workspace:
    """The one reader of a workspace's marker, for every door (the roster reads the same
    bytes through ``grading.safefs``): never through a link, at most ``MARKER_BYTES``, every
    field checked. With ``manifest``, also ``admit_workspace``'s rules for its chapter.

    A ``WorkspaceError`` names the file and what is wrong.
    """
    shown = safe_text(root / MARKER, keep="")
    try:
        directory = os.open(root, os.O_RDONLY | os.O_DIRECTORY)
    except OSError as error:
        said = _("{root}: not a practice workspace ({error})")
        raise WorkspaceError(said.format(root=root, error=error.strerror or error)) from None
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
        said = _("{root}: not a practice workspace ({error})")
        raise WorkspaceError(said.format(root=root, error=error)) from None
    finally:
        os.close(directory)


def admit_workspace(workspace: Workspace, manifest: Manifest, package_kind: Kind) -> None:
    """Refuse a workspace of another chapter, or one whose package is not the chapter's own
    folder inside it (``package_kind``: what its entry is, without following a link)."""
    if workspace.chapter != manifest.chapter:
        raise WorkspaceError(
            _("{root} is a chapter {chapter} workspace, not chapter {wanted}").format(
                root=workspace.root, chapter=workspace.chapter, wanted=manifest.chapter
            )
        )
    if workspace.package != manifest.package:
        said = _("{root}: the marker names package {package}; chapter {chapter}'s is {wanted}")
        raise WorkspaceError(
            said.format(
                root=workspace.root,
                package=workspace.package,
                chapter=manifest.chapter,
                wanted=manifest.package,
            )
        )
    if package_kind != "directory":
        said = _("{root}: {package} must be a folder inside the workspace, not a link or a file")
        raise WorkspaceError(said.format(root=workspace.root, package=workspace.package))


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
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as error:
        raise WorkspaceError(
            _("{marker}: not valid TOML ({error})").format(marker=marker, error=error)
        ) from None
    except RecursionError:  # tables or arrays nested thousands deep
        raise WorkspaceError(
            _("{marker}: not valid TOML ({error})").format(
                marker=marker, error=_("nested too deeply")
            )
        ) from None
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
        edition=_word(
            f, "edition", default=SOURCE_EDITION
        ),  # workspaces made before editions: English
    )
    if not isinstance(f.raw("created", ""), str):
        raise f.error("created", _("must be a string"))
    f.finish()
    return workspace


def render_marker(
    manifest: Manifest,
    starter: str,
    checksums: dict[str, str],
    when: str,
    edition: str = SOURCE_EDITION,
) -> str:
    """The marker file's TOML text."""
    lines = [
        "# A practice workspace of the course kit; checkpoint and the notebooks find it by this",
        "# file. The checksums let checkpoint tell when a shipped focused test was edited.",
        f"chapter = {json.dumps(manifest.chapter)}",
        f"package = {json.dumps(manifest.package)}",
        f"starter_fingerprint = {json.dumps(starter)}",
        f"edition = {json.dumps(edition)}",
        f"created = {json.dumps(when)}",
        "",
        "[checksums]",
    ]
    lines += [f"{json.dumps(path)} = {json.dumps(value)}" for path, value in checksums.items()]
    return "\n".join(lines) + "\n"


def default_directory(manifest: Manifest, here: Path) -> Path:
    """A fresh directory in ``here``: ``practice-11``, else ``practice-11-2``, and so on."""
    candidate = here / manifest.default_workspace
    number = 1
    while candidate.exists():
        number += 1
        candidate = here / f"{manifest.default_workspace}-{number}"
    return candidate


def check_fresh(target: Path) -> None:
    """Refuse a path that is a file or a directory with anything in it."""
    if target.is_file() or target.is_symlink():
        said = _("{target} is a file: {advice}")
        raise WorkspaceError(said.format(target=target, advice=_(REUSE_REFUSED)))
    if target.is_dir() and any(target.iterdir()):
        said = _("{target} is not empty: {advice}")
        raise WorkspaceError(said.format(target=target, advice=_(REUSE_REFUSED)))


def shipped_in_edition(path: str, text: bytes, edition: str) -> bytes:
    """A shipped Python module as a workspace of ``edition`` holds it: its docstrings in that
    edition (``harness/docstrings.py``), its code byte for byte."""
    if edition == SOURCE_EDITION or not path.endswith(".py"):
        return text
    return localized(text.decode("utf-8"), translations(edition).gettext).encode("utf-8")


WORKSPACE_NOTEBOOKS = "notebooks"
"""Where a workspace keeps its notebooks, whichever edition it was given."""


def workspace_layout(
    manifest: Manifest, kit: Path, edition: str | None = None, commands: Commands = BY_NAME
) -> dict[str, bytes]:
    """Every file of a new workspace, by its path inside the workspace."""
    edition = edition or manifest.default_edition
    files = scaffold_files(manifest, kit, "starter")
    starter = fingerprint(files)
    checksums = {f.path: digest(files[f.path]) for f in manifest.files_with_role("test")}
    for file in manifest.files:
        if file.role != "test":  # the learner reads their files and the given ones in their edition
            files[file.path] = shipped_in_edition(file.path, files[file.path], edition)
    notebooks = []
    for source in notebook_sources(manifest, kit, edition):
        notebook = f"{WORKSPACE_NOTEBOOKS}/{Path(source).name}"
        files[notebook] = read_source(kit, source)
        notebooks.append(notebook)
    when = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    files[MARKER] = render_marker(manifest, starter, checksums, when, edition).encode("utf-8")
    files["pytest.ini"] = PYTEST_INI.encode("utf-8")
    learning = render_learning(manifest, starter, notebooks, commands, edition)
    files["LEARNING.md"] = learning.encode("utf-8")
    return files


def create_workspace(
    manifest: Manifest,
    kit: Path,
    target: Path,
    edition: str | None = None,
    commands: Commands = BY_NAME,
) -> list[str]:
    """Lay out a fresh workspace at ``target``; returns the files written.

    The files are written into a sibling scratch directory first and moved into place at
    once, so a failure never leaves a half-made workspace behind.
    """
    target = target.resolve()
    check_fresh(target)
    files = workspace_layout(manifest, kit, edition, commands)
    target.parent.mkdir(parents=True, exist_ok=True)
    scratch = Path(tempfile.mkdtemp(prefix=f".{target.name}-", dir=target.parent))
    try:
        for relative, data in files.items():
            path = scratch / relative
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(data)
        scratch.chmod(0o755)
        if target.is_dir():
            target.rmdir()  # empty, checked above
        os.replace(scratch, target)
    except BaseException:
        shutil.rmtree(scratch, ignore_errors=True)
        raise
    return sorted(files)
