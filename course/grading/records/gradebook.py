"""The gradebook: a row per learner folder, its CSV and JSON forms, written atomically.

Every row says why (a reason per lab, a message per test, flags for the instructor). Learner text
is stripped of control characters before it reaches a file or a terminal (a message's line
breaks are kept in the files, ``clean_lines``), and a CSV cell a
spreadsheet would read as a formula gets a ``'`` in front. Instructor tests' text stays out of the
CSV and the terminal (reasons come from ``engine.for_learners``). A row's ``score`` is the grade
every door shows (``LabResult.score``): each lab's points when it passed whole, tests, instructor
tests and probe cases; ``max_score`` what the labs graded are worth. A forged report earns nothing.
"""

from __future__ import annotations

import csv
import io
import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from itertools import chain, count
from pathlib import Path
from typing import Any

from ...harness.manifest import Lab
from ...harness.results import CheckpointResult, LabResult
from ...locale import gettext as _
from ...locale import ngettext, unquoted
from ...sandboxed.status import Status, worst
from ...sandboxed.untrusted import escape
from ..intake.safefs import atomic_write
from ..verdict.probes import AUDIT_MARK
from .copies import Prints
from .outputs import output_paths

FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")  # OWASP's CSV injection guidance


def spreadsheet_safe(cell: object) -> object:
    """A CSV cell no spreadsheet runs: text starting like a formula gets a ``'`` in front."""
    if isinstance(cell, str) and cell.startswith(FORMULA_STARTS):
        return "'" + cell
    return cell


def clean(text: str) -> str:
    """``text`` on one line, non-printable characters escaped (``untrusted.escape``); never cut:
    learner text is cut once, where it enters (``untrusted.safe_name`` or ``safe_text``)."""
    return escape(text, keep="")


def clean_lines(text: str) -> str:
    """``text`` with each line ``clean``-ed and its line breaks kept (a CSV cell quotes them, JSON
    writes ``\\n``): a test's message or a note of several lines stays readable."""
    return "\n".join(clean(line).rstrip() for line in text.strip("\r\n").splitlines())


def one_line(text: str) -> str:
    """``text`` on one terminal line: its lines joined with `` | ``."""
    return " | ".join(line.strip() for line in text.splitlines() if line.strip())


