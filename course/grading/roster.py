"""Grading a class: each submission under a directory, graded on its own, into a gradebook.

``intake`` says what the directory holds. Each workspace is graded in a thread through
``engine.grade`` (learner code runs only confined), so one that cannot be read, hangs or crashes
costs its own row, never the run. Each row's lab code is fingerprinted as it is read
(``copies.py``); once every row is in, the class is compared (``classroom.py``).
"""

from __future__ import annotations

import re
import time
from collections import Counter
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import dataclass, field, replace
from functools import partial
from itertools import count
from pathlib import Path
from typing import Any, TextIO

from ..harness.editions import in_edition
from ..harness.manifest import Lab, Manifest
from ..harness.runner import Limits
from ..harness.style import is_terminal
from ..locale import gettext as _
from ..locale import tidy_filled
from ..sandboxed.columns import pad
from ..sandboxed.marker import WorkspaceError
from ..sandboxed.status import Status
from .confinement.sandbox import planned_limits, sandbox_status
from .intake.archives import Damaged, Refused
from .intake.folder import (
    GRADABLE,
    NothingToGrade,
    Submission,
    opened,
    survey,
    where,
    with_checkout,
    with_intake,
)
from .intake.gitrepo import nearest_checkout
from .intake.loose import LabFiles, Loose, loose_snapshot
from .intake.safefs import atomic_write, lstat_kind
from .intake.snapshot import workspace_snapshot
from .records.classlist import Joined, Student, join_class_list, without_class_list
from .records.classroom import CopyReport, with_copy_flags
from .records.classsummary import class_summary, summary_html
from .records.copies import Baseline, baseline, learner_prints
from .records.exports import Exports, lms_exports
from .records.feedback import write_feedback
from .records.gradebook import (
    Grade,
    clean,
    encoded,
    gradebook_csv,
    gradebook_json,
    gradebook_paths,
    graded_row,
    one_line,
    ungraded_row,
    with_unique_learners,
)
from .records.outputs import Writing, output_paths
from .records.regrade import belongs_to, merged, read_gradebook, row_named
from .verdict import probes as probing
from .verdict.assignment import file_name, kept_or_made, new_seed
from .verdict.engine import (
    GradingOptions,
    SandboxUnavailable,
    confinement_choice,
    for_learners,
    grade,
)


class EmptyRoster(WorkspaceError):
    """No folder of the roster holds a workspace."""


class OverBudget(WorkspaceError):
    """Reading a submission used up its whole deadline before its code ran."""


def within_deadline(options: GradingOptions, started: float) -> GradingOptions:
    """``options`` with what is left of the deadline since ``started`` (the grader's own work
    counts); ``OverBudget`` when nothing is left."""
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
    workspace_seconds: float | None = None  # see ``deadline``
    jobs: int = 2
    grading: GradingOptions = field(default_factory=lambda: GradingOptions(sandbox="required"))
    names: re.Pattern[str] | None = None  # --names: a learner's name in a platform's naming
    audit_seed: int | None = None  # --audit-seed: overrides the assignment file's
    assignment: Path | None = None  # --assignment FILE (default: beside the gradebook)
    class_list: tuple[Student, ...] = ()  # --class-list: rows joined to it, exports written
    only: str = ""  # --only: this learner's submissions regraded into the gradebook there
    exports: Exports = field(default_factory=lambda: Exports())  # the LMS imports' choices

    def labs(self, manifest: Manifest) -> list[Lab]:
        """The labs named, else the chapter's required labs."""
        return [manifest.lab(i) for i in self.lab_ids] or list(manifest.required_labs)

    def deadline(self, labs: Sequence[Lab]) -> float:
        """A workspace's: ``workspace_seconds``, else each test and lab's probes, plus 60 s."""
        if self.workspace_seconds is not None:
            return self.workspace_seconds
        return (sum(lab.tests for lab in labs) + len(labs)) * self.test_seconds + 60


