"""The session tree: walking parent links from a leaf to the root."""

from __future__ import annotations

from collections.abc import Iterable

from course.locale import gettext as _

from .entries import SessionEntry
from .fields import PrintableError


class SessionPathError(PrintableError):
    """The active path to a leaf cannot be walked (unknown leaf, missing parent, cycle)."""


def path_to(entries: Iterable[SessionEntry], leaf_id: str) -> list[SessionEntry]:
    """The root-to-leaf active path ending at ``leaf_id``."""
    by_id = {entry.id: entry for entry in entries}
    if leaf_id not in by_id:
        raise SessionPathError(
            _("{leaf}: unknown leaf (no entry with that id)").format(leaf=leaf_id)
        )
    path: list[SessionEntry] = []
    seen: set[str] = set()
    current: str | None = leaf_id
    while current is not None:
        if current in seen:
            raise SessionPathError(_("{entry}: cycle in parent links").format(entry=current))
        seen.add(current)
        entry = by_id.get(current)
        if entry is None:
            child = path[-1].id
            raise SessionPathError(
                _("{entry}.parentId: parent {parent} is not in the session").format(
                    entry=child, parent=current
                )
            )
        path.append(entry)
        current = entry.parent_id
    path.reverse()
    return path