def encodable(value: Any) -> Any:
    """``value`` with every string UTF-8 can write: one holding a lone surrogate (a file name
    that is not UTF-8, as ``os.listdir`` gives it) is ``clean``-ed, so no writer fails on it."""
    if isinstance(value, str):
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            return clean(value)
        return value
    if isinstance(value, Mapping):
        return {encodable(key): encodable(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [encodable(item) for item in value]
    return value


def json_fields(item: object, names: str) -> dict[str, Any]:
    """``item``'s attributes ``names`` (space-separated), in that order, tuples as lists."""
    values = {name: getattr(item, name) for name in names.split()}
    return {name: list(v) if isinstance(v, tuple) else v for name, v in values.items()}


@dataclass(frozen=True)
class LabGrade:
    """One lab of one learner."""

    id: str
    passed: int
    total: int
    status: Status
    reason: str = ""
    agreed: int = 0
    cases: int = 0
    probes: Mapping[str, Any] | None = None
    points: int = 0  # what the lab is worth (``LabResult.points``)
    score: int = 0  # what it earned: its points when it passed whole (``LabResult.score``)
    credit: Mapping[str, Any] | None = None  # what per-lab credit decided (``Credit.to_json``)

    def to_json(self) -> dict[str, Any]:
        data = json_fields(self, "id passed total agreed cases points score status reason")
        if self.probes is not None:
            data["probes"] = dict(self.probes)
        if self.credit is not None:
            data["credit"] = dict(self.credit)
        return data


@dataclass(frozen=True)
class Grade:
    """One learner's row."""

    learner: str
    workspace: str
    status: Status
    passed: int  # the focused tests that passed (what the report says; see score)
    total: int
    labs: tuple[LabGrade, ...]
    problems: tuple[str, ...] = ()
    notes: tuple[str, ...] = ()
    flags: tuple[str, ...] = ()
    tests: tuple[Mapping[str, Any], ...] = ()
    limits: tuple[str, ...] = ()  # what the sandbox enforced
    source: str = ""  # how the submission arrived: folder, zip, tar.gz…
    commit: str = ""  # the git commit graded
    scaffold: tuple[str, str] | None = None  # (began from, the kit's now) when they differ
    student: Mapping[str, str] | None = None  # the class list's id, name and email (classlist.py)
    late: bool = False  # the platform marked the submission late (``late`` of ``--names``)
    hints: Mapping[str, int] = field(default_factory=dict)
    """Lab id → the highest hint level the learner opened: information, never a penalty."""
    graded: bool = True
    """False for a row whose files were never graded (nothing handed in, an archive refused, a
    workspace that could not be read): its score is no grade, and no export gives it one."""
    # The lab code's fingerprints (classroom.py), and the result as learners may see it
    # (engine.for_learners) for gradescope.py; None when nothing was graded.
    prints: Prints | None = field(default=None, compare=False, repr=False)
    shown: CheckpointResult | None = field(default=None, compare=False, repr=False)

    @property
    def score(self) -> int:
        """The grade: the points of the labs that passed whole."""
        return sum(lab.score for lab in self.labs)

    @property
    def max_score(self) -> int:
        """What the labs graded are worth together."""
        return sum(lab.points for lab in self.labs)

    @property
    def scaffold_cell(self) -> str:
        """The CSV's ``scaffold``: '' when the workspace began from the kit's scaffold."""
        if self.scaffold is None:
            return ""
        began, now = self.scaffold
        return _("began from {began}; the kit's is {now}").format(began=began, now=now)

    @property
    def known_as(self) -> str:
        """The learner as the instructor knows them: with a class list, the student's name and
        the row's (``Ada Lovelace (lovelaceada)``); else, or where the two agree, the row's."""
        name = (self.student or {}).get("name", "")
        if not name or name == self.learner or not self.workspace:  # the list's row: its name
            return self.learner
        return _("{name} ({learner})").format(name=name, learner=self.learner)

    @property
    def flags_cell(self) -> str:
        """The CSV's ``flags``: each flag, listed the edition's way (a full-width semicolon in
        Chinese)."""
        return _("; ").join(self.flags)

    @property
    def agreed(self) -> int:
        return sum(lab.agreed for lab in self.labs)

    @property
    def cases(self) -> int:
        return sum(lab.cases for lab in self.labs)

    @property
    def note(self) -> str:
        """The first reason: a problem, else why the first failing lab failed, else a note."""
        broken = (Status.FAILED, Status.TIMEOUT, Status.ERROR)  # a row read back holds text
        failing = [lab.reason for lab in self.labs if lab.reason and lab.status in broken]
        pending = [lab.reason for lab in self.labs if lab.reason and lab.status not in broken]
        reasons = [*self.problems, *failing, *self.notes, *pending]
        return reasons[0] if reasons else ""

    @property
    def score_cell(self) -> int | str:
        """The score as the CSV exports write it: '' for a row not graded."""
        return self.score if self.graded else ""

    def to_json(self) -> dict[str, Any]:
        names = "learner workspace status graded score max_score passed total agreed cases"
        head = json_fields(self, names)
        if not self.graded:
            head["score"] = None
        tail = json_fields(self, "note problems notes flags tests limits source commit")
        began = dict(zip(("began", "kit"), self.scaffold, strict=True)) if self.scaffold else None
        labs = {"labs": [lab.to_json() for lab in self.labs]}
        student = {"student": dict(self.student) if self.student else None, "late": self.late}
        return head | labs | tail | {"scaffold": began, "hints": dict(self.hints)} | student


def lab_reason(lab: LabResult) -> str:
    """Why a lab did not pass: its worst test's message, else its probes' first difference, else
    the other lab's test it is charged with; for a lab that passes, the labs its own failures
    are charged to (per-lab credit, ``LabResult.credit``), if any."""
    credit = lab.credit
    if lab.status == Status.PASSED:
        if credit is None or not credit.through:
            return ""
        said = _("passes with the reference's code for {labs} in place of this learner's")
        return clean(said.format(labs=_(", ").join(f"Lab {id}" for id in credit.through)))
    if credit is not None and credit.charged and lab.shown_status == Status.PASSED:
        charge = credit.charged[0]
        said = _(
            "charged: Lab {lab}'s {test} fails with this lab's code and passes with the "
            "reference's in its place"
        )
        return clean(said.format(lab=charge.lab, test=charge.name))
    if lab.tests_status != Status.PASSED:
        test = next((t for t in lab.tests if t.status == lab.tests_status), None)
        if test is not None:
            said = _("{test}: {message}").format(test=test.name, message=test.message)
            return clean_lines(said)
    if lab.probes is not None and not lab.probes.agree:
        # the case, its input and its replay command, on one line, as plain text (a terminal,
        # a spreadsheet): the case's label without its code spans' backticks, its input as data
        said, *inputs = lab.probes.difference.splitlines() or [""]
        case = " | ".join([unquoted(said.strip()), *(line.strip() for line in inputs)])
        status = lab.probes.status.label
        if lab.tests_status == Status.PASSED:
            said = _(
                "the test report says {passed}/{total} tests passed, but probes {status}: {case}"
            )
            return clean(
                said.format(passed=len(lab.tests), total=lab.total, status=status, case=case)
            )
        return clean(_("probes {status}: {case}").format(status=status, case=case))
    if lab.withheld is not None and lab.withheld != Status.PASSED:
        said = _("an instructor test {status} (its message is in the JSON report only)")
        return said.format(status=lab.withheld.label)
    return ""


CASES_NAMED = 10
"""Of a lab's disagreeing cases, those a note names by id (the rest counted)."""


def _named(ids: Sequence[str]) -> str:
    """``11.3#001, 11.3#007``, at most ``CASES_NAMED``, then how many more."""
    shown = _(", ").join(ids[:CASES_NAMED])
    if len(ids) > CASES_NAMED:
        shown += " " + _("and {count} more").format(count=len(ids) - CASES_NAMED)
    return shown


def weaker_tests(lab: LabResult) -> str:
    """A neutral note when a lab's focused tests pass while some of its probe cases disagree:
    the tests are weaker than the probes, which is no evidence of anything ('' otherwise). It
    names the cases it counts (an assignment's own case by its id alone, never its seed)."""
    if lab.tests_status != Status.PASSED or lab.probes is None or lab.probes.agree:
        return ""
    if lab.probes.status == Status.PENDING:  # not written yet: its reason says so, no note
        return ""
    failing = lab.probes.failing
    shipped = [case for case in failing if AUDIT_MARK not in case]
    audit = [case.partition(AUDIT_MARK)[0] for case in failing if AUDIT_MARK in case]
    wrong = lab.probes.cases - lab.probes.agreed
    if wrong:
        said = ngettext(
            "Lab {lab}: focused tests pass; {count} of {cases} cases disagrees: {ids}",
            "Lab {lab}: focused tests pass; {count} of {cases} cases disagree: {ids}",
            wrong,
        )
        note = said.format(lab=lab.lab.id, count=wrong, cases=lab.probes.cases, ids=_named(shipped))
        if audit:
            more = _("and of the cases drawn for the assignment: {ids}")
            note = _("{said}; {more}").format(said=note, more=more.format(ids=_named(audit)))
        return note
    said = _(
        "Lab {lab}: focused tests pass and every shipped case agrees; cases drawn for the "
        "assignment disagree: {ids}"
    )
    return said.format(lab=lab.lab.id, ids=_named(audit))


def graded_row(
    learner: str,
    workspace: str,
    result: CheckpointResult,
    flags: Sequence[str],
    instructor: Sequence[str] = (),
    limits: Sequence[str] = (),
    public: CheckpointResult | None = None,
) -> Grade:
    """A learner's row: per-test messages from ``result``, reasons and notes from ``public``
    (as learners may see it; default ``result``); ``instructor``: instructor tests' nodeids."""
    shown = public if public is not None else result
    # counts and grade from the whole result (instructor tests included); text as learners see it
    labs = tuple(
        LabGrade(
            lab.lab.id,
            lab.passed,
            lab.total,
            lab.status,
            lab_reason(seen),
            lab.agreed,
            lab.cases,
            seen.probes.to_json() if seen.probes is not None else None,
            lab.points,
            lab.score,
            seen.credit.to_json() if seen.credit is not None else None,
        )
        for lab, seen in zip(result.required, shown.required, strict=True)
    )
    weaker = [weaker_tests(lab) for lab in result.required]
    tests = tuple(
        {
            "lab": test.lab,
            "name": clean(test.name),
            "status": test.status,
            "message": clean_lines(test.message),
            "instructor": test.nodeid in instructor,
        }
        for test in result.tests
    )
    problems = tuple(clean_lines(p) for p in shown.problems)
    return Grade(
        learner=clean(learner),
        workspace=clean(workspace),
        status=worst([lab.status for lab in labs] + [Status.ERROR] * bool(problems)),
        passed=result.passed,
        total=result.total,
        labs=labs,
        problems=problems,
        notes=tuple(clean_lines(n) for n in [*shown.notes, *filter(None, weaker)]),
        flags=tuple(dict.fromkeys(flags)),
        tests=tests,
        limits=tuple(limits),
    )


def ungraded_row(
    learner: str,
    workspace: str,
    labs: Sequence[Lab],
    status: Status,
    why: str,
    flags: Sequence[str] = (),
) -> Grade:
    """A row for a submission that was not graded (``Grade.graded`` false): skipped (nothing
    to grade), missing (a student of the class list who handed in nothing) or an error (it could
    not be read)."""
    grades = tuple(
        LabGrade(
            lab.id,
            0,
            lab.tests,
            status,
            clean(why) if status not in (Status.SKIPPED, Status.MISSING) else "",
            points=0 if lab.optional else lab.points,
        )
        for lab in labs
    )
    return Grade(
        learner=clean(learner),
        workspace=clean(workspace),
        status=status,
        passed=0,
        total=sum(lab.total for lab in grades),
        labs=grades,
        problems=(clean(why),),
        flags=tuple(flags),
        graded=False,
    )


def with_unique_learners(grades: Sequence[Grade]) -> list[Grade]:
    """The rows in learner order, each learner's name its row's key: of rows named alike, the one
    graded keeps the name, the others (skipped last) become ``ben#2``, ``ben#3``… everywhere."""
    order = sorted(grades, key=lambda g: (g.learner, g.status == Status.SKIPPED, g.workspace))
    taken = {grade.learner for grade in order}
    seen: set[str] = set()
    unique = []
    for grade in order:
        key = grade.learner
        if key in seen:
            key = next(
                f"{grade.learner}#{n}" for n in count(2) if f"{grade.learner}#{n}" not in taken
            )
            taken.add(key)
        seen.add(key)
        unique.append(replace(grade, learner=key))
    return unique


def _lab_cells(lab: LabGrade | None) -> tuple[object, object, object]:
    """A lab's ``lab``, ``cases`` and ``status`` cells (``3/3``, ``51/53`` or '' without cases)."""
    if lab is None:
        return "", "", ""
    return f"{lab.passed}/{lab.total}", f"{lab.agreed}/{lab.cases}" if lab.cases else "", lab.status


def hints_cell(hints: Mapping[str, int]) -> str:
    """The hint levels opened, ``11.2:1 11.3:3`` (empty: none): information, never a penalty."""
    return " ".join(f"{lab}:{level}" for lab, level in hints.items())


def gradebook_csv(lab_ids: Sequence[str], grades: Sequence[Grade]) -> str:
    per_lab = [f"{column} {i}" for column in ("lab", "cases", "status") for i in lab_ids]
    head = ["learner", "status", "score", "max_score", "passed", "total", "agreed", "cases"]
    tail = ["flags", "note", "workspace", "source", "commit", "scaffold", "hints", "late"]
    # with a class list, its columns at the end
    student_keys = ("id", "name", "email") if any(grade.student for grade in grades) else ()
    people = [f"student_{key}" for key in student_keys]
    rows: list[list[object]] = [[*head, *per_lab, *tail, *people]]
    for grade in grades:
        by_id = {lab.id: lab for lab in grade.labs}
        columns = zip(*(_lab_cells(by_id.get(i)) for i in lab_ids), strict=True)
        rows.append(
            [grade.learner, grade.status, grade.score_cell, grade.max_score]
            + [grade.passed, grade.total]
            + [grade.agreed, grade.cases, *chain.from_iterable(columns)]
            + [grade.flags_cell, grade.note, grade.workspace, grade.source, grade.commit]
            + [grade.scaffold_cell, hints_cell(grade.hints), "late" if grade.late else ""]
            + [(grade.student or {}).get(key, "") for key in student_keys]
        )
    buffer = io.StringIO()
    csv.writer(buffer, lineterminator="\n").writerows(
        [spreadsheet_safe(encodable(cell)) for cell in row] for row in rows
    )
    return buffer.getvalue()


def gradebook_json(chapter: str, grades: Sequence[Grade], run: Mapping[str, Any]) -> str:
    payload = {"chapter": chapter, **run, "learners": [g.to_json() for g in grades]}
    return json.dumps(encodable(payload), indent=2, ensure_ascii=False) + "\n"


def is_gradebook_name(name: str) -> bool:
    """``gradebook.csv``, ``gradebook-2.json``, ``gradebook-summary.html``,
    ``gradebook-summary-anonymous.html``, ``gradebook-canvas.csv``…: names the gradebook and the
    files beside it may be written to (``outputs.Outputs``)."""
    outputs = r"\.(csv|json)|-summary(-anonymous)?\.html|-(canvas|moodle)\.csv"
    return re.fullmatch(rf"gradebook-?\d*({outputs})", name) is not None


def is_feedback_folder(name: str) -> bool:
    """``gradebook-feedback``, ``gradebook-2-feedback``: the feedback files' folder."""
    return re.fullmatch(r"gradebook-?\d*-feedback", name) is not None


def gradebook_paths(directory: Path) -> tuple[Path, Path]:
    """Where the gradebook goes in ``directory`` (``outputs.output_paths``): ``gradebook.csv``
    and ``.json``, else the first ``gradebook-N.*`` pair whose outputs' names are all free."""
    outputs = output_paths(directory)
    return outputs.csv, outputs.json


def encoded(csv_text: str, json_text: str) -> tuple[bytes, bytes]:
    """The CSV with a byte order mark, without which Excel reads UTF-8 (a Chinese name) as a
    code page; the JSON as UTF-8."""
    return csv_text.encode("utf-8-sig"), json_text.encode("utf-8")


def write_gradebook(directory: Path, csv_text: str, json_text: str) -> tuple[Path, Path]:
    """Write both files atomically at ``gradebook_paths``; both are encoded before either is
    written, so one is never left older than the other."""
    directory.mkdir(parents=True, exist_ok=True)
    paths = gradebook_paths(directory)
    csv_data, json_data = encoded(csv_text, json_text)
    atomic_write(paths[0], csv_data)
    atomic_write(paths[1], json_data)
    return paths
