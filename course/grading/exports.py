"""The gradebook as an LMS imports it: Canvas's and Moodle's grade import CSVs.

Only rows joined to the class list (``classlist.py``) are exported, one per student, a student
who submitted nothing with 0. Canvas's import reads ``Student``, ``ID``, ``SIS User ID``,
``SIS Login ID`` and ``Section`` and then one column per assignment (matched by name, or by
``Name (id)`` as its own export writes it); the class list's id goes to ``SIS User ID`` and its
email to ``SIS Login ID``. Moodle's CSV import maps a user by a column chosen on its form
(``ID number`` or ``Email address`` here) and a grade item by another. Both files are UTF-8
without a byte order mark, as the LMSes write them.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Sequence
from pathlib import Path

from .gradebook import Grade, spreadsheet_safe
from .safefs import atomic_write

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


def canvas_csv(chapter: str, grades: Sequence[Grade]) -> str:
    """Canvas's "Import grades" CSV: a row per student of the class list."""
    rows: list[list[object]] = [[*CANVAS_COLUMNS, assignment_column(chapter)]]
    for student, grade in _students(grades):
        rows.append([student["name"], "", student["id"], student["email"], "", grade.score])
    return _table(rows)


def moodle_csv(chapter: str, grades: Sequence[Grade]) -> str:
    """Moodle's "Import grades: CSV file": a row per student of the class list."""
    rows: list[list[object]] = [[*MOODLE_COLUMNS, assignment_column(chapter)]]
    for student, grade in _students(grades):
        rows.append([student["id"], student["email"], grade.score])
    return _table(rows)


def write_exports(csv_path: Path, chapter: str, grades: Sequence[Grade]) -> tuple[Path, Path]:
    """Both exports beside the gradebook's CSV: ``gradebook-canvas.csv`` and ``-moodle.csv``."""
    canvas = csv_path.with_name(f"{csv_path.stem}-canvas.csv")
    moodle = csv_path.with_name(f"{csv_path.stem}-moodle.csv")
    atomic_write(canvas, canvas_csv(chapter, grades).encode("utf-8"))
    atomic_write(moodle, moodle_csv(chapter, grades).encode("utf-8"))
    return canvas, moodle