def grade_entry(
    manifest: Manifest,
    kit: Path,
    roster: Path,
    entry: Submission,
    labs: Sequence[Lab],
    limits: Limits,
    options: GradingOptions,
    hide: Sequence[Path],
    copies: Baseline | None = None,
    started: float | None = None,
) -> Grade:
    """One row, fingerprinted against ``copies``; never raises for anything a learner folder
    holds or its code does. Reading the submission counts within its deadline, which runs from
    ``started`` (the learner folder's first workspace; else now)."""
    started = time.monotonic() if started is None else started
    if options.deadline_seconds is not None:  # no record is read past it either
        limits = replace(limits, deadline=started + options.deadline_seconds)
    workspace = where(roster, entry)

    def ungraded(status: Status, why: str, flags: Sequence[str] = ()) -> Grade:
        return with_intake(ungraded_row(entry.learner, workspace, labs, status, why, flags), entry)

    if entry.newer or entry.kind in ("skipped", "symlink"):
        return ungraded(
            Status.SKIPPED, entry.why, [_("symlink")] if entry.kind == "symlink" else []
        )
    if entry.kind in ("unreadable", "refused"):
        return ungraded(Status.ERROR, entry.why)
    lab_files = LabFiles.of(manifest)
    try:
        with opened(roster, entry, lab_files) as found:
            repository = None
            if isinstance(found, Loose):
                snapshot = loose_snapshot(manifest, kit, found, workspace)
            else:
                workspace = where(roster, entry, found)
                learner_paths = list(lab_files.paths.values())
                top = 1 if entry.kind == "workspace" else 0
                repository = nearest_checkout(found, top, learner_paths)
                snapshot = workspace_snapshot(manifest, kit, found)
        prints = learner_prints(copies, snapshot.learner) if copies is not None else None
        left = within_deadline(options, started)
        graded = grade(manifest, kit, snapshot, labs, limits, left, hide=hide)
    except Damaged as error:  # nothing in it unsafe: no flag
        return ungraded(Status.ERROR, str(error))
    except Refused as error:
        return ungraded(Status.ERROR, str(error), [_("refused archive")])
    except NothingToGrade as error:
        return ungraded(Status.SKIPPED, str(error))
    except OverBudget as error:
        return ungraded(Status.TIMEOUT, str(error))
    except RecursionError:  # a learner's file nested past a reader's depth
        return ungraded(Status.ERROR, _("nested too deep to be read"))
    except WorkspaceError as error:
        return ungraded(Status.ERROR, str(error))
    except Exception as error:  # a fault of the grader: still one row, never the run
        why = _("the grader failed on this workspace: {error}")
        return ungraded(Status.ERROR, why.format(error=f"{type(error).__name__}: {error}"))
    public = for_learners(graded.result, manifest, options.hidden)
    hidden = options.hidden
    instructor = [
        t.nodeid for t in graded.result.tests if hidden and hidden.holds(manifest, t.nodeid)
    ]
    flags = (*snapshot.flags, *graded.result.flags)
    row = graded_row(
        entry.learner, workspace, graded.result, flags, instructor, graded.enforced, public=public
    )
    row = with_checkout(row, repository, entry, snapshot.learner)
    row = replace(
        row, prints=prints, shown=public, scaffold=snapshot.scaffold, hints=snapshot.hints
    )
    if isinstance(found, Loose):  # graded in the kit's scaffold, and said so
        row = replace(row, source=f"{entry.source} (lab files)")
    return with_intake(row, entry)


def by_folder(entries: Sequence[Submission]) -> list[list[Submission]]:
    """``entries`` grouped by the roster entry they came from (a learner folder holding several
    workspaces is one group, graded in turn within one deadline), in their order."""
    groups: dict[str, list[Submission]] = {}
    for entry in entries:
        groups.setdefault(entry.entry.split("/")[0] or entry.learner, []).append(entry)
    return list(groups.values())


