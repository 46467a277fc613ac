"""Which edition a door speaks: the one asked for, else the workspace's, else the environment's."""

from __future__ import annotations

from pathlib import Path

from ..locale import SOURCE_EDITION, current_edition, gettext, set_edition
from .manifest import Manifest, translated
from .workspace import Found, look_around


def speak(requested: str | None, start: Path | Found | None = None) -> str:
    """Set this process's edition: ``requested``, else the workspace's (the one holding the
    folder ``start``, or the one a door already ``look``ed at), else ``COURSE_LANG``/``LANG``.
    Raises ``EditionError`` for an edition the kit lacks."""
    if requested or start is None:
        return set_edition(requested)
    found = start if isinstance(start, Found) else look_around(start)
    return set_edition(found.edition)


def in_edition(manifest: Manifest) -> Manifest:
    """The manifest as this process's edition reads it (titles, hints, the card, the review)."""
    if current_edition() == SOURCE_EDITION:
        return manifest
    return translated(manifest, gettext)
