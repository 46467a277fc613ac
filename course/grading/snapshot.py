"""What the grader takes from a workspace: the learner's files, read safely, and what it noticed.

Only the manifest's ``learner`` files are taken, read without following links. The rest of
the workspace is only looked at: shipped files that differ from the kit's and entries the
curriculum does not list become notes and flags, never part of the grade. (Copies are looked for
only across a roster, by ``classroom.py``: never at a learner's door.)
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

from ..harness.hints import HINTS_BYTES, HINTS_FILE, HintsError, labs_by_id, parse_hints
from ..harness.kit import chapter_fingerprints, digest, read_source, short
from ..harness.manifest import Manifest
from ..harness.workspace import WORKSPACE_NOTEBOOKS, shipped_in_edition
from ..locale import gettext as _
from ..sandboxed.marker import (
    MARKER,
    MARKER_BYTES,
    Workspace,
    WorkspaceError,
    admit_workspace,
    parse_marker,
)
from ..sandboxed.untrusted import safe_name, safe_text
from .safefs import Tree, UnsafePath

LEARNER_FILES = ("LEARNING.md", "pytest.ini", MARKER, WORKSPACE_NOTEBOOKS, HINTS_FILE)
"""Top-level names a workspace is made with besides the curriculum's files (the hint record
comes with the first hint opened)."""
IGNORED = ("__pycache__",)
STRAYS_NAMED = 20
"""Entries outside the curriculum a note names (the rest are counted)."""


@dataclass(frozen=True)
class Snapshot:
    """What the grader took from a workspace: the learner's files, and what it noticed."""

    label: str
    learner: Mapping[str, bytes]
    notes: tuple[str, ...] = ()
    flags: tuple[str, ...] = ()
    starter: str | None = None  # the kit's starter fingerprint, for the graded copy's marker
    isolate: bool = True  # a failing lab is graded again on its own (not for the reference)
    began: str | None = None  # the starter fingerprint the workspace's marker says it began from
    hints: Mapping[str, int] = field(default_factory=dict)
    """The hint levels the workspace opened (``harness/hints.py``): information, never graded."""

    @property
    def scaffold(self) -> tuple[str, str] | None:
        """(the scaffold it began from, the kit's), short, when they differ; else None."""
        if self.began is None or self.starter is None:
            return None
        began, now = short(self.began), short(self.starter)
        return None if began == now else (began, now)


def reference_snapshot(manifest: Manifest, kit: Path, starter: str | None = None) -> Snapshot:
    """The reference laid out as a finished workspace (to try instructor tests on it)."""
    learner = {f.path: read_source(kit, f.reference) for f in manifest.files_with_role("learner")}
    label = _("the reference ({package}) in {kit}, as a graded copy")
    label = label.format(package=manifest.reference, kit=kit)
    return Snapshot(label, learner, starter=starter, isolate=False)


def _layout_notes(
    manifest: Manifest, kit: Path, tree: Tree, edition: str
) -> tuple[list[str], list[str]]:
    """Notes on shipped files that differ from the kit's (graded with the kit's copies); a
    given module may hold its docstrings in the workspace's edition."""
    notes, flags = [], []
    for file in manifest.files:
        if file.role == "learner" or (file.optional and tree.kind(file.path) == "missing"):
            continue
        try:
            shipped = read_source(kit, file.starter)
            kit_copies = {digest(shipped), digest(shipped_in_edition(file.path, shipped, edition))}
            if digest(tree.read(file.path)) in kit_copies:
                continue
            problem = _("{path} was edited in the workspace").format(path=file.path)
        except UnsafePath as error:
            problem = _("{path} could not be read from the workspace ({error})").format(
                path=file.path, error=error
            )
        notes.append(_("{problem}; graded with the kit's copy").format(problem=problem))
        flags.append(_("edited test files") if file.role == "test" else _("edited given files"))
    return notes, list(dict.fromkeys(flags))


