"""Where a checkpoint looks (the reference or a practice workspace) and how it prints a verdict."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TextIO

from ..grading.engine import take_snapshot
from ..harness.kit import chapter_fingerprints, short
from ..harness.manifest import Manifest
from ..harness.report import counts_width, render_lab, render_probes
from ..harness.results import CheckpointResult
from ..harness.style import PLAIN, Style
from ..locale import gettext as _
from ..sandboxed.marker import Workspace, find_workspace, read_workspace


@dataclass(frozen=True)
class Where:
    """The code a checkpoint checks: the reference in the kit, or a practice workspace."""

    label: str
    """How the run describes it (``workspace /home/me/practice-11``)."""
    package_dir: Path
    """The folder of the package under check (what ``--watch`` watches)."""
    workspace: Workspace | None = None

    @property
    def root(self) -> Path | None:
        """The workspace's folder, or None for the reference."""
        return self.workspace.root if self.workspace is not None else None


def locate(manifest: Manifest, kit: Path, practice: str | None) -> Where:
    """What to check: ``practice``, else the workspace around the current folder, else the kit.

    A ``WorkspaceError`` says why a directory is not a usable workspace of this chapter.
    """
    root = Path(practice).resolve() if practice else find_workspace(Path.cwd())
    if root is None:
        label = _(
            "the kit's reference ({reference}) in {kit}: no practice workspace was found here "
            "or above (run practice to make one)"
        ).format(reference=manifest.reference, kit=kit)
        return Where(label, kit / manifest.reference.replace(".", "/"))
    workspace = read_workspace(root, manifest)
    began = short(workspace.starter_fingerprint)
    now = short(chapter_fingerprints(manifest, kit).starter)
    if began == now:
        label = _("workspace {root}").format(root=root)
    else:
        label = _("workspace {root} (begun from scaffold {began}; the kit's is now {now})").format(
            root=root, began=began, now=now
        )
    package_dir = root / workspace.package
    return Where(label, package_dir, workspace)


def print_verdict(
    result: CheckpointResult, out: TextIO, style: Style = PLAIN, said: Sequence[str] = ()
) -> None:
    """Each lab's line with what did not pass (tests and probe cases), then notes and flags
    (but the notes in ``said``, printed before the run)."""
    width = counts_width(result.labs)
    for lab in result.labs:
        print(render_lab(lab, style=style, counts_width=width), file=out)
    for line in render_probes(result):
        print(line, file=out)
    for note in result.notes:
        if note not in said:
            print(_("note: {note}").format(note=note), file=out)
    for flag in result.flags:
        print(_("flag: {flag}").format(flag=flag), file=out)
    out.flush()


def print_edits(manifest: Manifest, kit: Path, where: Where, out: TextIO) -> tuple[str, ...]:
    """What of the workspace will not run (edited tests, a ``conftest.py``…), said before
    anything runs: the graded copy holds the kit's files instead. Returns the notes said."""
    if where.root is None:
        return ()
    notes = take_snapshot(manifest, kit, where.root).notes
    for note in notes:
        print(_("note: {note}").format(note=note), file=out)
    out.flush()
    return notes
