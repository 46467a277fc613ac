"""Grading a class: each submission under a directory, graded on its own, into a gradebook.

What the directory holds is read by ``intake``: folders holding a workspace marker and archives
are learners; any other folder is listed as skipped, a symbolic link is listed and never
followed, and what is not a row is printed with why. Each workspace is graded in a thread of this
process through ``grading.grade`` (learner code runs only inside its confinement), so one
workspace that cannot be read, hangs or crashes costs its own row and never the run. Each row's
lab code is fingerprinted as it is read (``copies.py``, bounded), and once every row is in, the
class is compared (``classroom.py``): its flags join the rows and ``gradebook.json``'s ``copies``.
"""

from __future__ import annotations

import re
import secrets
import threading
import time
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, TextIO

from ..harness.manifest import Lab, Manifest
from ..harness.runner import Limits
from ..locale import gettext as _
from ..sandboxed.columns import pad
from ..sandboxed.marker import WorkspaceError
from ..sandboxed.status import Status
from . import probes as probing
from .archives import DEFAULT_CAPS, Caps, Refused
from .classroom import with_copy_flags
from .copies import Baseline, baseline, learner_prints
from .engine import GradingOptions, SandboxUnavailable, for_learners, grade
from .gitrepo import nearest_checkout
from .gradebook import (
    Grade,
    LabGrade,
    clean,
    gradebook_csv,
    gradebook_json,
    graded_row,
    ungraded_row,
    write_gradebook,
)
from .intake import Submission, opened, survey, where, with_checkout, with_intake
from .sandbox import planned_limits, sandbox_status
from .snapshot import workspace_snapshot


class EmptyRoster(WorkspaceError):
    """No folder of the roster holds a workspace."""


class OverBudget(WorkspaceError):
    """Reading a submission used up its whole deadline before its code ran."""


def within_deadline(options: GradingOptions, started: float) -> GradingOptions:
    """``options`` with what is left of the deadline since ``started`` (the grader's own work
    on the submission counts); ``OverBudget`` when nothing is left."""
    if options.deadline_seconds is None:
        return options
    spent = time.monotonic() - started
    left = options.deadline_seconds - spent
    if left <= 0:
        said = _("grading took longer than {seconds}s (reading the submission took {spent}s)")
        raise OverBudget(said.format(seconds=f"{options.deadline_seconds:g}", spent=f"{spent:.1f}"))
    return replace(options, deadline_seconds=left)


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
    names: re.Pattern[str] | None = None
    """Takes each learner's name out of a platform's file naming (``--names``)."""
    caps: Caps = DEFAULT_CAPS
    audit_seed: int | None = None
    """The seed of the cases no workspace holds (``--audit-seed``); None: a new one each run."""


