"""What crosses from learner code to the grader, and every door around it, holds.

One small roster is graded once for the module: two honest learners (complete and fresh) and
hostile workspaces that attack what crosses the sandbox's boundary: forged records and errors
with terminal escapes and lone surrogates, megabytes of records, a stack-dump bomb, a folder
named like a spreadsheet formula, and files that would run if the kit ever imported them.
Every door (``--practice``, ``--review``, ``--watch``, ``check()``) is then driven on a
workspace whose ``conftest.py``, ``pytest.ini`` and ``sitecustomize.py`` leave a mark if they
run. Limits are small and timeouts short: the suite proves bounds, it does not time them.
"""

from __future__ import annotations

import csv
import io
import json
import subprocess
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from harness_support import cli, kill_processes_with, lab_verdicts, roster_workspace, watch_once
from hostile import (
    DUMP_BOMB,
    FLOOD_RECORDS,
    INSTRUCTOR_TEST,
    MODULE,
    READ_THE_INSTRUCTOR_TESTS,
    SPOOF_RECORDS,
    append,
    plant_everywhere,
)
from hypothesis import example, given
from hypothesis import strategies as st
from solutions import solve_lab

from course.display.notebook import check
from course.grading.records.gradebook import (
    FORMULA_STARTS,
    gradebook_csv,
    ungraded_row,
    write_gradebook,
)
from course.grading.verdict.engine import for_learners
from course.grading.verdict.hidden import REDACTED, read_hidden
from course.harness.kit import kit_root
from course.harness.manifest import Manifest
from course.harness.records import MAX_ITEMS, RecordReader
from course.harness.results import CheckpointResult, LabResult, TestOutcome
from course.harness.workspace import create_workspace
from course.sandboxed.status import Status
from course.sandboxed.untrusted import MESSAGE_CHARS, NAME_CHARS, safe_name, safe_text

FORMULA = "=2+5"
"""A learner folder a spreadsheet would compute."""
RAW = ("\x1b", "\x9b", "\u202e", "\ud800", "\x07")
"""What must never reach a terminal or a file as itself."""


def unsafe(text: str) -> list[str]:
    return [char for char in RAW if char in text]


# --------------------------------------------------------------------------- text, bounded


@given(st.text(alphabet=st.characters(codec=None, exclude_categories=()), max_size=300))
@example("\ud800\x1b[2J\x9b\u202e" * 20)
def test_safe_text_is_printable_encodable_and_bounded(text: str) -> None:
    shown = safe_text(text, 50)
    shown.encode("utf-8")  # a lone surrogate would raise here
    assert all(char.isprintable() or char == "\n" for char in shown)
    assert len(shown) <= 50 + 40
    assert "\n" not in safe_name(text)
    if text.isprintable() and len(text) <= 50:
        assert shown == text, "printable text is left as it is"


def test_a_cut_says_how_much_was_cut() -> None:
    assert safe_text("x" * 150, 100) == "x" * 100 + "… [50 more characters cut]"
    assert safe_text("\x1b[2J", 100) == "\\x1b[2J"
    assert safe_text("a\ud800b", 100) == "a\\ud800b"


def test_records_are_cleaned_and_cut_where_they_are_read(tmp_path: Path) -> None:
    path = tmp_path / "results.jsonl"
    frames = [{"path": f"p/m{n}.py", "line": n, "function": "f", "text": ""} for n in range(999)]
    records = [
        {"event": "end", "nodeid": "t.py::\x1b[2Jx" + "n" * 900, "message": "\ud800" + "m" * 9000},
        {"event": "exit", "frames": frames},
        {"event": "answer", "id": "c1", "value": {"text": "\x1b keeps"}},
        {"event": "finish", **{f"k{n}": n for n in range(MAX_ITEMS + 50)}},
    ]
    path.write_text("\n".join(json.dumps(r) for r in records) + "\n", encoding="utf-8")
    reader = RecordReader(path)
    end, exit_, answer, keys = reader.new()
    assert end["nodeid"].startswith("t.py::\\x1b[2Jx") and len(end["nodeid"]) < NAME_CHARS + 50
    assert end["message"].startswith("\\ud800m") and "more characters cut" in end["message"]
    assert len(end["message"]) < MESSAGE_CHARS + 50
    assert len(exit_["frames"]) == MAX_ITEMS and exit_["frames"][-1]["line"] == 998, "innermost"
    assert len(keys) == MAX_ITEMS and reader.cut == 999 - MAX_ITEMS + 51
    assert answer["value"] == {"text": "\x1b keeps"}, "an answer's value is data, compared as sent"


