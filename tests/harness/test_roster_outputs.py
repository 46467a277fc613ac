"""A roster run's outputs survive any entry name: each written on its own, under a name it can take.

One roster, graded where the gradebook goes (as an instructor who skips ``--gradebook`` does),
holds a workspace in a 240-character sub-folder and entries named like every file the kit
writes: a learner folder ``assignment-11.toml``, folders ``gradebook-summary.html`` and
``gradebook-canvas.csv``, a file ``gradebook-feedback``. Before, the first made the roster exit
1 after the gradebook (``File name too long``: feedback missing for later rows, no LMS export),
the others stopped it before (``Is a directory``) or left every learner without feedback.
"""

from __future__ import annotations

import csv
import io
import json
import string
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from harness_support import cli, replace_in, roster_workspace
from hypothesis import given
from hypothesis import strategies as st

from course.grading import roster as roster_module
from course.grading.records.feedback import STEM_BYTES, file_name
from course.grading.records.outputs import OutputsFailed, Writing, output_paths
from course.grading.roster import RosterOptions, grade_roster
from course.harness.kit import kit_root
from course.harness.manifest import Manifest
from course.harness.workspace import create_workspace

LONG = "b" * 240
NAME_MAX = 255  # bytes of one file name on Linux's file systems
CLASS = "id,name,email\nS1,Ada Lovelace,ada@uni.edu\nS2,Ben Okafor,ben@uni.edu\n"


@dataclass(frozen=True)
class Run:
    run: subprocess.CompletedProcess[str]
    roster: Path
    rows: list[dict[str, str]]
    book: dict[str, Any]


@pytest.fixture(scope="module")
def named_like_outputs(manifest: Manifest, tmp_path_factory: pytest.TempPathFactory) -> Run:
    base = tmp_path_factory.mktemp("outputs")
    roster = base / "roster"
    create_workspace(manifest, kit_root(), roster / "ada")
    create_workspace(manifest, kit_root(), roster / "ben" / LONG)
    create_workspace(manifest, kit_root(), roster / "assignment-11.toml")
    wrong = roster_workspace(manifest, roster, "dee", solved=5)
    replace_in(  # Lab 11.3 drops a group that fits the budget exactly
        wrong / "pi_course" / "context.py",
        "if used + cost > available:",
        "if used + cost >= available:",
    )
    (roster / "gradebook-summary.html").mkdir()
    (roster / "gradebook-canvas.csv").mkdir()
    (roster / "gradebook-feedback").write_text("not a folder\n")
    (base / "class.csv").write_text(CLASS, encoding="utf-8")
    run = cli("checkpoint", "11", "--roster", str(roster), "--class-list", str(base / "class.csv"))
    rows = list(csv.DictReader(io.StringIO(_read(roster / "gradebook-2.csv", "utf-8-sig"))))
    book = json.loads(_read(roster / "gradebook-2.json", "utf-8") or "{}")
    return Run(run, roster, rows, book)


def _read(path: Path, encoding: str) -> str:
    return path.read_text(encoding=encoding) if path.is_file() else ""


def test_a_workspace_in_a_240_character_folder_gets_its_feedback_and_the_exports_are_written(
    named_like_outputs: Run,
) -> None:
    run, roster = named_like_outputs.run, named_like_outputs.roster
    assert run.returncode == 0, run.stdout + run.stderr
    feedback = roster / "gradebook-2-feedback"
    names = sorted(path.name for path in feedback.iterdir())
    [long] = [name for name in names if name.startswith("ben_")]
    assert len(long.encode()) <= NAME_MAX and long.startswith("ben_bbbb") and long.endswith(".txt")
    said = f"Chapter 11 · Ben Okafor (ben/{LONG})"  # the class list's name, then the row's
    assert said in (feedback / long).read_text(encoding="utf-8")
    assert {"ada.txt", "assignment-11.toml.txt"} <= set(names)
    canvas = _read(roster / "gradebook-2-canvas.csv", "utf-8").splitlines()
    assert canvas[0].endswith("Chapter 11") and len(canvas) == 3
    assert (roster / "gradebook-2-moodle.csv").is_file()


