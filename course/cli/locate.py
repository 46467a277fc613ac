"""Where a checkpoint looks (the reference or a practice workspace) and how it prints a verdict."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TextIO

from ..grading.door import Door, Found, look, look_around
from ..harness.kit import short
from ..harness.report import counts_width, render_lab, render_probes
from ..harness.results import CheckpointResult
from ..harness.style import PLAIN, Style
from ..locale import gettext as _
from ..sandboxed.marker import Workspace


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


def around(practice: str | None) -> Found:
    """The workspace holding ``practice`` (else the current folder), its marker read: the
    edition's choice, made before the command line is parsed."""
    return look_around(Path(practice) if practice else Path.cwd())


def to_check(practice: str | None, found: Found) -> Found:
    """What a checkpoint checks: ``practice`` itself, else the workspace around the current
    folder (``found``, from ``around``, unless ``practice`` is not that workspace's folder)."""
    if not practice:
        return found
    root = Path(practice).resolve()
    return found if found.root == root else look(root)


def locate(door: Door) -> Where:
    """What ``door`` checks: its workspace, else the kit's reference.

    A ``WorkspaceError`` says why a directory is not a usable workspace of this chapter.
    """
    manifest, kit, workspace = door.manifest, door.kit, door.workspace
    if workspace is None:
        label = _(
            "the kit's reference ({reference}) in {kit}: no practice workspace was found here "
            "or above (run practice to make one)"
        ).format(reference=manifest.reference, kit=kit)
        return Where(label, kit / manifest.reference.replace(".", "/"))
    root = workspace.root
    began = short(workspace.starter_fingerprint)
    now = short(door.fingerprints.starter)
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


def print_edits(door: Door, out: TextIO) -> tuple[str, ...]:
    """What of the workspace will not run (edited tests, a ``conftest.py``…), said before
    anything runs: the graded copy holds the kit's files instead. Returns the notes said."""
    if door.workspace is None:
        return ()
    notes = door.snapshot.notes
    for note in notes:
        print(_("note: {note}").format(note=note), file=out)
    out.flush()
    return notes