def show_progress(stream: TextIO, done: int, total: int, grade: Grade) -> None:
    """A progress bar on a terminal; one line per graded folder otherwise."""
    filled = round(20 * done / max(total, 1))
    said = _("{done}/{total} {learner}: {score}/{max_score} {status}")
    line = f"[{'#' * filled}{'-' * (20 - filled)}] " + said.format(
        done=done,
        total=total,
        learner=grade.learner,
        score=grade.score,
        max_score=grade.max_score,
        status=grade.status.label,
    )
    last = done == total
    stream.write(f"\r\033[K{line}" + "\n" * last if is_terminal(stream) else f"{line}\n")
    stream.flush()


@dataclass(frozen=True)
class GradedClass:
    """Every submission's row, what the run was (sandbox, probes, copies) and what held."""

    labs: tuple[Lab, ...]
    grades: list[Grade]
    run: dict[str, Any]  # gradebook.json's description of the run
    enforced: tuple[str, ...]  # what the sandbox enforced, plainly (the limits: lines)
    compared: CopyReport | None = None  # the copy check: its flags and groups
    probes: probing.ProbeSet | None = None  # the cases drawn, for the class summary
    audit: probing.ProbeSet | None = None  # the cases no workspace holds


def grade_submissions(
    manifest: Manifest,
    kit: Path,
    roster: Path,
    entries: Sequence[Submission],
    options: RosterOptions,
    progress_stream: TextIO,
    hide: Sequence[Path],
) -> GradedClass:
    """Grade ``entries`` (found under ``roster``) each on its own, hiding ``hide`` from learner
    code, and compare the class; ``SandboxUnavailable`` when a required sandbox cannot start."""
    grading = options.grading
    dropped = None
    if grading.sandbox == "required":
        bwrap, reason = sandbox_status(kit, (manifest.reference,))
        if bwrap is None:
            raise SandboxUnavailable(reason)
    elif grading.sandbox == "container":  # SandboxUnavailable when nothing confines here
        dropped = confinement_choice(manifest, kit, grading, hide).dropped
    labs = options.labs(manifest)
    seed = grading.seed if grading.seed is not None else manifest.probe_seed
    probes = probing.prepare(manifest, kit, labs, seed)
    # the assignment's seed, which no workspace holds: answers keyed to the shipped cases earn
    # nothing; a run given none (an autograder zip made before assignment files) draws its own
    audit_seed, audit = options.audit_seed, None
    if audit_seed is None:  # drawn for this run alone: never kept
        audit_seed = new_seed(seed)
        audit = probing.draw(manifest, kit, audit_seed) if probes is not None else None
        audit = audit.only([lab.id for lab in labs]) if audit is not None else None
    elif probes is not None:  # the assignment's: drawn once, then kept like the chapter's
        audit = probing.prepare(manifest, kit, labs, audit_seed)
    copies = baseline(manifest, kit, tuple(labs))
    grading = replace(grading, probes=probes, audit=audit, deadline_seconds=options.deadline(labs))
    limits = Limits(test_seconds=options.test_seconds)
    grades: list[Grade] = []
    grade_one = partial(grade_entry, manifest, kit, roster)

    def grade_folder(group: Sequence[Submission]) -> list[Grade]:
        """A learner folder's rows, in turn, all within the one deadline of the folder."""
        started = time.monotonic()
        return [grade_one(e, labs, limits, grading, hide, copies, started) for e in group]

    with ThreadPoolExecutor(max_workers=options.jobs) as pool:
        futures = [pool.submit(grade_folder, group) for group in by_folder(entries)]
        for future in as_completed(futures):  # in this thread, in turn
            for row in future.result():
                grades.append(row)
                show_progress(progress_stream, len(grades), len(entries), row)
    grades, compared = with_copy_flags(copies, with_unique_learners(grades))
    sandboxed = grading.sandbox != "off" and dropped is None
    enforced = planned_limits(grading.limits, sandboxed=sandboxed, dropped=dropped)
    run = {
        "sandbox": {"sandboxed": sandboxed, "enforced": list(enforced)},
        "probes": {
            "seed": seed,
            "cases": len(probes.cases) if probes else 0,
            "audit": {
                "seed": audit_seed,
                "cases": len(audit.cases),
                "assignment": str(options.assignment) if options.assignment else None,
            }
            if audit
            else None,
        },
        "copies": compared.to_json(),
    }
    return GradedClass(tuple(labs), grades, run, tuple(enforced), compared, probes, audit)


