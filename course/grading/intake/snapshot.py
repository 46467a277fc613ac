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

from ...harness.hints import HINTS_BYTES, HINTS_FILE, HintsError, labs_by_id, parse_hints
from ...harness.kit import chapter_fingerprints, digest, read_source, short
from ...harness.manifest import Manifest
from ...harness.workspace import WORKSPACE_NOTEBOOKS, shipped_in_edition
from ...locale import gettext as _
from ...sandboxed.marker import (
    MARKER,
    MARKER_BYTES,
    Workspace,
    WorkspaceError,
    admit_workspace,
    parse_marker,
)
from ...sandboxed.untrusted import safe_name, safe_text
from .safefs import Tree, UnsafePath
from .scaffold import judged, labs_whose_tests_changed, missing_given

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


@dataclass(frozen=True)
class Layout:
    """The workspace's shipped files against the kit's: edits (noted and flagged), and files
    of an older scaffold (its own, or with no record of which scaffold made them)."""

    notes: tuple[str, ...] = ()
    flags: tuple[str, ...] = ()
    own: tuple[str, ...] = ()
    unrecorded: tuple[str, ...] = ()
    labs: tuple[str, ...] = ()  # whose focused tests the kit changed since the older scaffold


def _layout(manifest: Manifest, kit: Path, tree: Tree, workspace: Workspace, older: bool) -> Layout:
    """Shipped files that differ from the kit's (graded with the kit's copies): edited only
    where the marker's record, or the kit's own scaffold, says so (``scaffold.judged``); a given
    module may hold its docstrings in the workspace's edition."""
    notes, flags = [], []
    found: dict[str, list[str]] = {"own": [], "unknown": []}
    labs: list[str] = []
    lab_ids = [lab.id for lab in manifest.labs]
    for file in manifest.files:
        if file.role == "learner" or (file.optional and tree.kind(file.path) == "missing"):
            continue
        try:
            shipped = read_source(kit, file.starter)
            edition = shipped_in_edition(file.path, shipped, workspace.edition)
            data = tree.read(file.path)
            recorded = workspace.checksums.get(file.path)
            verdict = judged(data, {digest(shipped), digest(edition)}, recorded, older)
            if verdict == "kit":
                continue
            problem = _("{path} was edited in the workspace").format(path=file.path)
        except UnsafePath as error:
            verdict = "edited"
            problem = _("{path} could not be read from the workspace ({error})").format(
                path=file.path, error=error
            )
        if verdict != "edited":
            found[verdict].append(file.path)
            if file.role == "test" and file.path.endswith(".py"):
                labs += labs_whose_tests_changed(shipped, data, file.path, lab_ids)
            continue
        notes.append(_("{problem}; graded with the kit's copy").format(problem=problem))
        flags.append(_("edited test files") if file.role == "test" else _("edited given files"))
    ordered = tuple(lab for lab in lab_ids if lab in labs)
    own, unknown = tuple(found["own"]), tuple(found["unknown"])
    return Layout(tuple(notes), tuple(dict.fromkeys(flags)), own, unknown, ordered)


def scaffold_notes(layout: Layout, began: str, now: str) -> list[str]:
    """What grading a workspace begun from another scaffold changes for its learner, plainly."""
    said = _(
        "begun from scaffold {began}; the kit's is now {now}, whose tests and given files grade it"
    )
    notes = [said.format(began=began, now=now)]
    if layout.own:
        said = _("as the scaffold it began from made them, not edited: {files}")
        notes.append(said.format(files=_(", ").join(layout.own)))
    if layout.unrecorded:
        said = _(
            "differ from the kit's, and the scaffold it began from kept no record of them: {files}"
        )
        notes.append(said.format(files=_(", ").join(layout.unrecorded)))
    if layout.labs:
        said = _(
            "the kit changed the focused tests of {labs} since that scaffold: a lab right for "
            "its tests may fail with the kit's (ask the instructor)"
        )
        notes.append(said.format(labs=_(", ").join(f"Lab {lab}" for lab in layout.labs)))
    return notes


def given_notes(manifest: Manifest, kit: Path, learner: Mapping[str, bytes]) -> list[str]:
    """A note per learner file that lacks what the kit's starter gives (``open_context``…)."""
    starters = {f.path: read_source(kit, f.starter) for f in manifest.files_with_role("learner")}
    said = _(
        "{path} has no {names}, which the kit's scaffold gives: the kit's tests that use it "
        "fail; practice {chapter} NEW --from OLD moves your lab code into a fresh workspace "
        "and keeps it"
    )
    return [
        said.format(path=path, names=_(", ").join(names), chapter=manifest.chapter)
        for path, names in missing_given(manifest, starters, learner).items()
    ]


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
    starter = starter or chapter_fingerprints(manifest, kit).starter
    began, now = short(workspace.starter_fingerprint), short(starter)
    layout = _layout(manifest, kit, tree, workspace, older=began != now)
    notes, flags = list(layout.notes), list(layout.flags)
    strays = stray_entries(manifest, tree)
    if strays:
        named = _(", ").join(strays[:STRAYS_NAMED])
        if len(strays) > STRAYS_NAMED:
            named = _("{named} and {count} more").format(
                named=named, count=len(strays) - STRAYS_NAMED
            )
        notes.append(_("not graded (only the curriculum's files are): {named}").format(named=named))
        flags.append(_("files outside the curriculum"))
    shown = safe_text(tree.base.joinpath(*tree.below), keep="")
    if began == now:
        label = _("workspace {root} ({package}, began from starter {began})")
    else:
        label = _(
            "workspace {root} ({package}, began from starter {began}; the kit's starter is now "
            "{now})"
        )
        notes += scaffold_notes(layout, began, now)
    notes += given_notes(manifest, kit, learner)
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