ANY_TEXT = st.text(st.characters(codec=None, exclude_categories=()), max_size=40)
"""Any text: control characters, escapes and lone surrogates included."""
JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | ANY_TEXT,
    lambda inner: st.lists(inner, max_size=5) | st.dictionaries(ANY_TEXT, inner, max_size=5),
    max_leaves=20,
)


def _strings(value: Any) -> list[str]:
    """Every string of a record, keys included, except inside an answer's ``value``."""
    if isinstance(value, str):
        return [value]
    if isinstance(value, list):
        return [s for item in value for s in _strings(item)]
    if isinstance(value, dict):
        return [s for k, v in value.items() for s in [k, *([] if k == "value" else _strings(v))]]
    return []


@given(
    st.lists(
        st.one_of(
            st.binary(max_size=60),
            st.dictionaries(ANY_TEXT, JSON_VALUES, max_size=6).map(
                lambda record: json.dumps(record).encode()
            ),
        ),
        max_size=12,
    )
)
def test_whatever_a_child_appends_the_reader_hands_on_only_safe_text(lines: list[bytes]) -> None:
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "results.jsonl"
        path.write_bytes(b"\n".join(lines) + b"\n")
        for record in RecordReader(path).new():
            for text in _strings(record):
                text.encode("utf-8")
                assert all(char.isprintable() or char == "\n" for char in text), text


# --------------------------------------------------------------------------- spreadsheets


def test_no_csv_cell_starts_a_formula_in_any_column(manifest: Manifest) -> None:
    rows = [
        ungraded_row(start + "cmd|' /C calc'!A0", f"/roster/{start}x", manifest.labs, "error", why)
        for start, why in zip(
            FORMULA_STARTS, ["=1+1", "+1", "-1", "@SUM(A1)", "\tx", "\rx"], strict=True
        )
    ]
    cells = [cell for row in csv.reader(io.StringIO(gradebook_csv(["11.1"], rows))) for cell in row]
    assert not [cell for cell in cells if cell.startswith(FORMULA_STARTS)], cells
    assert "'=cmd|' /C calc'!A0" in cells, "the text is kept, behind a quote"


def test_a_gradebook_that_cannot_be_written_whole_is_not_written_in_half(tmp_path: Path) -> None:
    write_gradebook(tmp_path, "old csv\n", "{}\n")
    with pytest.raises(UnicodeEncodeError):
        write_gradebook(tmp_path, "new csv\n", '{"learner": "\ud800"}\n')
    assert (tmp_path / "gradebook.csv").read_text(encoding="utf-8-sig") == "old csv\n"
    assert (tmp_path / "gradebook.json").read_text(encoding="utf-8") == "{}\n"


# --------------------------------------------------------------------------- instructor tests


def test_instructor_text_stays_out_of_what_learners_see(manifest: Manifest, tmp_path: Path) -> None:
    (tmp_path / "test_instructor_secret.py").write_text(INSTRUCTOR_TEST, encoding="utf-8")
    hidden = read_hidden(tmp_path, manifest)
    node = "tests/chapter11/test_instructor_secret.py::test_instructor_secret_boundary_case"
    quoted = (
        'assert store.entries() == [], "SECRET-INSTRUCTOR-EXPECTATION a new store holds nothing"'
    )
    tests = (
        TestOutcome(node, "test_instructor_secret", "11.1", Status.FAILED, "SECRET says why"),
        TestOutcome("t.py::test_a", "test_a", "11.1", Status.ERROR, f"RuntimeError:\n{quoted}"),
    )
    lab = manifest.lab("11.1")
    result = CheckpointResult("11", "", (LabResult(lab, tests, 2),))
    shown = for_learners(result, manifest, hidden)
    messages = [test.message for test in shown.tests]
    assert not any("SECRET" in message for message in messages), messages
    [chapter] = shown.tests  # the instructor test is left out of what learners see
    assert chapter.nodeid == "t.py::test_a" and chapter.message.startswith("RuntimeError:")
    assert REDACTED in chapter.message
    assert (shown.labs[0].total, shown.labs[0].withheld) == (1, Status.FAILED), "status kept"
    assert for_learners(result, manifest, None) == result


# --------------------------------------------------------------------------- one roster