def assignment_path(folder: Path, chapter: str) -> Path:
    """The assignment file kept in ``folder``: ``assignment-11.toml``, else (where an entry of
    that name is a folder, a link or anything but a file) the first ``assignment-11-N.toml``
    that is a file or free, so an entry named like it never stops the run."""
    stem = file_name(chapter).removesuffix(".toml")
    for number in count(1):
        path = folder / (f"{stem}.toml" if number == 1 else f"{stem}-{number}.toml")
        if lstat_kind(path) in ("file", "missing"):
            return path
    raise AssertionError("unreachable")  # count() never ends


def with_assignment(
    manifest: Manifest, options: RosterOptions, folder: Path, out: TextIO
) -> RosterOptions:
    """``options`` with the assignment's audit seed: of ``options.assignment``, else of the
    assignment file in ``folder``, made there on first use (with ``--audit-seed``'s seed, if
    given) and announced; ``--audit-seed`` overrides a kept file's seed for this run."""
    path = options.assignment or assignment_path(folder, manifest.chapter)
    named = options.assignment is not None  # the instructor's own: used wherever it came from
    found, made = kept_or_made(
        path, manifest.chapter, manifest.probe_seed, options.audit_seed, named
    )
    if made:
        said = _("made {file}: keep it beside the gradebook to regrade")
        print(said.format(file=path), file=out)
    seed = options.audit_seed if options.audit_seed is not None else found.audit_seed
    return replace(options, audit_seed=seed, assignment=path)


