"""Grading a class: each learner folder under a directory, graded on its own, into a gradebook.

Only folders holding a workspace marker are learners; any other folder is listed as skipped,
and a symbolic link is listed and never followed. Each workspace is graded in a thread of this
process through ``grading.grade`` (learner code runs only inside its confinement), so one
workspace that cannot be read, hangs or crashes costs its own row and never the run.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Literal, TextIO

from ..harness.manifest import Lab, Manifest
from ..harness.runner import Limits
from ..harness.workspace import MARKER, WorkspaceError
from . import probes as probing
from .engine import GradingOptions, SandboxUnavailable, grade
from .gradebook import (
    SKIPPED,
    Grade,
    clean,
    gradebook_csv,
    gradebook_json,
    graded_row,
    is_gradebook_name,
    ungraded_row,
    write_gradebook,
)
from .safefs import Tree, UnsafePath, lstat_kind
from .sandbox import planned_limits, sandbox_status
from .snapshot import workspace_snapshot

SEARCH_DEPTH = 3
"""How deep under a learner's folder a workspace is looked for."""


class EmptyRoster(WorkspaceError):
    """No folder of the roster holds a workspace."""


@dataclass(frozen=True)
class RosterOptions:
    """How to grade: which labs, the time limits, and the grading options."""

    lab_ids: tuple[str, ...] = ()
    test_seconds: float = 10.0
    workspace_seconds: float | None = None
    """Limit for one whole workspace; default: every test and lab's probes at their limit,
    plus a minute."""
    jobs: int = 2
    grading: GradingOptions = field(default_factory=lambda: GradingOptions(sandbox="required"))


Kind = Literal["workspace", "skipped", "symlink", "unreadable"]


@dataclass(frozen=True)
class Entry:
    """A folder of the roster: a learner's workspace, or why it is not graded."""

    learner: str
    """Path below the roster directory, e.g. ``gus/practice-11``."""
    kind: Kind
    why: str = ""

    @property
    def parts(self) -> tuple[str, ...]:
        return tuple(self.learner.split("/"))


def _search(roster: Path, parts: tuple[str, ...], depth: int) -> list[Entry]:
    """Workspaces at or below ``roster/parts``, walking no symbolic link."""
    tree = Tree(roster, parts)
    if tree.kind(MARKER) != "missing":
        return [Entry("/".join(parts), "workspace")]
    if depth == 0:
        return []
    try:
        names = tree.names()
    except UnsafePath as error:
        return [Entry("/".join(parts), "unreadable", str(error))]
    found: list[Entry] = []
    for name in names:
        if not name.startswith(".") and tree.kind(name) == "directory":
            found += _search(roster, (*parts, name), depth - 1)
    return found


def discover(roster: Path) -> list[Entry]:
    """Every non-hidden folder or link of ``roster``, as a workspace or why it is not one."""
    roster = roster.resolve()
    if not roster.is_dir():
        raise WorkspaceError(f"{roster}: not a directory of learners' workspaces")
    if os.path.lexists(roster / MARKER):
        raise WorkspaceError(f"{roster} is itself a workspace; check it with --practice")
    found: list[Entry] = []
    for name in sorted(os.listdir(roster)):
        kind = lstat_kind(roster / name)
        if name.startswith(".") or kind not in ("directory", "symlink"):
            continue
        if kind == "symlink" and is_gradebook_name(name):
            continue  # replaced when the gradebook is written, never followed
        if kind == "symlink":
            target = os.readlink(roster / name)
            why = f"a symbolic link (to {target}): links are listed, never graded"
            found.append(Entry(name, "symlink", why))
            continue
        inside = _search(roster, (name,), SEARCH_DEPTH)
        found += inside or [Entry(name, "skipped", f"not a practice workspace (no {MARKER})")]
    return found


def grade_entry(
    manifest: Manifest,
    kit: Path,
    roster: Path,
    entry: Entry,
    labs: Sequence[Lab],
    limits: Limits,
    options: GradingOptions,
    hide: Sequence[Path],
) -> Grade:
    """One row; never raises for anything a learner folder holds or its code does."""
    workspace = str(roster.joinpath(*entry.parts))
    if entry.kind in ("skipped", "symlink"):
        flags = ["symlink"] if entry.kind == "symlink" else []
        return ungraded_row(entry.learner, workspace, labs, SKIPPED, entry.why, flags)
    if entry.kind == "unreadable":
        return ungraded_row(entry.learner, workspace, labs, "error", entry.why)
    try:
        snapshot = workspace_snapshot(manifest, kit, Tree(roster, entry.parts))
        graded = grade(manifest, kit, snapshot, labs, limits, options, hide=hide)
    except WorkspaceError as error:
        return ungraded_row(entry.learner, workspace, labs, "error", str(error))
    except Exception as error:  # a fault of the grader: still one row, never the run
        why = f"the grader failed on this workspace: {type(error).__name__}: {error}"
        return ungraded_row(entry.learner, workspace, labs, "error", why)
    instructor = [
        t.nodeid
        for t in graded.result.tests
        if options.hidden and options.hidden.holds(manifest, t.nodeid)
    ]
    return graded_row(
        entry.learner,
        workspace,
        graded.result,
        graded.snapshot.flags,
        instructor,
        graded.enforced,
    )