@dataclass(frozen=True)
class Graded:
    run: subprocess.CompletedProcess[str]
    roster: Path
    csv_text: str
    json_text: str
    rows: dict[str, dict[str, str]]
    book: dict[str, Any]
    markers: Path

    def learner(self, name: str) -> dict[str, Any]:
        return next(row for row in self.book["learners"] if row["learner"] == name)


@pytest.fixture(scope="module")
def graded(manifest: Manifest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Graded]:
    base = tmp_path_factory.mktemp("boundary")
    roster, markers, hidden = base / "roster", base / "markers", base / "hidden"
    roster.mkdir()
    markers.mkdir()
    hidden.mkdir()
    (hidden / "test_instructor_secret.py").write_text(INSTRUCTOR_TEST, encoding="utf-8")
    roster_workspace(manifest, roster, "ada", solved=5)
    roster_workspace(manifest, roster, "cy")
    roster_workspace(manifest, roster, FORMULA)
    append(roster_workspace(manifest, roster, "h-spoof"), MODULE, SPOOF_RECORDS)
    append(roster_workspace(manifest, roster, "h-flood"), MODULE, FLOOD_RECORDS)
    append(roster_workspace(manifest, roster, "h-dump"), MODULE, DUMP_BOMB)
    append(roster_workspace(manifest, roster, "h-quote"), MODULE, READ_THE_INSTRUCTOR_TESTS)
    plant_everywhere(roster_workspace(manifest, roster, "h-planted"), markers / "roster")
    run = cli(
        "checkpoint", "11", "--roster", str(roster), "--hidden", str(hidden), "--timeout", "2"
    )
    csv_text = (roster / "gradebook.csv").read_text(encoding="utf-8-sig")
    json_text = (roster / "gradebook.json").read_text(encoding="utf-8")
    rows = {r["learner"]: r for r in csv.DictReader(io.StringIO(csv_text))}
    try:
        yield Graded(run, roster, csv_text, json_text, rows, json.loads(json_text), markers)
    finally:
        kill_processes_with("course-boundary-never")


def test_honest_and_fresh_learners_keep_their_grades(graded: Graded) -> None:
    assert graded.run.returncode == 0, graded.run.stdout + graded.run.stderr
    ada, cy = graded.rows["ada"], graded.rows["cy"]
    assert (ada["status"], ada["score"], ada["passed"], ada["total"]) == (
        "passed",
        "100",
        "15",
        "15",
    ), ada
    assert (cy["status"], cy["score"]) == ("pending", "0"), cy
    assert int(cy["passed"]) < int(cy["total"]), "a given-module test may pass; it earns nothing"


def test_escapes_and_lone_surrogates_reach_no_output(graded: Graded) -> None:
    """The spoof (a fake ``14/14`` drawn with cursor movements, a lone surrogate…) is in
    every message of h-spoof's row, escaped; the gradebook is whole and current."""
    row = graded.learner("h-spoof")
    assert row["score"] == row["passed"] == 0 and row["status"] == "error", row
    text = json.dumps(row, ensure_ascii=False)
    assert "\\\\x1b[1A" in text, "the learner's text is kept, escaped"
    for output in (graded.csv_text, graded.json_text, graded.run.stdout, graded.run.stderr):
        assert unsafe(output) == []
    lines = graded.run.stdout.splitlines()
    assert not [line for line in lines if line.lstrip().startswith("14/14")], "no fake line"


def test_a_flood_of_records_is_cut_and_counted(graded: Graded) -> None:
    row = graded.learner("h-flood")
    assert row["score"] == row["passed"] == 0 and row["status"] == "error", row
    assert len(json.dumps(row)) < 200_000, "a row the size of its cut messages, not megabytes"
    assert any("went past their caps" in note for note in row["notes"]), row["notes"]
    assert len(graded.json_text) < 2_000_000 and len(graded.csv_text) < 100_000
    assert max(len(line) for line in graded.run.stdout.splitlines()) < 2_000


def test_a_stack_dump_bomb_is_read_within_its_bounds(graded: Graded) -> None:
    row = graded.rows["h-dump"]
    assert (row["status"], row["score"], row["passed"]) == ("timeout", "0", "0"), row
    assert "2s" in row["note"], row


def test_a_folder_named_like_a_formula_is_text_in_the_csv(graded: Graded) -> None:
    assert "'" + FORMULA in graded.rows, list(graded.rows)
    assert graded.learner(FORMULA)["score"] == 0
    assert graded.learner(FORMULA)["passed"] == graded.learner("cy")["passed"], "a fresh one's"
    cells = [cell for row in csv.reader(io.StringIO(graded.csv_text)) for cell in row]
    assert not [cell for cell in cells if cell.startswith(FORMULA_STARTS)]


