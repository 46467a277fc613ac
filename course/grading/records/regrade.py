"""Regrading one learner (``--only NAME``) into the gradebook a whole roster run wrote.

``read_gradebook`` reads that run's ``gradebook.json`` back into rows, strictly (a field that is
wrong is named with its row); ``merged`` puts the learner's new rows in place of their old ones
(``ben`` and the ``ben#2``… of their older submissions), every other row as it was. The copy
check is not run again for one learner: the other rows' flags and ``copies`` stay the last
whole run's.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from ...harness.results import Credit, ReportError
from ...locale import gettext as _
from ...sandboxed.marker import WorkspaceError
from ...sandboxed.status import Status
from ...sandboxed.tables import TableReader
from .classroom import CopyFlag, CopyReport
from .copies import Cut
from .gradebook import Grade, LabGrade

SOURCE = "gradebook.json"
MAX_BYTES = 256 * 1024 * 1024  # a term of thousands of rows, every failing case kept


class GradebookError(WorkspaceError):
    """A gradebook that cannot be read back; the message names the row and the field."""


def _status(f: TableReader, key: str) -> Status:
    value = f.text(key)
    if value not in set(Status):
        raise f.error(key, f"must be one of {', '.join(Status)}, got {value!r}")
    return Status(value)


def _pair(value: object, keys: Sequence[str], f: TableReader, key: str) -> dict[str, str] | None:
    """A table of ``keys``, each a string (the row's ``scaffold`` or ``student``), or null."""
    if value is None:
        return None
    if not isinstance(value, Mapping) or sorted(value) != sorted(keys):
        raise f.error(key, f"must be null or a table of {', '.join(keys)}")
    if not all(isinstance(value[k], str) for k in keys):
        raise f.error(key, "must hold strings")
    return {k: str(value[k]) for k in keys}


def _hints(f: TableReader) -> dict[str, int]:
    """The row's ``hints``: lab id → the highest hint level opened."""
    value = f.raw("hints", {})
    if not isinstance(value, Mapping) or not all(
        isinstance(lab, str) and isinstance(level, int) and not isinstance(level, bool)
        for lab, level in value.items()
    ):
        raise f.error("hints", "must be a table of lab ids to whole numbers")
    return dict(value)


def lab_from_json(data: object, where: str) -> LabGrade:
    f = TableReader(data, where, SOURCE, GradebookError)
    lab = LabGrade(
        id=f.text("id"),
        passed=f.count("passed"),
        total=f.count("total"),
        agreed=f.count("agreed"),
        cases=f.count("cases"),
        points=f.count("points"),
        score=f.count("score"),
        status=_status(f, "status"),
        reason=f.text("reason", allow_empty=True, default=""),
        probes=_probes(f),
        credit=_credit(f),
    )
    f.finish()
    return lab


def _credit(f: TableReader) -> dict[str, Any] | None:
    """A lab's ``credit`` (``results.Credit``'s JSON form), read by its own reader."""
    value = f.raw("credit", None)
    if value is None:
        return None
    try:
        return Credit.from_json(value, f"{f.where}.credit").to_json()
    except ReportError as error:
        raise GradebookError(f"{SOURCE}: {error}") from None


def _probes(f: TableReader) -> dict[str, Any] | None:
    value = f.raw("probes", None)
    if value is None:
        return None
    probes = TableReader(value, f"{f.where}.probes", SOURCE, GradebookError)
    read = {
        "cases": probes.count("cases"),
        "agreed": probes.count("agreed"),
        "status": str(probes.status("status")),
        "failures": list(probes.texts("failures", allow_empty=True)),
        "failing": list(probes.texts("failing", allow_empty=True)),
    }
    probes.finish()
    return read


def _test(data: object, where: str) -> dict[str, Any]:
    f = TableReader(data, where, SOURCE, GradebookError)
    test = {
        "lab": f.text("lab"),
        "name": f.text("name"),
        "status": str(f.status("status")),
        "message": f.text("message", allow_empty=True, default=""),
        "instructor": f.flag("instructor"),
    }
    f.finish()
    return test


def grade_from_json(data: object, where: str) -> Grade:
    """One row as ``Grade.to_json`` wrote it (its sums, note and score are recomputed)."""
    f = TableReader(data, where, SOURCE, GradebookError)
    for derived in ("score", "max_score", "agreed", "cases", "note"):
        f.raw(derived, None)
    tests = tuple(
        _test(t, f"{where}.tests[{i}]") for i, t in enumerate(f.tables("tests", allow_empty=True))
    )
    scaffold = _pair(f.raw("scaffold", None), ("began", "kit"), f, "scaffold")
    grade = Grade(
        learner=f.text("learner"),
        workspace=f.text("workspace", allow_empty=True, default=""),
        status=_status(f, "status"),
        passed=f.count("passed"),
        total=f.count("total"),
        labs=tuple(
            lab_from_json(lab, f"{where}.labs[{i}]") for i, lab in enumerate(f.tables("labs"))
        ),
        problems=f.texts("problems", allow_empty=True),
        notes=f.texts("notes", allow_empty=True),
        flags=f.texts("flags", allow_empty=True),
        tests=tests,
        limits=f.texts("limits", allow_empty=True),
        source=f.text("source", allow_empty=True, default=""),
        commit=f.text("commit", allow_empty=True, default=""),
        scaffold=(scaffold["began"], scaffold["kit"]) if scaffold else None,
        student=_pair(f.raw("student", None), ("id", "name", "email"), f, "student"),
        late=f.flag("late"),
        hints=_hints(f),
        # a gradebook written before the field: a row graded holds its tests' outcomes
        graded=f.flag("graded", default=bool(tests)),
    )
    f.finish()
    return grade


def read_gradebook(path: Path, chapter: str) -> tuple[dict[str, Any], list[Grade]]:
    """The run's description and the rows of the gradebook at ``path``; ``GradebookError``
    naming what is wrong (a missing file says to grade the whole roster first)."""
    try:
        with path.open("rb") as file:
            raw = file.read(MAX_BYTES + 1)
    except FileNotFoundError:
        said = _("{path}: no gradebook to regrade into; grade the whole roster first")
        raise GradebookError(said.format(path=path)) from None
    except OSError as error:
        said = _("{path}: cannot read the gradebook ({reason})")
        raise GradebookError(said.format(path=path, reason=error.strerror or error)) from None
    if len(raw) > MAX_BYTES:
        said = _("{path}: a gradebook is at most {size} MB")
        raise GradebookError(said.format(path=path, size=MAX_BYTES // 2**20))
    try:
        data = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as error:
        raise GradebookError(f"{path}: {error}") from None
    f = TableReader(data, "", str(path), GradebookError)
    if f.text("chapter") != chapter:
        raise f.error("chapter", f"is {data['chapter']!r}, not chapter {chapter}")
    rows = [grade_from_json(row, f"learners[{i}]") for i, row in enumerate(f.tables("learners"))]
    run = {key: value for key, value in data.items() if key not in ("chapter", "learners")}
    return run, rows


def belongs_to(name: str, learner: str) -> bool:
    """A row or submission ``name`` is ``learner``'s: their name, a workspace below it
    (``gus/practice-11``), or an older submission (``ben#2``)."""
    return name == learner or name.startswith((f"{learner}#", f"{learner}/"))


def row_named(only: str, rows: Sequence[Grade]) -> str:
    """The gradebook's name for ``--only ONLY``: ``only`` when a row is named so; else the name
    of the row joined to the class list's student whose id or name ``only`` is (``--only 张三``
    regrades ``zhangsan``, whom the terminal shows by both names, ``Grade.known_as``)."""
    if any(belongs_to(row.learner, only) for row in rows):
        return only
    for row in rows:
        student = row.student or {}
        if row.workspace and only in (student.get("id"), student.get("name")):
            return row.learner
    return only


def _cut(data: object, where: str) -> Cut:
    f = TableReader(data, where, SOURCE, GradebookError)
    return Cut(f.text("path"), f.text("function", allow_empty=True), f.text("limit"), 0, 0)


def copy_flags(run: Mapping[str, Any], learner: str) -> list[str]:
    """The row flags the whole run's copy check gave ``learner``, as ``gradebook.json``'s
    ``copies`` records them (``GradebookError`` naming a flag that is wrong)."""
    copies = run.get("copies")
    if not isinstance(copies, Mapping):
        return []
    found = []
    for index, data in enumerate(copies.get("flags", ())):
        f = TableReader(data, f"copies.flags[{index}]", SOURCE, GradebookError)
        learners = f.texts("learners")
        if learner in learners:
            flag = CopyFlag(f.text("kind"), f.text("lab"), learners, f.number("score"), 0.0)
            found.append(flag)
    cut = copies.get("cut")
    held = (cut.get(learner) if isinstance(cut, Mapping) else None) or ()
    cuts = {learner: tuple(_cut(data, f"copies.cut.{learner}[{i}]") for i, data in enumerate(held))}
    return CopyReport(tuple(found), {}, cuts).row_flags(learner)


def merged(
    old: Sequence[Grade], new: Sequence[Grade], learner: str, run: Mapping[str, Any]
) -> list[Grade]:
    """``old`` with ``learner``'s rows replaced by ``new``, in learner order; each new row keeps
    the copy flags the whole ``run`` gave it (the copy check is the whole class's, not run again
    for one learner)."""
    kept = [row for row in old if not belongs_to(row.learner, learner)]
    regraded = [
        replace(row, flags=tuple(dict.fromkeys((*row.flags, *copy_flags(run, row.learner)))))
        for row in new
    ]
    return sorted([*kept, *regraded], key=lambda row: row.learner)