def grade_roster(
    manifest: Manifest,
    kit: Path,
    roster: Path,
    gradebook: Path,
    options: RosterOptions,
    progress_stream: TextIO,
    out: TextIO,
) -> list[Grade]:
    """Grade every workspace under ``roster`` (``options.only``: one learner's, into the
    gradebook already there) and write the gradebook, its summary page, the feedback files and,
    with a class list, the LMS exports into ``gradebook`` (``SandboxUnavailable``, as above;
    ``EmptyRoster`` when no folder holds a workspace; ``GradebookError``)."""
    roster, gradebook = roster.resolve(), gradebook.resolve()
    found = survey(roster, options.names, LabFiles.of(manifest))
    entries = found.submissions
    earlier = None
    if options.only:
        earlier = read_gradebook(gradebook_paths(gradebook)[1], manifest.chapter)
        options = replace(options, only=row_named(options.only, earlier[1]))
        entries = tuple(entry for entry in entries if belongs_to(entry.learner, options.only))
        if not entries:
            said = _("{roster}: no submission of {learner}")
            raise EmptyRoster(said.format(roster=roster, learner=options.only))
    if not any(entry.kind in GRADABLE for entry in entries):
        listed = [(e.learner, e.why) for e in entries] + [(s.name, s.why) for s in found.skipped]
        shown = "; ".join(f"{clean(name)}: {clean(why)}" for name, why in listed)
        said = _("{roster}: no practice workspace to grade ({entries})")
        raise EmptyRoster(said.format(roster=roster, entries=shown or _("it is empty")))
    options = with_assignment(manifest, options, gradebook, out)
    graded = grade_submissions(
        manifest, kit, roster, entries, options, progress_stream, hide=(roster, gradebook)
    )
    pattern = options.names
    names = {"pattern": pattern.pattern, "unmatched": found.unnamed} if pattern else None
    grades, run = graded.grades, graded.run | {"names": names}
    if earlier is not None:
        old_run, old_rows = earlier
        grades = merged(old_rows, grades, options.only, old_run)
        run = old_run | {"regraded": {"learner": options.only, **graded.run}}
    bookkeeping: list[str] = []
    if options.class_list:
        joined = join_class_list(without_class_list(grades), options.class_list, graded.labs)
        grades = joined.grades
        bookkeeping = class_list_lines(joined)
    summary = class_summary(graded.labs, grades, graded.probes, graded.audit)
    gradebook.mkdir(parents=True, exist_ok=True)
    outputs = output_paths(gradebook)
    writing = Writing()
    csv_text = gradebook_csv([lab.id for lab in graded.labs], grades)
    json_text = gradebook_json(manifest.chapter, grades, run | {"summary": summary.to_json()})
    csv_data, json_data = encoded(csv_text, json_text)
    writing.write(str(outputs.csv), lambda: atomic_write(outputs.csv, csv_data))
    writing.write(str(outputs.json), lambda: atomic_write(outputs.json, json_data))
    page = summary_html(manifest.chapter, summary).encode("utf-8")
    anonymous = summary_html(manifest.chapter, summary, names=False).encode("utf-8")
    if writing.write(str(outputs.summary), partial(atomic_write, outputs.summary, page)):
        bookkeeping.append(_("The class at a glance: {page}").format(page=outputs.summary))
    if writing.write(str(outputs.anonymous), partial(atomic_write, outputs.anonymous, anonymous)):
        said = _("The same without names, to project in class: {page}")
        bookkeeping.append(said.format(page=outputs.anonymous))
    instructor = options.grading.hidden is not None  # learners see the kit's verdict text only
    feedback = write_feedback(outputs.feedback, manifest, grades, instructor, writing)
    if feedback is not None:
        bookkeeping.append(_("Feedback for each learner: {folder}").format(folder=feedback))
    if options.class_list:
        titles = {lab.id: lab.title for lab in in_edition(manifest).labs}
        exports = lms_exports(manifest.chapter, grades, options.exports, titles)
        for path, data in zip((outputs.canvas, outputs.moodle), exports, strict=True):
            writing.write(str(path), partial(atomic_write, path, data))
        said = _("LMS imports: {canvas} (Canvas), {moodle} (Moodle)")
        bookkeeping.append(said.format(canvas=outputs.canvas, moodle=outputs.moodle))
    head = graded_line(manifest.chapter, grades, outputs.csv, outputs.json)
    known = {row.learner: row.known_as for row in grades}
    copies = graded.compared.summary_lines(known) if graded.compared is not None else []
    rows, closing = grades, found.closing(len(grades))
    if options.only:
        said = _(
            "Regraded {learner} into {json}; the other rows and the copy check are the last "
            "whole run's"
        )
        head = tidy_filled(
            said.format(learner=known.get(options.only, options.only), json=outputs.json)
        )
        rows = [row for row in grades if belongs_to(row.learner, options.only)]
        copies, closing = [], []
    lines = [
        head,
        *(_("  limits: {limit}").format(limit=line) for line in graded.enforced),
        *(row_line(row) for row in rows),
        scale_line(graded.labs),
        *(f"  {line}" for line in copies),
        *bookkeeping,
        *not_graded_lines(rows, options),
        *closing,
        *writing.failed,
    ]
    print("\n".join(lines), file=out)
    failed = writing.closing()
    if failed is not None:
        raise failed
    return grades


def graded_line(chapter: str, grades: Sequence[Grade], csv: Path, json: Path) -> str:
    """The run's first line: how many rows were graded, how many were not by status (``not
    graded: skipped 2, missing 1``), and where the gradebook went."""
    done = sum(grade.graded for grade in grades)
    left = Counter(grade.status for grade in grades if not grade.graded)
    if not left:
        said = _("Graded {graded} workspace(s) of chapter {chapter}: {csv}, {json}")
        return said.format(graded=done, chapter=chapter, csv=csv, json=json)
    counted = _(", ").join(
        _("{status} {count}").format(status=status.label, count=left[status])
        for status in Status
        if status in left
    )
    said = _(
        "Graded {graded} workspace(s) of chapter {chapter} (not graded: {ungraded}): {csv}, {json}"
    )
    return said.format(graded=done, chapter=chapter, ungraded=counted, csv=csv, json=json)