def grade_entry(
    manifest: Manifest,
    kit: Path,
    roster: Path,
    entry: Submission,
    labs: Sequence[Lab],
    limits: Limits,
    options: GradingOptions,
    hide: Sequence[Path],
    caps: Caps = DEFAULT_CAPS,
    copies: Baseline | None = None,
) -> Grade:
    """One row; never raises for anything a learner folder holds or its code does.

    ``copies``: fingerprint the row's lab code against it (``Grade.prints``). Reading the
    submission, its git metadata and its fingerprints count within its deadline.
    """
    started = time.monotonic()
    workspace = where(roster, entry)
    if entry.newer or entry.kind in ("skipped", "symlink"):
        flags = ["symlink"] if entry.kind == "symlink" else []
        row = ungraded_row(entry.learner, workspace, labs, Status.SKIPPED, entry.why, flags)
        return with_intake(row, entry)
    if entry.kind in ("unreadable", "refused"):
        row = ungraded_row(entry.learner, workspace, labs, Status.ERROR, entry.why)
        return with_intake(row, entry)
    try:
        with opened(roster, entry, caps) as tree:
            workspace = where(roster, entry, tree)
            learner_paths = [file.path for file in manifest.files_with_role("learner")]
            top = 1 if entry.kind == "workspace" else 0
            repository = nearest_checkout(tree, top, learner_paths)
            snapshot = workspace_snapshot(manifest, kit, tree)
        prints = learner_prints(copies, snapshot.learner) if copies is not None else None
        left = within_deadline(options, started)
        graded = grade(manifest, kit, snapshot, labs, limits, left, hide=hide)
    except Refused as error:
        flags = ["refused archive"]
        row = ungraded_row(entry.learner, workspace, labs, Status.ERROR, str(error), flags)
    except OverBudget as error:
        row = ungraded_row(entry.learner, workspace, labs, Status.TIMEOUT, str(error))
    except RecursionError:  # a learner's file nested past a reader's depth
        why = _("nested too deep to be read")
        row = ungraded_row(entry.learner, workspace, labs, Status.ERROR, why)
    except WorkspaceError as error:
        row = ungraded_row(entry.learner, workspace, labs, Status.ERROR, str(error))
    except Exception as error:  # a fault of the grader: still one row, never the run
        why = _("the grader failed on this workspace: {error}").format(
            error=f"{type(error).__name__}: {error}"
        )
        row = ungraded_row(entry.learner, workspace, labs, Status.ERROR, why)
    else:
        public = for_learners(graded.result, manifest, options.hidden)
        instructor = [
            t.nodeid
            for t in graded.result.tests
            if options.hidden and options.hidden.holds(manifest, t.nodeid)
        ]
        row = graded_row(
            entry.learner,
            workspace,
            graded.result,
            (*graded.snapshot.flags, *graded.result.flags),
            instructor,
            graded.enforced,
            public=public,
        )
        row = with_checkout(row, repository, entry, snapshot.learner)
        row = replace(row, prints=prints, shown=public)
    return with_intake(row, entry)


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
            line = f"[{bar}] {self.done}/{self.total} {grade.learner}: {grade.score}/{grade.total}"
            status = grade.status.label
            if self.bar:
                end = "\n" if self.done == self.total else ""
                self.stream.write(f"\r\033[K{line} {status}{end}")
            else:
                self.stream.write(f"{line} {status}\n")
            self.stream.flush()


def _deadline(manifest: Manifest, labs: Sequence[Lab], options: RosterOptions) -> float:
    if options.workspace_seconds is not None:
        return options.workspace_seconds
    tests = sum(lab.tests for lab in labs)
    return (tests + len(labs)) * options.test_seconds + 60


@dataclass(frozen=True)
class GradedClass:
    """Every submission's row, what the run was (sandbox, probes, copies) and what held."""

    labs: tuple[Lab, ...]
    grades: list[Grade]
    run: dict[str, Any]
    """``gradebook.json``'s description of the run."""
    enforced: tuple[str, ...]
    """What the sandbox enforced, plainly (the ``limits:`` lines)."""


