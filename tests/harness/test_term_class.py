"""A term's class graded as docs/instructors.md says, with the class list, read as an instructor
who must enter the grades tomorrow reads it.

The class (``term_class.py``) is 27 entries as Canvas hands them over. Before: 3 of its honest
learners went into the Canvas and Moodle files as 0 (loose files, a zip of ``pi_course/``, a zip
without its marker, the last two flagged ``refused archive``), every ungraded row went out as 0,
and the learner of an older scaffold was told they had edited the test files.
"""

from __future__ import annotations

import csv
import io
import json
import re
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from harness_support import cli
from term_class import CANVAS, COPIES, FRESH, SOLVED, STUDENTS, Term, expected_grades

from course.harness.kit import kit_root
from course.harness.manifest import Manifest

pytestmark = pytest.mark.costly  # handed to a worker first (tests/schedule.py)

INFORMATION = {"late", "several submissions"}
"""Flags that accuse nobody: the platform's late mark, a learner who handed in twice."""


@dataclass(frozen=True)
class Graded:
    run: subprocess.CompletedProcess[str]
    grades: Path
    rows: dict[str, dict[str, str]]
    book: dict[str, Any]

    def exported(self, name: str) -> dict[str, str]:
        """A student's cell in the Canvas and Moodle files, by the class list's id."""
        canvas = csv.DictReader(io.StringIO(self._text("gradebook-canvas.csv")))
        moodle = csv.DictReader(io.StringIO(self._text("gradebook-moodle.csv")))
        by_canvas = {row["SIS User ID"]: row["Chapter 11"] for row in canvas}
        by_moodle = {row["ID number"]: row["Chapter 11"] for row in moodle}
        return {"canvas": by_canvas[name], "moodle": by_moodle[name]}

    def _text(self, name: str) -> str:
        return (self.grades / name).read_text(encoding="utf-8")


@pytest.fixture(scope="module")
def term(manifest: Manifest, tmp_path_factory: pytest.TempPathFactory) -> Graded:
    base = tmp_path_factory.mktemp("term")
    laid = Term(manifest, base).lay_out()
    assert len(list(laid.roster.iterdir())) == 27
    grades = base / "grades"
    run = cli(
        "checkpoint",
        *("11", "--roster", str(laid.roster), "--names", CANVAS),
        *("--class-list", str(laid.class_list), "--gradebook", str(grades)),
    )
    table = (grades / "gradebook.csv").read_text(encoding="utf-8-sig")
    rows = {row["learner"]: row for row in csv.DictReader(io.StringIO(table))}
    book = json.loads((grades / "gradebook.json").read_text(encoding="utf-8"))
    return Graded(run, grades, rows, book)


def test_every_learner_with_gradeable_code_gets_their_grade_in_every_export(
    term: Graded,
) -> None:
    assert term.run.returncode == 0, term.run.stdout + term.run.stderr
    for student in STUDENTS:
        grade = expected_grades()[student.learner]
        cell = "" if grade is None else str(grade)
        assert term.exported(student.id) == {"canvas": cell, "moodle": cell}, student
        if grade is not None:
            assert term.rows[student.learner]["score"] == cell, term.rows[student.learner]


def test_no_ungraded_row_is_exported_as_a_grade_and_each_is_said_loudly(term: Graded) -> None:
    ungraded = {name for name, row in term.rows.items() if row["score"] == ""}
    assert ungraded == {"eve", "kim#2", "wes", "Uma Thurman"}, ungraded
    out = term.run.stdout
    listed = out.split("NOT GRADED (3): exported blank", 1)[1].splitlines()[1:4]
    names = ("Eve Adams (eve) ", "Wes Cole (wes) ", "Uma Thurman ")  # as the class list has them
    assert all(map(str.startswith, [line.strip() for line in listed], names)), listed
    assert "eve_5_1005_practice-11.zip: empty submission" in listed[0]
    assert "no lab files and no practice workspace" in listed[1] and "report.pdf" in listed[1]
    assert "refused archive" not in json.dumps(term.book), "no archive here is unsafe"


def test_no_flag_accuses_an_honest_learner(term: Graded) -> None:
    for learner in (*SOLVED, *FRESH):
        flags = set(filter(None, term.rows[learner]["flags"].split("; ")))
        assert flags <= INFORMATION, (learner, flags)
    assert term.rows["max"]["late"] == "late" and "several submissions" in term.rows["kim"]["flags"]
    for learner in COPIES:
        assert "copy of the reference?" in term.rows[learner]["flags"], term.rows[learner]
    lee = next(row for row in term.book["learners"] if row["learner"] == "lee")
    assert any(note.startswith("as the scaffold it began from made them") for note in lee["notes"])


def test_each_shape_is_graded_in_the_scaffold_and_said_so(term: Graded) -> None:
    sources = {learner: term.rows[learner]["source"] for learner in ("fay", "gus", "hal", "dee")}
    assert sources == {
        "fay": "files (lab files)",
        "gus": "zip (lab files)",
        "hal": "zip (lab files)",
        "dee": "tar",
    }
    for learner in ("ivy", "jon"):
        assert term.rows[learner]["source"] == "git" and len(term.rows[learner]["commit"]) == 40


def test_every_output_an_instructor_sends_is_fit_to_send(term: Graded) -> None:
    feedback = term.grades / "gradebook-feedback"
    names = {path.name for path in feedback.iterdir()}
    assert {"fay.txt", "lǐléi.txt", "eve.txt", "Uma_Thurman.txt"} <= names, names
    kit = str(kit_root())
    for path in feedback.iterdir():
        text = path.read_text(encoding="utf-8")
        assert kit not in text, path.name
        for line in text.splitlines():
            if "--replay" in line:
                assert re.search(r"replay: checkpoint 11 --replay 11\.\d#\S+$", line), line
    assert (feedback / "eve.txt").read_text(encoding="utf-8").splitlines()[1:] == [
        "",
        "Not graded: eve_5_1005_practice-11.zip: empty submission",
    ]
    page = (term.grades / "gradebook-summary.html").read_text(encoding="utf-8")
    anonymous = (term.grades / "gradebook-summary-anonymous.html").read_text(encoding="utf-8")
    assert not re.search(r"\{\w+\}", page), "every rule filled in"
    for student in STUDENTS:
        assert f">{student.learner}<" not in anonymous, student.learner
    summary = term.book["summary"]
    assert summary["learners"] == 21, "only graded rows count"
    started = {lab["lab"]: lab["graded"] - lab["not_started"] for lab in summary["labs"]}
    assert started["11.1"] == 8, "ada, ben, cy, the four copies and tom"
    assert summary["rules"] and {rule["example"] for rule in summary["rules"]} == {"tom"}
    assert term.rows["tom"]["status"] == "failed" and term.rows["tom"]["score"] == "0"
