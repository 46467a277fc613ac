"""The class list (``--class-list FILE``): who is enrolled, joined to the roster's rows.

A CSV with the columns ``id``, ``name`` and ``email`` (any order, more columns ignored; Excel's
byte order mark read). A row's learner is joined to the one student whose id, email, the email's
part before ``@``, or name (either order, letters and digits only, ``Lovelace, Ada`` is
``lovelaceada``) it equals, ignoring case; each student who submitted nothing gets a row.
"""

from __future__ import annotations

import csv
import io
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from ...harness.manifest import Lab
from ...locale import gettext as _
from ...sandboxed.marker import WorkspaceError
from ...sandboxed.status import Status
from .gradebook import Grade, clean, ungraded_row

COLUMNS = ("id", "name", "email")
MAX_BYTES = 8 * 1024 * 1024  # a class list of 200 is a few KB; a term of thousands still fits


class ClassListError(WorkspaceError):
    """A class list that cannot be read; the message names the file, line and field."""


@dataclass(frozen=True)
class Student:
    """One enrolled student, as the class list gives them."""

    id: str
    name: str
    email: str

    def spellings(self) -> set[str]:
        """Every spelling a roster entry may name this student by (``folded``)."""
        local = self.email.partition("@")[0]
        parts = self.name.replace(",", " ").split()
        names = {" ".join(parts), " ".join(reversed(parts))}
        return {folded(key) for key in (self.id, self.email, local, *names)} - {""}

    def to_json(self) -> dict[str, str]:
        return {"id": self.id, "name": self.name, "email": self.email}


def folded(text: str) -> str:
    """``text`` compared loosely: letters and digits only (``@`` and ``.`` kept), case folded."""
    text = unicodedata.normalize("NFKC", text).casefold()
    return "".join(c for c in text if c.isalnum() or c in "@.")


def read_class_list(path: Path) -> tuple[Student, ...]:
    """The students of ``path``; ``ClassListError`` naming the line and field that is wrong."""
    try:
        with path.open("rb") as file:  # no more than the cap is read, whatever the file's size
            data = file.read(MAX_BYTES + 1)
    except OSError as error:
        said = _("{path}: cannot read the class list ({reason})")
        raise ClassListError(said.format(path=path, reason=error.strerror or error)) from None
    if len(data) > MAX_BYTES:
        said = _("{path}: a class list is at most {size} MB")
        raise ClassListError(said.format(path=path, size=MAX_BYTES // 2**20))
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as error:
        said = _("{path}: not UTF-8 (byte {at}); save the class list as CSV UTF-8")
        raise ClassListError(said.format(path=path, at=error.start)) from None
    reader = csv.DictReader(io.StringIO(text, newline=""))
    header = [folded(name) for name in reader.fieldnames or ()]
    missing = [column for column in COLUMNS if column not in header]
    if missing:
        said = _(
            "{path}: line 1: the class list has no column {columns} (it needs id, name, email)"
        )
        raise ClassListError(said.format(path=path, columns=", ".join(missing)))
    reader.fieldnames = header
    students: list[Student] = []
    seen: dict[str, int] = {}
    for row in reader:
        line = reader.line_num
        values = {column: clean((row.get(column) or "").strip()) for column in COLUMNS}
        if not values["id"]:
            said = _("{path}: line {line}: the field id is empty")
            raise ClassListError(said.format(path=path, line=line))
        if values["id"] in seen:
            said = _("{path}: line {line}: id {id} is already on line {first}")
            first = seen[values["id"]]
            raise ClassListError(said.format(path=path, line=line, id=values["id"], first=first))
        seen[values["id"]] = line
        students.append(Student(**values))
    return tuple(students)


@dataclass(frozen=True)
class Joined:
    """The rows joined to the class list: each row with its student, and what did not join."""

    grades: list[Grade]
    unlisted: tuple[str, ...]  # learners of the roster no student of the list matched
    ambiguous: tuple[str, ...]  # learners two students of the list could be
    contested: tuple[tuple[str, tuple[str, ...]], ...] = ()
    """Students two or more rows could be (the student, those rows): none of them joins, and
    nothing is exported for the student, so no row named like a classmate takes her grade."""


def join_class_list(
    grades: Sequence[Grade], students: Sequence[Student], labs: Sequence[Lab]
) -> Joined:
    """Each row with the one student it is (``Grade.student``), when it is that student's only
    row: a row named ``ben#2`` (an older submission) never joins; a student two rows could be is
    contested (listed, never exported); every student no row joined gets a row of their own,
    saying they submitted nothing (or which rows name them)."""
    owners: dict[str, dict[str, Student]] = {}
    for student in students:
        for key in student.spellings():
            owners.setdefault(key, {})[student.id] = student
    candidates: dict[str, list[Student]] = {}
    claims: dict[str, list[str]] = {}  # a student's id → the rows that are only theirs
    for grade in grades:
        if "#" not in grade.learner:
            found = list(owners.get(folded(grade.learner.split("/")[0]), {}).values())
            candidates[grade.learner] = found
            if len(found) == 1:
                claims.setdefault(found[0].id, []).append(grade.learner)
    joined: list[Grade] = []
    unlisted: list[str] = []
    ambiguous: list[str] = []
    for grade in grades:
        found = candidates.get(grade.learner, [])
        if len(found) == 1 and len(claims[found[0].id]) == 1:
            joined.append(replace(grade, student=found[0].to_json()))
            continue
        if len(found) > 1:
            ambiguous.append(grade.learner)
        elif not found and grade.status != Status.SKIPPED and "#" not in grade.learner:
            unlisted.append(grade.learner)
        joined.append(grade)
    learners = {grade.learner for grade in joined}
    contested: list[tuple[str, tuple[str, ...]]] = []
    for student in students:
        rows = claims.get(student.id, [])
        if len(rows) == 1:
            continue
        key = student.name or student.id
        key = key if key not in learners else f"{key} ({student.id})"
        if rows:
            shown = _("{name} ({id})").format(name=student.name, id=student.id)
            contested.append((shown, tuple(rows)))
            said = _("{count} entries name this student, so none is exported: {learners}")
            why = said.format(count=len(rows), learners=_(", ").join(rows))
            row = ungraded_row(key, "", labs, Status.ERROR, why)
        else:
            row = ungraded_row(key, "", labs, Status.MISSING, _("submitted nothing"))
        joined.append(replace(row, student=student.to_json()))
    return Joined(joined, tuple(unlisted), tuple(ambiguous), tuple(contested))


def without_class_list(grades: Sequence[Grade]) -> list[Grade]:
    """``grades`` as before a join: no student on any row, no row the join made for a student
    (a regrade joins the class list again, to rows that may have changed)."""
    return [
        replace(grade, student=None)
        for grade in grades
        if not (grade.student and not grade.workspace and not grade.graded)
    ]
