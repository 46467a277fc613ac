"""What a notebook runs: the learner's package (or the reference standing in for it), and checks.

``open_chapter("11")`` makes ``import pi_course`` mean the workspace's package, else the kit's
reference, and shows a lab stub's exception as a one-line pending note; ``check("11.3")`` runs
the checkpoint's engine on the saved files. The kernel speaks the edition of where it runs
(``kernel_edition``), never one chosen by the cells, which every edition shares.
"""

from __future__ import annotations

import ast
import contextlib
import importlib
import os
import sys
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType, TracebackType
from typing import Any

from ..grading.intake.door import Door, look_around
from ..grading.verdict.engine import GradingOptions, SandboxUnavailable, evaluate
from ..harness.editions import in_edition
from ..harness.hints import (
    NONE_OPENED,
    HintsError,
    labs_by_id,
    next_hint,
    open_next_hint,
    render_hint,
)
from ..harness.kit import KitError, kit_root
from ..harness.manifest import Manifest, ManifestError, load_manifest
from ..harness.pysource import parse
from ..harness.reference import import_reference
from ..harness.results import CheckpointResult
from ..harness.runner import Limits
from ..harness.webworker import in_a_browser
from ..locale import SOURCE_EDITION, current_edition, stub_title
from ..locale import gettext as _
from ..sandboxed.commands import BY_NAME, shell_commands
from ..sandboxed.marker import Workspace, WorkspaceError, find_workspace, read_workspace, speak
from .verdict import VerdictView
from .views import View, message, preformatted


@dataclass(frozen=True)
class OpenedChapter:
    """Which package ``import <package>`` gives this kernel, and from where."""

    manifest: Manifest
    package: ModuleType
    workspace: Workspace | None
    edition: str = SOURCE_EDITION

    @property
    def label(self) -> str:
        name = self.manifest.package
        if self.workspace is None:
            return _(
                "{package} is the kit's reference implementation here (no practice workspace)"
            ).format(package=name)
        return _("{package} is your practice workspace's package").format(package=name)

    def _repr_html_(self) -> str:
        return message(self.label, "note").html

    def _repr_pretty_(self, printer: Any, cycle: bool) -> None:
        printer.text(message(self.label, "note").text)


def _alias_reference(manifest: Manifest) -> ModuleType:
    """Register the reference and its listed modules under the learner's package name."""
    reference = import_reference(manifest, kit_root())
    sys.modules[manifest.package] = reference
    prefix = f"{manifest.package}/"
    for file in manifest.files:
        name = file.path.removeprefix(prefix).removesuffix(".py")
        if file.path.startswith(prefix) and file.path.endswith(".py") and name != "__init__":
            module = importlib.import_module(f"{manifest.reference}.{name}")
            sys.modules[f"{manifest.package}.{name}"] = module
    return reference


def _import_workspace(manifest: Manifest, workspace: Workspace) -> ModuleType:
    """Import the learner's package from the workspace, whatever was imported before."""
    root = str(workspace.root)
    if root not in sys.path:
        sys.path.insert(0, root)
    stale = [n for n in sys.modules if n.split(".")[0] == manifest.package]
    for name in stale:
        if not str(getattr(sys.modules[name], "__file__", "") or "").startswith(root):
            del sys.modules[name]
    return importlib.import_module(manifest.package)


def folder_edition(manifest: Manifest, where: Path) -> str | None:
    """The edition whose kit notebook folder holds ``where`` (the deepest such folder)."""
    try:
        kit = kit_root()
    except KitError:
        return None
    place = where.resolve()
    bases = {edition: (kit / folder).resolve() for edition, folder in manifest.notebooks.items()}
    holding = [edition for edition, base in bases.items() if base in (place, *place.parents)]
    return max(holding, key=lambda edition: len(bases[edition].parts), default=None)


def kernel_edition(manifest: Manifest, workspace: Workspace | None, where: Path) -> str | None:
    """The edition a kernel at ``where`` asks for: its workspace's, else its kit folder's
    (Jupyter and nbval start a kernel in its notebook's folder)."""
    return workspace.edition if workspace is not None else folder_edition(manifest, where)