class Progress:
    """A progress bar on a terminal; one line per graded folder otherwise."""

    def __init__(self, total: int, stream: TextIO) -> None:
        self.total = total
        self.stream = stream
        self.done = 0
        self.lock = threading.Lock()
        self.bar = stream.isatty()

    def step(self, grade: Grade) -> None:
        with self.lock:
            self.done += 1
            filled = round(20 * self.done / max(self.total, 1))
            bar = "#" * filled + "-" * (20 - filled)
            line = f"[{bar}] {self.done}/{self.total} {grade.learner}: {grade.passed}/{grade.total}"
            if self.bar:
                end = "\n" if self.done == self.total else ""
                self.stream.write(f"\r\033[K{line} {grade.status}{end}")
            else:
                self.stream.write(f"{line} {grade.status}\n")
            self.stream.flush()


def _deadline(manifest: Manifest, labs: Sequence[Lab], options: RosterOptions) -> float:
    if options.workspace_seconds is not None:
        return options.workspace_seconds
    tests = sum(lab.tests for lab in labs)
    return (tests + len(labs)) * options.test_seconds + 60


def grade_roster(
    manifest: Manifest,
    kit: Path,
    roster: Path,
    gradebook: Path,
    options: RosterOptions,
    progress_stream: TextIO,
    out: TextIO,
) -> list[Grade]:
    """Grade every workspace under ``roster`` and write the gradebook into ``gradebook``.

    ``SandboxUnavailable`` when the sandbox is required and cannot start; ``EmptyRoster``
    when no folder holds a workspace.
    """
    roster, gradebook = roster.resolve(), gradebook.resolve()
    entries = discover(roster)
    if not any(entry.kind == "workspace" for entry in entries):
        listed = "; ".join(f"{clean(e.learner)}: {clean(e.why)}" for e in entries) or "it is empty"
        raise EmptyRoster(f"{roster}: no practice workspace to grade ({listed})")
    grading = options.grading
    if grading.sandbox == "required":
        status = sandbox_status(kit, (manifest.reference,))
        if not status.available:
            raise SandboxUnavailable(status.reason)
    labs = [manifest.lab(i) for i in options.lab_ids] or list(manifest.required_labs)
    seed = grading.seed if grading.seed is not None else manifest.probe_seed
    probes = probing.prepare(manifest, kit, labs, seed)
    grading = replace(grading, probes=probes, deadline_seconds=_deadline(manifest, labs, options))
    limits = Limits(test_seconds=options.test_seconds)
    hide = (roster, gradebook)
    progress = Progress(len(entries), progress_stream)
    grades: list[Grade] = []
    with ThreadPoolExecutor(max_workers=options.jobs) as pool:
        futures = [
            pool.submit(grade_entry, manifest, kit, roster, e, labs, limits, grading, hide)
            for e in entries
        ]
        for future in as_completed(futures):
            row = future.result()
            grades.append(row)
            progress.step(row)
    grades.sort(key=lambda g: g.learner)
    enforced = planned_limits(grading.limits, sandboxed=grading.sandbox != "off")
    run = {
        "sandbox": {"sandboxed": grading.sandbox != "off", "enforced": list(enforced)},
        "probes": {"seed": seed, "cases": len(probes.cases) if probes else 0},
    }
    lab_ids = [lab.id for lab in labs]
    csv_path, json_path = write_gradebook(
        gradebook,
        gradebook_csv(lab_ids, grades),
        gradebook_json(manifest.chapter, grades, run),
    )
    _print_summary(manifest, grades, csv_path, json_path, enforced, out)
    return grades


def _print_summary(
    manifest: Manifest,
    grades: Sequence[Grade],
    csv_path: Path,
    json_path: Path,
    enforced: Sequence[str],
    out: TextIO,
) -> None:
    graded = sum(g.status != SKIPPED for g in grades)
    print(
        f"Graded {graded} workspace(s) of chapter {manifest.chapter} "
        f"({len(grades) - graded} skipped): {csv_path}, {json_path}",
        file=out,
    )
    for line in enforced:
        print(f"  limits: {line}", file=out)
    for row in grades:
        counts = " ".join(f"{lab.passed}/{lab.total}" for lab in row.labs)
        note = f"  {row.note}" if row.note else ""
        print(
            f"  {row.learner:<24} {row.status:<8} {row.passed}/{row.total}  {counts}{note}",
            file=out,
        )
