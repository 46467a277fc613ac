"""What one entry point sets up once, for every step of its run to read (``Door``)."""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from pathlib import Path

from ...harness.editions import in_edition
from ...harness.kit import Fingerprints, chapter_fingerprints
from ...harness.manifest import Manifest
from ...sandboxed.marker import (
    Workspace,
    WorkspaceError,
    admit_workspace,
    find_workspace,
    read_workspace,
    speak_recorded,
)
from .safefs import Tree
from .snapshot import Snapshot, reference_snapshot, workspace_snapshot


@dataclass(frozen=True)
class Found:
    """The workspace a door stands in (None: none), its marker read once, or why it cannot be."""

    root: Path | None
    workspace: Workspace | None = None
    error: WorkspaceError | None = None


def look(root: Path | None) -> Found:
    """The workspace at ``root`` (None: none), its marker read once for the whole door."""
    if root is None:
        return Found(None)
    try:
        return Found(root, read_workspace(root))
    except WorkspaceError as error:
        return Found(root, error=error)


def look_around(start: Path) -> Found:
    """The workspace holding ``start`` (``find_workspace``), its marker read once."""
    return look(find_workspace(start))


def speak_for(requested: str | None, found: Found) -> str:
    """``editions.speak`` with the marker already read: speak ``requested``, else the edition
    ``found`` records, else ``COURSE_LANG``/``LANG``. Raises ``EditionError``."""
    return speak_recorded(requested, found.workspace.edition if found.workspace else None)


@dataclass(frozen=True)
class Door:
    """A door's setup, made once per run (``checkpoint``, ``check()``, ``check_variant()``); the
    rest is made when first asked for, then kept: nothing is read twice (``test_setup_once``)."""

    source: Manifest  # the chapter in the curriculum's own words (the gradebook keeps them)
    kit: Path
    edition: str  # the edition this door chose (the process speaks it)
    found: Found

    @cached_property
    def manifest(self) -> Manifest:
        """The chapter as the door's edition reads it."""
        return in_edition(self.source)

    @cached_property
    def workspace(self) -> Workspace | None:
        """The workspace checked (None: the reference), admitted for the chapter as
        ``read_workspace(root, manifest)`` does without reading the marker again."""
        workspace = self.found.workspace
        if self.found.error is not None:
            raise self.found.error
        if workspace is not None:
            admit_workspace(workspace, self.source, Tree(workspace.root).kind(workspace.package))
        return workspace

    @property
    def root(self) -> Path | None:
        return self.workspace.root if self.workspace is not None else None

    @cached_property
    def fingerprints(self) -> Fingerprints:
        return chapter_fingerprints(self.source, self.kit)

    @cached_property
    def snapshot(self) -> Snapshot:
        """What this run grades: the workspace's files (or the reference), taken once."""
        return self.take_snapshot()

    def take_snapshot(self) -> Snapshot:
        """A new snapshot of the same files (a watch takes one for each save)."""
        starter = self.fingerprints.starter
        if self.workspace is None:
            return reference_snapshot(self.source, self.kit, starter)
        tree = Tree(self.workspace.root)
        return workspace_snapshot(self.source, self.kit, tree, self.workspace, starter)