def grade_submissions(
    manifest: Manifest,
    kit: Path,
    roster: Path,
    entries: Sequence[Submission],
    options: RosterOptions,
    progress_stream: TextIO,
    hide: Sequence[Path],
) -> GradedClass:
    """Grade ``entries`` (what ``intake`` found under ``roster``), each on its own, and compare
    the class. ``SandboxUnavailable`` when the sandbox is required and cannot start; ``hide``:
    the folders learner code must not see."""
    grading = options.grading
    if grading.sandbox == "required":
        status = sandbox_status(kit, (manifest.reference,))
        if not status.available:
            raise SandboxUnavailable(status.reason)
    labs = [manifest.lab(i) for i in options.lab_ids] or list(manifest.required_labs)
    seed = grading.seed if grading.seed is not None else manifest.probe_seed
    probes = probing.prepare(manifest, kit, labs, seed)
    audit_seed = options.audit_seed
    if audit_seed is None:  # a seed nobody saw: answers keyed to the shipped cases earn nothing
        audit_seed = secrets.randbelow(2**31)
        while audit_seed == seed:
            audit_seed = secrets.randbelow(2**31)
    audit = probing.draw(manifest, kit, audit_seed) if probes is not None else None
    audit = audit.only([lab.id for lab in labs]) if audit is not None else None
    copies = baseline(manifest, kit, tuple(labs))
    grading = replace(
        grading,
        probes=probes,
        audit=audit,
        deadline_seconds=_deadline(manifest, labs, options),
    )
    limits = Limits(test_seconds=options.test_seconds)
    progress = Progress(len(entries), progress_stream)
    grades: list[Grade] = []
    with ThreadPoolExecutor(max_workers=options.jobs) as pool:
        futures = [
            pool.submit(
                grade_entry,
                manifest,
                kit,
                roster,
                e,
                labs,
                limits,
                grading,
                hide,
                options.caps,
                copies,
            )
            for e in entries
        ]
        for future in as_completed(futures):
            row = future.result()
            grades.append(row)
            progress.step(row)
    grades.sort(key=lambda g: g.learner)
    grades, compared = with_copy_flags(copies, grades)
    enforced = planned_limits(grading.limits, sandboxed=grading.sandbox != "off")
    run = {
        "sandbox": {"sandboxed": grading.sandbox != "off", "enforced": list(enforced)},
        "probes": {
            "seed": seed,
            "cases": len(probes.cases) if probes else 0,
            "audit": {"seed": audit_seed, "cases": len(audit.cases)} if audit else None,
        },
        "copies": compared,
    }
    return GradedClass(tuple(labs), grades, run, tuple(enforced))


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
    found = survey(roster, options.names)
    entries = found.submissions
    if not any(entry.kind in ("workspace", "archive") for entry in entries):
        listed = [(e.learner, e.why) for e in entries] + [(s.name, s.why) for s in found.skipped]
        shown = "; ".join(f"{clean(name)}: {clean(why)}" for name, why in listed) or _(
            "it is empty"
        )
        raise EmptyRoster(
            _("{roster}: no practice workspace to grade ({entries})").format(
                roster=roster, entries=shown
            )
        )
    graded = grade_submissions(
        manifest, kit, roster, entries, options, progress_stream, hide=(roster, gradebook)
    )
    grades, run = graded.grades, dict(graded.run)
    run["names"] = (
        {"pattern": options.names.pattern, "unmatched": found.unnamed} if options.names else None
    )
    lab_ids = [lab.id for lab in graded.labs]
    csv_path, json_path = write_gradebook(
        gradebook,
        gradebook_csv(lab_ids, grades),
        gradebook_json(manifest.chapter, grades, run),
    )
    _print_summary(manifest, grades, csv_path, json_path, graded.enforced, out)
    for line in found.closing(len(grades)):
        print(line, file=out)
    return grades


def _print_summary(
    manifest: Manifest,
    grades: Sequence[Grade],
    csv_path: Path,
    json_path: Path,
    enforced: Sequence[str],
    out: TextIO,
) -> None:
    graded = sum(g.status != Status.SKIPPED for g in grades)
    said = _("Graded {graded} workspace(s) of chapter {chapter} ({skipped} skipped): {csv}, {json}")
    print(
        said.format(
            graded=graded,
            chapter=manifest.chapter,
            skipped=len(grades) - graded,
            csv=csv_path,
            json=json_path,
        ),
        file=out,
    )
    for line in enforced:
        print(_("  limits: {limit}").format(limit=line), file=out)
    for row in grades:
        print(row_line(row), file=out)


def row_line(row: Grade) -> str:
    """A row of the summary: the learner, the status, what it earned, each lab's counts and
    the first reason."""
    counts = " ".join(_lab_counts(lab) for lab in row.labs)
    note = f"  {row.note}" if row.note else ""
    status = pad(row.status.label, 8)
    return f"  {row.learner:<24} {status} {row.score}/{row.total}  {counts}{note}"


def _lab_counts(lab: LabGrade) -> str:
    """``3/3·51/53``: a lab's tests and probe cases in a row of the summary (tests alone
    without probes); the row's own figure before them is what it earned."""
    tests = f"{lab.passed}/{lab.total}"
    return f"{tests}·{lab.agreed}/{lab.cases}" if lab.cases else tests
