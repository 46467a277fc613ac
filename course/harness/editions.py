"""The curriculum in the door's edition (``sandboxed/marker.py``'s ``speak`` chooses it)."""

from __future__ import annotations

from ..locale import SOURCE_EDITION, current_edition, gettext
from .manifest import Manifest, translated


def in_edition(manifest: Manifest) -> Manifest:
    """The manifest as this process's edition reads it (titles, hints, the card, the review)."""
    if current_edition() == SOURCE_EDITION:
        return manifest
    return translated(manifest, gettext)