def _expected_names(manifest: Manifest) -> dict[str, set[str]]:
    """Directory → the names the curriculum puts in it ('' is the workspace itself)."""
    names: dict[str, set[str]] = {"": set(LEARNER_FILES)}
    for file in manifest.files:
        parts = PurePosixPath(file.path).parts
        for depth in range(len(parts)):
            names.setdefault("/".join(parts[:depth]), set()).add(parts[depth])
    return names


def stray_entries(manifest: Manifest, tree: Tree) -> list[str]:
    """Workspace entries the graded copy leaves out (``conftest.py``, ``pytest/``…)."""
    found = []
    for folder, expected in _expected_names(manifest).items():
        try:
            kinds = tree.kinds(folder)
        except UnsafePath:
            continue
        for name, kind in kinds.items():
            if name in expected or name in IGNORED or name.startswith("."):
                continue
            path = f"{folder}/{name}" if folder else name  # learners name files:
            found.append(safe_name(path) + ("/" if kind == "directory" else ""))
    return found


def workspace_snapshot(
    manifest: Manifest,
    kit: Path,
    tree: Tree,
    read: Workspace | None = None,
    starter: str | None = None,
) -> Snapshot:
    """Read a workspace's marker (unless the door ``read`` it already) and learner files
    without trusting it; ``starter``: the kit's starter fingerprint, if the door has it. A
    ``WorkspaceError`` when a file is missing, unreadable, a link or not regular, or the
    workspace is another chapter's."""
    try:
        workspace = read or parse_marker(
            Path(tree.where()), tree.read(MARKER, MARKER_BYTES), tree.where(MARKER)
        )
        admit_workspace(workspace, manifest, tree.kind(workspace.package))
        learner = {f.path: tree.read(f.path) for f in manifest.files_with_role("learner")}
    except UnsafePath as error:
        raise WorkspaceError(
            _("cannot grade {where}: {error}").format(where=tree.where(), error=error)
        ) from None
    notes, flags = _layout_notes(manifest, kit, tree, workspace.edition)
    strays = stray_entries(manifest, tree)
    if strays:
        named = _(", ").join(strays[:STRAYS_NAMED])
        if len(strays) > STRAYS_NAMED:
            named = _("{named} and {count} more").format(
                named=named, count=len(strays) - STRAYS_NAMED
            )
        notes.append(_("not graded (only the curriculum's files are): {named}").format(named=named))
        flags.append(_("files outside the curriculum"))
    starter = starter or chapter_fingerprints(manifest, kit).starter
    began, now = short(workspace.starter_fingerprint), short(starter)
    shown = safe_text(tree.base.joinpath(*tree.below), keep="")
    if began == now:
        label = _("workspace {root} ({package}, began from starter {began})")
    else:
        label = _(
            "workspace {root} ({package}, began from starter {began}; the kit's starter is now "
            "{now})"
        )
        changed = _(
            "begun from scaffold {began}; the kit's is now {now}: what the kit changed since can "
            "fail a lab that was right for the older scaffold (ask the instructor)"
        )
        notes.append(changed.format(began=began, now=now))
    label = label.format(root=shown, package=manifest.package, began=began, now=now)
    hints = opened_hints(manifest, tree, notes)
    return Snapshot(
        label,
        learner,
        tuple(notes),
        tuple(flags),
        starter,
        began=workspace.starter_fingerprint,
        hints=hints,
    )


def opened_hints(manifest: Manifest, tree: Tree, notes: list[str]) -> dict[str, int]:
    """The workspace's hint record (none: nothing opened); one that cannot be read is a note."""
    if tree.kind(HINTS_FILE) == "missing":
        return {}
    try:
        data = tree.read(HINTS_FILE, HINTS_BYTES)
        return parse_hints(data, HINTS_FILE, labs_by_id(manifest.labs))
    except (UnsafePath, HintsError) as error:
        notes.append(_("the hint record is not read: {error}").format(error=error))
        return {}