def test_entries_named_like_the_kits_files_never_stop_the_gradebook(
    named_like_outputs: Run,
) -> None:
    run, roster = named_like_outputs.run, named_like_outputs.roster
    assert run.returncode == 0, run.stdout + run.stderr
    made = f"made {roster / 'assignment-11-2.toml'}: keep it beside the gradebook to regrade"
    assert made in run.stdout
    assert (roster / "assignment-11.toml" / ".course-workspace.toml").is_file(), "left as it was"
    learners = [row["learner"] for row in named_like_outputs.rows]
    assert {"ada", "assignment-11.toml", f"ben/{LONG}"} <= set(learners), learners
    assert (roster / "gradebook-2-summary.html").is_file()
    assert not any((roster / "gradebook-summary.html").iterdir())
    assert (roster / "gradebook-feedback").read_text() == "not a folder\n"
    again = cli("checkpoint", "11", "--roster", str(roster))  # the same seed, the same names
    assert again.returncode == 0, again.stdout + again.stderr
    assert "made " not in again.stdout
    skipped = [line for line in again.stdout.splitlines() if "assignment-11-2.toml" in line]
    assert skipped and "the assignment file" in skipped[0], again.stdout


def test_output_names_are_chosen_so_each_can_be_written(tmp_path: Path) -> None:
    assert output_paths(tmp_path).csv == tmp_path / "gradebook.csv"
    (tmp_path / "gradebook-moodle.csv").mkdir()
    (tmp_path / "gradebook-2-feedback").write_text("")
    chosen = output_paths(tmp_path)
    assert (chosen.csv, chosen.feedback) == (
        tmp_path / "gradebook-3.csv",
        tmp_path / "gradebook-3-feedback",
    )


@given(st.lists(st.text(string.printable + "李雷é/\ud800", max_size=600), max_size=8))
def test_every_learner_gets_a_feedback_name_the_system_takes_and_its_own(
    learners: list[str],
) -> None:
    taken: set[str] = set()
    names = [file_name(learner, taken) for learner in learners]
    assert all(len(name.encode("utf-8", "surrogateescape")) <= NAME_MAX for name in names)
    assert all("/" not in name and not name.startswith(".") for name in names)
    assert len({name.casefold() for name in names}) == len(names)
    assert STEM_BYTES + len("-0123456789ab-99.txt") < NAME_MAX


def test_an_output_that_cannot_be_written_names_itself_and_stops_nothing_else(
    manifest: Manifest, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    roster, grades = tmp_path / "roster", tmp_path / "grades"
    create_workspace(manifest, kit_root(), roster / "ada")
    (tmp_path / "class.csv").write_text(CLASS, encoding="utf-8")
    real = roster_module.atomic_write

    def full_disk(path: Path, data: bytes) -> None:
        if path.name == "gradebook-summary.html":
            raise OSError(28, "No space left on device")
        real(path, data)

    monkeypatch.setattr(roster_module, "atomic_write", full_disk)
    from course.grading.records.classlist import read_class_list

    options = RosterOptions(class_list=read_class_list(tmp_path / "class.csv"))
    out = io.StringIO()
    with pytest.raises(OutputsFailed) as failed:
        grade_roster(manifest, kit_root(), roster, grades, options, io.StringIO(), out)
    said = f"could not write {grades / 'gradebook-summary.html'}: No space left on device"
    assert said in str(failed.value) and said in out.getvalue()
    for name in ("gradebook.csv", "gradebook.json", "gradebook-canvas.csv", "gradebook-moodle.csv"):
        assert (grades / name).is_file(), name
    assert (grades / "gradebook-feedback" / "ada.txt").is_file()
    assert not (grades / "gradebook-summary.html").exists()


def test_writing_goes_on_past_a_failure() -> None:
    writing, done = Writing(), []

    def fails() -> None:
        raise OSError(36, "File name too long")

    assert writing.write("first", fails) is False
    assert writing.write("second", lambda: done.append("second")) is True
    assert writing.failed == ["could not write first: File name too long"]
    assert done == ["second"]
    assert isinstance(writing.closing(), OutputsFailed)
    assert Writing().closing() is None


def test_feedback_replays_with_the_bare_command_never_the_instructors_kit(
    named_like_outputs: Run,
) -> None:
    """Before: every ``replay:`` line of a feedback file named the instructor's own kit path
    (``/home/…/.venv/bin/checkpoint 11 --replay …``), which the learner cannot run."""
    text = (named_like_outputs.roster / "gradebook-2-feedback" / "dee.txt").read_text("utf-8")
    replays = [line.strip() for line in text.splitlines() if "--replay" in line]
    assert replays and all(
        line.startswith("replay: checkpoint 11 --replay 11.") for line in replays
    ), text
    assert any("--replay 11.3#" in line for line in replays), text
    assert str(kit_root()) not in text and ".venv" not in text, text
