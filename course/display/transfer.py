"""A workspace carried out of the browser and back: one zip of the learner's files."""

from __future__ import annotations

import io
import os
import shutil
import tempfile
import zipfile
from dataclasses import dataclass
from pathlib import Path

from ..grading.intake.archives import Refused, unpack
from ..grading.intake.safefs import atomic_write
from ..locale import gettext as _
from ..locale import ngettext
from ..sandboxed.marker import MARKER, WorkspaceError, find_workspace

LEFT_OUT = frozenset(
    {"__pycache__", ".ipynb_checkpoints", ".pytest_cache", ".hypothesis", ".virtual_documents"}
)
"""Folders of caches the tools make; a zip never carries them."""


@dataclass(frozen=True)
class Transfer:
    """What was saved or loaded, and where; shown as one line under the cell."""

    archive: Path
    root: Path
    files: int
    loaded: bool
    unread: tuple[str, ...] = ()
    """Files left out as unreadable (the browser's drive lists some, such as the kit's JSON)."""

    def __str__(self) -> str:
        if self.loaded:
            text = ngettext(
                "loaded {count} file from {archive} into {root}",
                "loaded {count} files from {archive} into {root}",
                self.files,
            )
        else:
            text = ngettext(
                "saved {count} file of {root} in {archive}: download it from the file browser "
                "(right-click, Download) and hand it in as it is",
                "saved {count} files of {root} in {archive}: download it from the file browser "
                "(right-click, Download) and hand it in as it is",
                self.files,
            )
        text = text.format(count=self.files, archive=self.archive.name, root=self.root.name)
        if self.unread:
            unread = _("left out, as they could not be read: {paths}")
            text += "; " + unread.format(paths=", ".join(self.unread))
        return text

    def _repr_pretty_(self, printer: object, cycle: bool) -> None:
        printer.text(str(self))  # type: ignore[attr-defined]


def workspace_root(start: str | os.PathLike[str] | None) -> Path:
    """The workspace at or above ``start`` (the current folder), or a ``WorkspaceError``."""
    here = Path(start) if start is not None else Path.cwd()
    root = find_workspace(here)
    if root is None:
        nowhere = _("{path}: no practice workspace here or above (no {marker})")
        raise WorkspaceError(nowhere.format(path=here, marker=MARKER))
    return root


def learner_files(root: Path) -> list[Path]:
    """Every file of the workspace except the tools' caches, in a stable order."""
    found = []
    for folder, names, files in os.walk(root):
        names[:] = sorted(name for name in names if name not in LEFT_OUT)
        found += [Path(folder, name) for name in sorted(files) if not name.endswith(".pyc")]
    return found


def save_workspace(start: str | os.PathLike[str] | None = None) -> Transfer:
    """Zip the workspace (``<workspace>.zip`` beside it), its files under its own folder name."""
    root = workspace_root(start)
    archive, zipped = root.parent / f"{root.name}.zip", io.BytesIO()
    written, unread = 0, []
    with zipfile.ZipFile(zipped, "w", zipfile.ZIP_DEFLATED) as out:
        for path in learner_files(root):
            relative = path.relative_to(root).as_posix()
            try:
                data = path.read_bytes()
            except OSError:
                unread.append(relative)
                continue
            out.writestr(f"{root.name}/{relative}", data)
            written += 1
    atomic_write(archive, zipped.getvalue())
    return Transfer(archive, root, written, loaded=False, unread=tuple(unread))


def load_workspace(
    archive: str | os.PathLike[str], start: str | os.PathLike[str] | None = None
) -> Transfer:
    """Put the files of a saved zip back into the workspace (the newer copy of each wins; files
    it lacks are kept), unpacked as a roster unpacks a submission (no links, no escape, caps)."""
    root = workspace_root(start)
    with tempfile.TemporaryDirectory(prefix="course-load-") as scratch:
        try:
            unpack(Path(archive), Path(scratch))
        except Refused as error:
            raise WorkspaceError(str(error)) from None
        saved = find_saved(Path(scratch))
        files = learner_files(saved)
        for path in files:
            target = root / path.relative_to(saved)
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(path, target)
    return Transfer(Path(archive), root, len(files), loaded=True)


def find_saved(unpacked: Path) -> Path:
    """The workspace inside an unpacked zip: at its top or in one folder."""
    for candidate in (unpacked, *sorted(p for p in unpacked.iterdir() if p.is_dir())):
        if (candidate / MARKER).is_file():
            return candidate
    raise WorkspaceError(
        _("the zip holds no practice workspace (no {marker})").format(marker=MARKER)
    )
