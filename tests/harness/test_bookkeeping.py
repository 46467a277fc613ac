"""A term's bookkeeping: reasons an instructor can act on, one key per row, a CSV Excel reads,
and messages of several lines kept readable."""

from __future__ import annotations

import csv
import io
import json
from dataclasses import replace
from pathlib import Path

from course.grading.gradebook import (
    gradebook_csv,
    gradebook_json,
    graded_row,
    ungraded_row,
    with_unique_learners,
    write_gradebook,
)
from course.grading.intake import survey
from course.grading.roster import row_line
from course.harness.manifest import Manifest
from course.harness.results import CheckpointResult, LabResult, ProbeSummary, TestOutcome
from course.sandboxed.marker import MARKER
from course.sandboxed.status import Status


def test_an_empty_folder_and_a_folder_of_loose_files_say_which(tmp_path: Path) -> None:
    (tmp_path / "ada").mkdir()
    (tmp_path / "ben").mkdir()
    for name in ("report.pdf", "context.py"):
        (tmp_path / "ben" / name).write_text("mine\n")
    (tmp_path / "cy").mkdir()
    for number in range(7):
        (tmp_path / "cy" / f"f{number}.py").write_text("\n")
    why = {entry.learner: entry.why for entry in survey(tmp_path).submissions}
    assert why == {
        "ada": "empty submission",
        "ben": f"loose files: context.py, report.pdf (not a practice workspace: no {MARKER})",
        "cy": "loose files: f0.py, f1.py, f2.py, f3.py, f4.py and 2 more "
        f"(not a practice workspace: no {MARKER})",
    }


def test_rows_named_alike_get_one_key_each_the_graded_one_keeping_the_name(
    manifest: Manifest,
) -> None:
    labs = manifest.required_labs
    older = ungraded_row("ben", "r/ben", labs, Status.SKIPPED, "an older submission of ben")
    graded = ungraded_row("ben", "r/ben.zip", labs, Status.ERROR, "refused")
    taken = ungraded_row("ben#2", "r/ben#2", labs, Status.ERROR, "refused")
    rows = with_unique_learners([older, taken, graded, older])
    assert [(row.learner, row.workspace, row.status) for row in rows] == [
        ("ben", "r/ben.zip", "error"),
        ("ben#3", "r/ben", "skipped"),
        ("ben#4", "r/ben", "skipped"),
        ("ben#2", "r/ben#2", "error"),
    ]


def test_the_csv_opens_with_a_byte_order_mark_and_the_json_without(tmp_path: Path) -> None:
    csv_path, json_path = write_gradebook(tmp_path, "learner\n李雷\n", "{}\n")
    assert csv_path.read_bytes() == "\ufefflearner\n李雷\n".encode()
    assert json_path.read_bytes() == b"{}\n"


def test_a_message_of_several_lines_stays_readable(manifest: Manifest) -> None:
    message = "AssertionError: the budget\nassert 31 == 29\n  where 31 = build()\x1b[0m"
    labs = tuple(
        LabResult(
            lab,
            tuple(
                TestOutcome(
                    f"t::{lab.id}-{n}",
                    f"test_{n}",
                    lab.id,
                    Status.FAILED if lab.id == "11.3" and n == 0 else Status.PASSED,
                    message if lab.id == "11.3" and n == 0 else "",
                )
                for n in range(lab.tests)
            ),
            lab.tests,
            ProbeSummary(1, 1, Status.PASSED),
        )
        for lab in manifest.required_labs
    )
    row = graded_row("ada", "ada", CheckpointResult(manifest.chapter, "practice", labs), ())
    said = "test_0: AssertionError: the budget\nassert 31 == 29\n  where 31 = build()\\x1b[0m"
    assert row.note == said
    data = json.loads(gradebook_json("11", [row], {}))["learners"][0]
    assert data["note"] == said
    [failed] = [test for test in data["tests"] if test["status"] == "failed"]
    assert failed["message"] == said.removeprefix("test_0: ")
    [cells] = csv.DictReader(io.StringIO(gradebook_csv(["11.3"], [row])))
    assert cells["note"] == said
    line = row_line(row)
    assert "\n" not in line and "the budget | assert 31 == 29 | where 31" in line
    assert "\n" not in row_line(replace(row, notes=("two\nlines",)))