def test_instructor_tests_stay_out_of_the_csv_and_the_terminal(graded: Graded) -> None:
    row = graded.rows["h-quote"]
    assert row["score"] == "0", row
    assert int(row["passed"]) <= int(graded.rows["cy"]["passed"]), "no more than a fresh one's"
    for output in (graded.csv_text, graded.run.stdout, graded.run.stderr):
        assert "SECRET-INSTRUCTOR-EXPECTATION" not in output
    messages = [test["message"] for test in graded.learner("h-quote")["tests"]]
    assert any("SECRET-INSTRUCTOR-EXPECTATION" in m for m in messages), "the JSON keeps it"


def test_no_workspace_file_runs_in_a_roster(graded: Graded) -> None:
    planted = graded.rows["h-planted"]
    assert (planted["score"], planted["passed"]) == ("0", graded.rows["cy"]["passed"]), planted
    assert list(graded.markers.iterdir()) == []


# --------------------------------------------------------------------------- every door


@pytest.fixture
def planted(manifest: Manifest, tmp_path: Path) -> tuple[Path, Path]:
    """A workspace (Lab 11.1 done) whose every extra file writes ``marker`` if it runs."""
    workspace = tmp_path / "practice"
    create_workspace(manifest, kit_root(), workspace)
    solve_lab(manifest, kit_root(), workspace, "11.1")
    marker = tmp_path / "ran"
    plant_everywhere(workspace, marker)
    return workspace, marker


def _edits_first(output: str) -> None:
    """The edited files are named before anything ran (before the first lab line)."""
    edited = output.find("tests/chapter11/conftest.py was edited")
    assert edited != -1, output
    first_lab = output.find("Lab 11.1")
    assert first_lab == -1 or edited < first_lab, output


def test_practice_runs_no_workspace_file_and_names_the_edits_first(
    planted: tuple[Path, Path],
) -> None:
    workspace, marker = planted
    run = cli("checkpoint", "11", "--practice", str(workspace), "--timeout", "2", "--no-card")
    assert not marker.exists(), marker.read_text() if marker.exists() else ""
    _edits_first(run.stdout)
    assert "3/3" in run.stdout


def test_review_runs_no_workspace_file(planted: tuple[Path, Path]) -> None:
    workspace, marker = planted
    run = cli("checkpoint", "11", "--review", "--practice", str(workspace), "--timeout", "2")
    assert "Review:" in run.stdout, run.stdout + run.stderr
    assert not marker.exists(), marker.read_text() if marker.exists() else ""
    _edits_first(run.stdout)


def test_watch_runs_no_workspace_file(planted: tuple[Path, Path]) -> None:
    workspace, marker = planted
    run = watch_once(workspace, "--timeout", "2")
    assert "Lab 11.1" in run.stdout, run.stdout + run.stderr
    assert not marker.exists(), marker.read_text() if marker.exists() else ""
    _edits_first(run.stdout)


def test_check_in_a_notebook_runs_no_workspace_file(planted: tuple[Path, Path]) -> None:
    workspace, marker = planted
    view = check("11.1", start=workspace / "notebooks", timeout=2)
    assert view.result is not None and lab_verdicts(view.result)["11.1"][:3] == ("passed", 3, 3)
    assert not marker.exists(), marker.read_text() if marker.exists() else ""
    assert any("conftest.py was edited" in note for note in view.result.notes)


def test_practice_prints_no_escape_and_survives_a_lone_surrogate(
    manifest: Manifest, tmp_path: Path
) -> None:
    workspace = tmp_path / "spoof"
    create_workspace(manifest, kit_root(), workspace)
    append(workspace, MODULE, SPOOF_RECORDS)
    run = cli("checkpoint", "11", "--practice", str(workspace), "--timeout", "2", "--no-card")
    assert run.returncode == 1, run.stdout + run.stderr
    assert "Traceback" not in run.stderr and "UnicodeEncodeError" not in run.stderr
    assert unsafe(run.stdout + run.stderr) == []
    assert "\\x1b[1A" in run.stdout, "the learner's text is shown, escaped"
    lines = run.stdout.splitlines()
    assert not [line for line in lines if line.lstrip().startswith("14/14")], "no fake line"
