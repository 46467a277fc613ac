"""The in-memory session store: append-only, every entry snapshotted through the parser."""

from __future__ import annotations

from collections.abc import Mapping
from types import TracebackType
from typing import Any

from course.locale import gettext as _

from .entries import SessionEntry, copy_entry, parse_session_entry
from .fields import PrintableError


class SessionStoreError(PrintableError):
    """A store refused an append or a log could not be read back."""


class InMemorySessionStore:
    """Append-only entries in memory; every append is snapshotted through the parser."""

    def __init__(self) -> None:
        self._entries: list[SessionEntry] = []
        self._ids: set[str] = set()

    def _admit(self, entry: object) -> SessionEntry:
        snapshot = parse_session_entry(entry)
        check_can_append(snapshot, self._ids)
        return snapshot

    def _record(self, snapshot: SessionEntry) -> None:
        self._entries.append(snapshot)
        self._ids.add(snapshot.id)

    def append(self, entry: SessionEntry | Mapping[str, Any]) -> SessionEntry:
        """Validate, snapshot and keep ``entry``; returns a copy of what was stored."""
        snapshot = self._admit(entry)
        self._record(snapshot)
        return copy_entry(snapshot)

    def entries(self) -> list[SessionEntry]:
        """Copies of the stored entries, in append order."""
        return [copy_entry(entry) for entry in self._entries]

    def __len__(self) -> int:
        return len(self._entries)

    def __contains__(self, entry_id: object) -> bool:
        return entry_id in self._ids

    def close(self) -> None:
        """Nothing to release; present so both stores share one interface."""

    def __enter__(self) -> InMemorySessionStore:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()


def check_can_append(entry: SessionEntry, ids: set[str] | Mapping[str, object]) -> None:
    """Reject a duplicate id or a parent that is not yet stored."""
    if entry.id in ids:
        raise SessionStoreError(
            _("{entry}: duplicate id (already in the session)").format(entry=entry.id)
        )
    if entry.parent_id is not None and entry.parent_id not in ids:
        raise SessionStoreError(
            _("{entry}.parentId: parent {parent} is not in the session yet").format(
                entry=entry.id, parent=entry.parent_id
            )
        )
