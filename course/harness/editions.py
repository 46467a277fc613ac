"""The curriculum in the door's edition (``sandboxed/marker.py``'s ``speak`` chooses it)."""

from __future__ import annotations

from dataclasses import replace

from ..locale import SOURCE_EDITION, current_edition, gettext
from .manifest import Manifest, translated


def in_edition(manifest: Manifest) -> Manifest:
    """The manifest as this process's edition reads it (titles, hints, the card, the review;
    each lab's ``section`` as the chapter heads it in that edition, where it says)."""
    edition = current_edition()
    labs = tuple(lab.in_edition(edition) for lab in manifest.labs)
    manifest = replace(manifest, labs=labs) if labs != manifest.labs else manifest
    if edition == SOURCE_EDITION:
        return manifest
    return translated(manifest, gettext)
