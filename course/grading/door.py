"""What one entry point sets up once, for every step of its run to read (``Door``)."""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from pathlib import Path

from ..harness.editions import in_edition
from ..harness.kit import Fingerprints, chapter_fingerprints
from ..harness.manifest import Manifest
from ..harness.workspace import Found, Workspace
from .safefs import Tree
from .snapshot import Snapshot, reference_snapshot, workspace_snapshot


@dataclass(frozen=True)
class Door:
    """A door's setup, made once per run (``checkpoint``, ``practice``, ``check()``...): the
    chapter, the kit, the edition it speaks and the workspace it stands in, its marker read
    once (``found``). The rest is made when first asked for, then kept: the workspace admitted
    for the chapter, the kit's fingerprints and the snapshot graded. Nothing is read twice.
    ``tests/harness/test_setup_once.py`` counts it, door by door."""

    source: Manifest
    """The chapter in the curriculum's own words (the gradebook keeps them)."""
    kit: Path
    edition: str
    """The edition this door chose (the process speaks it)."""
    found: Found

    @cached_property
    def manifest(self) -> Manifest:
        """The chapter as the door's edition reads it."""
        return in_edition(self.source)

    @cached_property
    def workspace(self) -> Workspace | None:
        """The workspace checked (None: the kit's reference); a ``WorkspaceError`` when it
        cannot be used for this chapter."""
        return self.found.admitted(self.source)

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