def open_chapter(chapter: str, start: str | os.PathLike[str] | None = None) -> OpenedChapter:
    """Make ``import <package>`` work here, speak the kernel's edition, note pending labs."""
    manifest = load_manifest(chapter)
    where = Path(start) if start is not None else Path.cwd()
    root = find_workspace(where)
    workspace = read_workspace(root, manifest) if root is not None else None
    edition = speak(kernel_edition(manifest, workspace, where))
    package = (
        _alias_reference(manifest) if workspace is None else _import_workspace(manifest, workspace)
    )
    _install_pending_handler()
    return OpenedChapter(in_edition(manifest), package, workspace, edition)


# --------------------------------------------------------------------------- pending labs


def pending_note(error: BaseException) -> View | None:
    """The one-line note for a lab stub's exception; None for any other error."""
    if not isinstance(error, NotImplementedError) or not hasattr(error, "lab_id"):
        return None
    fields = [getattr(error, name, None) for name in ("title", "function", "hint")]
    if not all(isinstance(value, str) for value in fields):
        return message(_("pending · {message}").format(message=error), "pending")
    title, function, hint = (str(value) for value in fields)
    said = _("pending · Lab {lab} {title} not implemented yet ({function}): {todo}")
    todo = said.format(lab=error.lab_id, title=stub_title(title), function=function, todo=_(hint))
    return message(todo, "pending")


def assigned_names(source: str) -> set[str]:
    """The names a cell's top-level statements bind (``result = …``, ``for x in …``, ``import``)."""
    try:
        tree = parse(source)
    except SyntaxError:
        return set()
    names: set[str] = set()
    for statement in tree.body:
        for node in ast.walk(statement):
            if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
                names.add(node.id)
            elif isinstance(node, ast.alias):
                names.add((node.asname or node.name).split(".")[0])
            elif isinstance(node, ast.FunctionDef | ast.ClassDef):
                names.add(node.name)
    return names


@dataclass
class PendingCells:
    """Cells that stopped at a lab stub (a note, and Run All goes on), and the names they would
    have bound: a later cell needing one says which lab to write first, not ``NameError``."""

    waiting: dict[str, str] = field(default_factory=dict)
    """Name → the lab it waits for, as the note names it."""

    def note_for(self, error: BaseException) -> View | None:
        note = pending_note(error)
        if note is not None:
            return note
        name = getattr(error, "name", None) if isinstance(error, NameError) else None
        if isinstance(name, str) and name in self.waiting:
            said = _("pending · this cell needs `{name}`, which waits for {lab}")
            return message(said.format(name=name, lab=self.waiting[name]), "pending")
        return None

    def after(self, result: Any) -> None:
        """``post_run_cell``: remember what a pending cell left unbound, and let Run All go on."""
        error = result.error_in_exec
        names = assigned_names(getattr(result.info, "raw_cell", "") or "")
        if error is not None and self.note_for(error) is not None:
            lab = self._waits_for(error)
            for name in names:
                self.waiting.setdefault(name, lab)
            result.error_in_exec = None
        elif error is None:
            for name in names:
                self.waiting.pop(name, None)

    def _waits_for(self, error: BaseException) -> str:
        lab_id = getattr(error, "lab_id", None)
        if isinstance(lab_id, str):
            title, function = getattr(error, "title", ""), getattr(error, "function", "")
            return _("Lab {lab} {title} ({function}): write it first").format(
                lab=lab_id, title=_(title) if title else title, function=function
            )
        return self.waiting.get(str(getattr(error, "name", "")), _("an earlier lab"))

    def handler(
        self,
        shell: Any,
        etype: type[BaseException],
        value: BaseException,
        tb: TracebackType | None,
        tb_offset: int | None = None,
    ) -> list[str]:
        from IPython.display import display

        note = self.note_for(value)
        if note is None:
            shell.showtraceback((etype, value, tb), tb_offset=tb_offset)
        else:
            display(note)  # type: ignore[no-untyped-call]
        return []


PENDING = PendingCells()


