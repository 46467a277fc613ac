"""The gradebook as an LMS imports it: Canvas's and Moodle's grade import CSVs.

Only rows joined to the class list (``classlist.py``) are exported, one per student. A row that
was not graded exports a blank cell, which the LMS leaves as it was (a grade entered by hand is
not overwritten); with ``zero_missing`` a student who handed in nothing to grade gets 0.
Canvas's import reads ``Student``, ``ID``, ``SIS User ID``, ``SIS Login ID`` and ``Section`` and
then one column per assignment (matched by ``Name (id)`` as its own export writes it, else a new
assignment); the class list's id goes to ``SIS User ID`` and its email to ``SIS Login ID``.
Moodle's CSV import maps a user by a column chosen on its form (``ID number`` or ``Email
address`` here), a grade item by another and its feedback by a third. Both files are UTF-8
without a byte order mark, as the LMSes write them.
"""

from __future__ import annotations

import csv
import io
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from ...locale import gettext as _
from ...sandboxed.status import Status
from .gradebook import Grade, spreadsheet_safe

CANVAS_COLUMNS = ("Student", "ID", "SIS User ID", "SIS Login ID", "Section")
MOODLE_COLUMNS = ("ID number", "Email address")


def assignment_column(chapter: str) -> str:
    """The grade column's header in both exports (rename it to the LMS's assignment)."""
    return f"Chapter {chapter}"


def _table(rows: Sequence[Sequence[object]]) -> str:
    buffer = io.StringIO()
    csv.writer(buffer, lineterminator="\r\n").writerows(
        [spreadsheet_safe(cell) for cell in row] for row in rows
    )
    return buffer.getvalue()


def _students(grades: Sequence[Grade]) -> list[tuple[dict[str, str], Grade]]:
    """Each joined row with its student, in the class list's id order."""
    joined = [(dict(grade.student), grade) for grade in grades if grade.student]
    return sorted(joined, key=lambda pair: pair[0]["id"])


@dataclass(frozen=True)
class Exports:
    """The instructor's choices for the LMS imports."""

    zero_missing: bool = False  # --zero-missing: 0, not blank, for who handed in nothing
    canvas_column: str = ""  # --canvas-column: an existing assignment's ``Name (id)``


def canvas_column(text: str) -> str:
    """A ``--canvas-column``: an assignment's header as Canvas's own export writes it,
    ``Week 3 lab (12345)`` (a header without its id makes Canvas create a new assignment)."""
    found = re.fullmatch(r"\s*(?P<name>\S.*?)\s+\((?P<id>\d+)\)\s*", text)
    if found is None:
        said = _(
            "--canvas-column {text}: not an assignment's header as Canvas's export writes it, "
            "NAME (ID), e.g. 'Week 3 lab (12345)'"
        )
        raise ValueError(said.format(text=repr(text)))
    return f"{found['name']} ({found['id']})"


def exported(grade: Grade, zero_missing: bool = False) -> int | str:
    """A row's cell in an export: its score when graded; else blank, or 0 with
    ``zero_missing`` for a student who handed in nothing to grade (never for a row that could
    not be read, which the instructor has to look at)."""
    if grade.graded:
        return grade.score
    return 0 if zero_missing and grade.status in (Status.SKIPPED, Status.MISSING) else ""


def feedback_cell(grade: Grade, titles: Mapping[str, str]) -> str:
    """What Moodle's feedback column says to the learner: the grade and each lab's status, in
    the roster's edition ('' for a row not graded: its grade is left as it was too)."""
    if not grade.graded:
        return ""
    said = _("Grade: {score}/{max_score}").format(score=grade.score, max_score=grade.max_score)
    labs = [
        _("Lab {lab} {title}: {status}").format(
            lab=lab.id, title=titles.get(lab.id, ""), status=lab.status.label
        )
        for lab in grade.labs
    ]
    return _("; ").join([said, *labs])


def canvas_csv(chapter: str, grades: Sequence[Grade], exports: Exports = Exports()) -> str:
    """Canvas's "Import grades" CSV: a row per student of the class list."""
    column = exports.canvas_column or assignment_column(chapter)
    rows: list[list[object]] = [[*CANVAS_COLUMNS, column]]
    for student, grade in _students(grades):
        cell = exported(grade, exports.zero_missing)
        rows.append([student["name"], "", student["id"], student["email"], "", cell])
    return _table(rows)


def moodle_csv(
    chapter: str,
    grades: Sequence[Grade],
    exports: Exports = Exports(),
    titles: Mapping[str, str] | None = None,
) -> str:
    """Moodle's "Import grades: CSV file": a row per student of the class list, the grade and
    its feedback (map the second to the grade item's feedback on Moodle's form)."""
    column = assignment_column(chapter)
    feedback = _("{column} feedback").format(column=column)
    rows: list[list[object]] = [[*MOODLE_COLUMNS, column, feedback]]
    for student, grade in _students(grades):
        cells = [exported(grade, exports.zero_missing), feedback_cell(grade, titles or {})]
        rows.append([student["id"], student["email"], *cells])
    return _table(rows)


def lms_exports(
    chapter: str, grades: Sequence[Grade], exports: Exports, titles: Mapping[str, str]
) -> tuple[bytes, bytes]:
    """Canvas's and Moodle's files, UTF-8 without a byte order mark, as the LMSes write them."""
    canvas = canvas_csv(chapter, grades, exports).encode("utf-8")
    return canvas, moodle_csv(chapter, grades, exports, titles).encode("utf-8")
