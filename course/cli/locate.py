"""Where a checkpoint looks (the reference or a practice workspace) and how it prints a verdict."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import NamedTuple, TextIO

from ..grading.intake.door import Door, Found, look, look_around
from ..harness.kit import short
from ..harness.report import counts_width, render_lab, render_note, render_probes
from ..harness.results import CheckpointResult
from ..harness.style import PLAIN, Style
from ..locale import gettext as _


class Where(NamedTuple):
    """The code a checkpoint checks: how the run describes it (``workspace /home/me/practice-11``)
    and the folder of its package (what ``--watch`` watches)."""

    label: str
    package_dir: Path


def around(practice: str | None) -> Found:
    """The workspace holding ``practice`` (else the current folder), read before parsing."""
    return look_around(Path(practice) if practice else Path.cwd())


def to_check(practice: str | None, found: Found) -> Found:
    """What a checkpoint checks: ``practice`` itself, else ``found`` (``around`` the cwd)."""
    if not practice:
        return found
    root = Path(practice).resolve()
    return found if found.root == root else look(root)


def locate(door: Door) -> Where:
    """What ``door`` checks: its workspace, else the kit's reference."""
    manifest, kit, workspace = door.manifest, door.kit, door.workspace
    if workspace is None:
        label = _(
            "the kit's reference ({reference}) in {kit}: no practice workspace was found here "
            "or above (run practice to make one)"
        ).format(reference=manifest.reference, kit=kit)
        return Where(label, kit / manifest.reference.replace(".", "/"))
    root = workspace.root
    began, now = short(workspace.starter_fingerprint), short(door.fingerprints.starter)
    if began == now:
        label = _("workspace {root}").format(root=root)
    else:
        moved = _("workspace {root} (begun from scaffold {began}; the kit's is now {now})")
        label = moved.format(root=root, began=began, now=now)
    return Where(label, root / workspace.package)


def print_verdict(
    result: CheckpointResult, out: TextIO, style: Style = PLAIN, said: Sequence[str] = ()
) -> None:
    """Each lab's line with what did not pass, the probes, then notes (but those ``said``
    before the run) and flags."""
    width = counts_width(result.labs)
    lines = [render_lab(lab, style=style, counts_width=width) for lab in result.labs]
    lines += render_probes(result)
    lines += [line for note in result.notes if note not in said for line in render_note(note)]
    _print_lines([*lines, *(_("flag: {flag}").format(flag=flag) for flag in result.flags)], out)


def print_edits(door: Door, out: TextIO) -> tuple[str, ...]:
    """Say before anything runs what of the workspace will not (edited tests, a ``conftest.py``…:
    the graded copy holds the kit's files instead); returns the notes said."""
    notes = door.snapshot.notes if door.workspace is not None else ()
    _print_lines([line for note in notes for line in render_note(note)], out)
    return notes


def _print_lines(lines: Sequence[str], out: TextIO) -> None:
    out.writelines(f"{line}\n" for line in lines)
    out.flush()