def _install_pending_handler() -> None:
    try:
        from IPython.core.getipython import get_ipython
    except ImportError:  # pragma: no cover - outside IPython there is nothing to install
        return
    # IPython's annotations differ between versions: read the shell as untyped.
    shell: Any = get_ipython()  # type: ignore[no-untyped-call, unused-ignore]
    if shell is None:
        return
    shell.set_custom_exc((NotImplementedError, NameError), PENDING.handler)
    with contextlib.suppress(ValueError):
        shell.events.unregister("post_run_cell", PENDING.after)
    shell.events.register("post_run_cell", PENDING.after)


# --------------------------------------------------------------------------- lab checks


def check(
    lab: str, *, start: str | os.PathLike[str] | None = None, timeout: float = Limits.test_seconds
) -> VerdictView:
    """A lab's verdict (``"11.3"``; ``"11"`` for every lab), as ``checkpoint`` gives it: the
    engine runs on the saved files in fresh processes (a browser tab: Web Workers, docs/lite.md),
    never the kernel's state. ``timeout`` is each test's limit in seconds."""
    chapter, _, _ = lab.partition(".")
    shown_lab = lab if lab != chapter else None
    try:
        manifest = load_manifest(chapter)
        lab_ids = [manifest.lab(lab).id] if shown_lab else []
        door = kernel_door(manifest, start)
        root = door.root  # the rules of every door, before anything runs
        limits, options = Limits(test_seconds=timeout), grading_options(root)
        result = evaluate(manifest, door.kit, root, lab_ids, limits, options, door.snapshot)
    except KitError as error:  # the zero-install site has no kit tree yet (docs/lite.md)
        said = in_the_browser(chapter, shown_lab) if in_a_browser() else str(error)
        return VerdictView(None, shown_lab, said)
    except (ManifestError, WorkspaceError, SandboxUnavailable) as error:
        return VerdictView(None, shown_lab, str(error))
    return verdict_view(result, shown_lab, root, manifest)


def hint(lab: str, *, start: str | os.PathLike[str] | None = None) -> View:
    """The next level of help for ``lab`` (``"11.3"``), as ``checkpoint 11 --lab 11.3 --hint``
    gives it: 1 the idea and a section to read, 2 a strategy, 3 the steps; the workspace
    records the level opened (information, never a penalty)."""
    try:
        manifest = load_manifest(lab.partition(".")[0])
        root = kernel_door(manifest, start).root
        shown = in_edition(manifest)
        chosen = shown.lab(lab)
        if root is None:
            opened = next_hint(chosen, NONE_OPENED)
        else:
            opened = open_next_hint(root, labs_by_id(shown.labs), chosen)
    except (ManifestError, WorkspaceError, HintsError, OSError) as error:
        return message(str(error), "error")
    return preformatted("\n".join(render_hint(opened, f'hint("{chosen.id}")')))


def kernel_door(manifest: Manifest, start: str | os.PathLike[str] | None = None) -> Door:
    """The chapter's door in the kernel's edition, at the workspace holding ``start`` (or cwd)."""
    found = look_around(Path(start) if start is not None else Path.cwd())
    return Door(manifest, kit_root(), current_edition(), found)


def grading_options(root: Path | None) -> GradingOptions:
    """In a workspace a replay line must run as printed in the learner's terminal; the kit's
    own notebooks keep the plain name, so their stored outputs are the same everywhere."""
    return GradingOptions(commands=shell_commands() if root is not None else BY_NAME)


def verdict_view(
    result: CheckpointResult, lab: str | None, root: Path | None, manifest: Manifest
) -> VerdictView:
    """``result`` with the workspace's folder as ``<workspace>``, titles in the kernel's edition."""
    placeholder = (str(root), "<workspace>") if root is not None else ("", "")
    titles = {lab.id: lab.title for lab in in_edition(manifest).labs}
    return VerdictView(result, lab, replace=placeholder, titles=titles)


def in_the_browser(chapter: str, lab: str | None) -> str:
    """Why ``check()`` cannot grade in a site without the kit's tests; where to get a verdict."""
    command = f"checkpoint {chapter}" + (f" --lab {lab}" if lab else "")
    return _(
        "this site does not carry the kit's focused tests, so check() cannot grade here: save "
        "your workspace with save_workspace(), download the zip and run `{command}` in it on a "
        "computer, or hand it in"
    ).format(command=command)
