"""Which edition a door speaks: the one asked for, else the workspace's, else the environment's."""

from __future__ import annotations

from pathlib import Path

from ..locale import SOURCE_EDITION, current_edition, gettext, set_edition
from .manifest import Manifest, translated
from .workspace import WorkspaceError, find_workspace, read_workspace


def workspace_edition(start: Path) -> str | None:
    """The edition recorded by the workspace holding ``start``, if there is a readable one."""
    root = find_workspace(start)
    if root is None:
        return None
    try:
        return read_workspace(root).edition
    except WorkspaceError:
        return None  # the door reports the broken marker itself, in the fallback edition


def speak(requested: str | None, start: Path | None = None) -> str:
    """Set this process's edition: ``requested``, else the workspace's at ``start``, else
    ``COURSE_LANG``/``LANG``. Raises ``EditionError`` for an edition the kit lacks."""
    chosen = requested or (workspace_edition(start) if start is not None else None)
    return set_edition(chosen)


def in_edition(manifest: Manifest) -> Manifest:
    """The manifest as this process's edition reads it (titles, hints, the card, the review)."""
    if current_edition() == SOURCE_EDITION:
        return manifest
    return translated(manifest, gettext)
