"""Where a chapter found through ``COURSE_CHAPTERS`` sits in the kit, for a platform's run.

A platform (Gradescope's image, an Actions runner, Classroom 50's) runs the kit elsewhere,
without the instructor's environment: the chapter's folder travels with the kit, and the run
names the kit's folder of chapters in ``COURSE_CHAPTERS`` itself.
"""

from __future__ import annotations

from pathlib import Path

from ..locale import gettext as _
from .kit import KitError
from .manifest import CHAPTER_ROOTS, Manifest

VARIABLE = CHAPTER_ROOTS


def chapters_root(manifest: Manifest, kit: Path) -> str | None:
    """The kit-relative folder of chapters holding ``manifest``'s, when it was found through
    ``COURSE_CHAPTERS`` (None: a built-in chapter); a ``KitError`` when it is outside the kit."""
    folder = Path(manifest.folder)
    if not folder.is_absolute():
        return None
    try:
        return folder.resolve().parent.relative_to(kit.resolve()).as_posix()
    except ValueError:
        said = _("{folder}: a chapter outside the kit cannot travel with it to a platform")
        raise KitError(said.format(folder=folder)) from None


def chapter_files(manifest: Manifest, kit: Path) -> list[str]:
    """The kit-relative files of the chapter's own folder ([] for a built-in chapter, which
    travels with the ``course`` package)."""
    root = chapters_root(manifest, kit)
    if root is None:
        return []
    folder = kit / root / Path(manifest.folder).name
    found = [path for path in folder.rglob("*") if path.is_file()]
    kept = [path for path in found if "__pycache__" not in path.parts]
    return sorted(path.relative_to(kit).as_posix() for path in kept)