def not_graded_lines(rows: Sequence[Grade], options: RosterOptions) -> list[str]:
    """The loud list of who was not graded and why: no grade is exported for them (but 0 for
    one who handed in nothing, with ``--zero-missing``)."""
    ungraded = [row for row in rows if not row.graded and "#" not in row.learner]
    if not ungraded:
        return []
    if not options.class_list:
        said = _("NOT GRADED ({count}): no grade for them in the gradebook; look at each:")
    elif options.exports.zero_missing:
        said = _(
            "NOT GRADED ({count}): exported as 0 where nothing was handed in to grade "
            "(--zero-missing), left blank otherwise; look at each:"
        )
    else:
        said = _(
            "NOT GRADED ({count}): exported blank, so the LMS keeps what it has "
            "(--zero-missing exports 0 for those who handed in nothing); look at each:"
        )
    lines = [said.format(count=len(ungraded))]
    return lines + [f"  {pad(row.known_as, 24)} {one_line(row.note)}" for row in ungraded]


def class_list_lines(joined: Joined) -> list[str]:
    """What the class list did not settle: learners it does not list, or lists twice."""
    lines = []
    if joined.unlisted:
        said = _("Not on the class list ({count}), not exported: {learners}")
        names = _(", ").join(joined.unlisted)
        lines.append(said.format(count=len(joined.unlisted), learners=names))
    if joined.ambiguous:
        said = _("Matching two students of the class list ({count}), not exported: {learners}")
        names = _(", ").join(joined.ambiguous)
        lines.append(said.format(count=len(joined.ambiguous), learners=names))
    if joined.contested:
        said = _(
            "Students named by more than one entry ({count}): nothing is exported for them; "
            "rename an entry (or --names) and run again:"
        )
        lines.append(said.format(count=len(joined.contested)))
        lines += [
            "  " + _("{entry}: {why}").format(entry=student, why=_(", ").join(rows))
            for student, rows in joined.contested
        ]
    return lines


def row_line(row: Grade) -> str:
    """A row of the summary: the learner, the status, the grade (``80/100``), each lab's tests
    and probe cases (``3/3·51/53``, tests alone without probes), a scaffold other than the
    kit's, and the first reason."""
    counts = " ".join(
        f"{lab.passed}/{lab.total}" + (f"·{lab.agreed}/{lab.cases}" if lab.cases else "")
        for lab in row.labs
    )
    scaffold = ""
    if row.scaffold is not None and row.scaffold[0] not in row.note:  # said once
        began = _("begun from scaffold {began}; the kit's is now {now}")
        scaffold = "  " + began.format(began=row.scaffold[0], now=row.scaffold[1])
    note = f"  {one_line(row.note)}" if row.note else ""
    status = pad(row.status.label, 8)
    widest = len(f"{row.max_score}/{row.max_score}")  # every score right-aligned to it
    grade = f"{row.score if row.graded else '-'}/{row.max_score}".rjust(widest)
    return f"  {pad(row.known_as, 24)} {status} {grade}  {counts}{scaffold}{note}"


def scale_line(labs: Sequence[Lab]) -> str:
    """What a score is: each lab's points, earned only when the lab passes whole."""
    graded = [lab for lab in labs if not lab.optional]
    total = sum(lab.points for lab in graded)
    if len({lab.points for lab in graded}) == 1:
        said = _(
            "Score: out of {total}, {points} for each of the {count} labs, earned only when "
            "the lab passes whole (tests, instructor tests and probe cases)"
        )
        return said.format(total=total, points=graded[0].points, count=len(graded))
    worth = _(", ").join(
        _("Lab {lab}: {points}").format(lab=lab.id, points=lab.points) for lab in graded
    )
    said = _(
        "Score: out of {total}, a lab's points earned only when it passes whole (tests, "
        "instructor tests and probe cases): {labs}"
    )
    return said.format(total=total, labs=worth)
