"""The class list joined to the roster, the LMS exports, and Canvas's late marker kept."""

from __future__ import annotations

import csv
import io
import json
import re
import shutil
from dataclasses import replace
from pathlib import Path

import pytest
from harness_support import cli
from packing import zip_folder
from solutions import solve_lab
from test_lab_independence import donors

from course.grading.intake.folder import marked_late, names_pattern, survey
from course.grading.records.classlist import (
    ClassListError,
    Student,
    join_class_list,
    read_class_list,
    without_class_list,
)
from course.grading.records.exports import (
    CANVAS_COLUMNS,
    MOODLE_COLUMNS,
    Exports,
    canvas_csv,
    moodle_csv,
)
from course.grading.records.gradebook import gradebook_json, graded_row, ungraded_row
from course.grading.records.regrade import GradebookError, read_gradebook
from course.harness.kit import kit_root
from course.harness.manifest import Manifest
from course.harness.workspace import create_workspace
from course.sandboxed.status import Status

CANVAS = r"(?P<learner>[^_]+)_(?:late_)?\d+_\d+_"
CLASS = (
    'id,name,email\nS1,"Lovelace, Ada",ada@uni.edu\nS2,李雷,lilei@uni.edu\nS3,Cy Young,cy@uni.edu\n'
)


def _class_list(tmp_path: Path, text: str = CLASS, bom: bool = True) -> Path:
    path = tmp_path / "class.csv"
    path.write_bytes(("\ufeff" if bom else "").encode() + text.encode())
    return path


def test_a_class_list_is_read_with_excels_byte_order_mark(tmp_path: Path) -> None:
    students = read_class_list(_class_list(tmp_path, CLASS.replace("id,name", "ID,Name")))
    assert students[0] == Student("S1", "Lovelace, Ada", "ada@uni.edu")
    assert [s.id for s in students] == ["S1", "S2", "S3"]


@pytest.mark.parametrize(
    ("text", "said"),
    [
        ("id,name\nS1,Ada\n", "line 1: the class list has no column email"),
        ("id,name,email\nS1,Ada,a@x\n,Ben,b@x\n", "line 3: the field id is empty"),
        ("id,name,email\nS1,Ada,a@x\nS1,Ben,b@x\n", "line 3: id S1 is already on line 2"),
    ],
)
def test_a_bad_class_list_names_the_line_and_field(tmp_path: Path, text: str, said: str) -> None:
    with pytest.raises(ClassListError, match=said):
        read_class_list(_class_list(tmp_path, text))


def test_rows_join_by_id_email_or_name_and_the_absent_get_a_row(manifest: Manifest) -> None:
    labs = manifest.required_labs
    students = read_class_list_text(CLASS)
    rows = [
        ungraded_row("lovelaceada", "r/a.zip", labs, Status.ERROR, "refused"),
        ungraded_row("lilei", "r/lilei", labs, Status.PENDING, "pending"),
        ungraded_row("lilei#2", "r/lilei.zip", labs, Status.SKIPPED, "older"),
        ungraded_row("mallory", "r/mallory", labs, Status.PENDING, "pending"),
    ]
    joined = join_class_list(rows, students, labs)
    by_learner = {row.learner: row for row in joined.grades}
    assert by_learner["lovelaceada"].student == {
        "id": "S1",
        "name": "Lovelace, Ada",
        "email": "ada@uni.edu",
    }
    assert (by_learner["lilei"].student or {})["id"] == "S2"
    assert by_learner["lilei#2"].student is None and by_learner["mallory"].student is None
    absent = by_learner["Cy Young"]
    assert (absent.status, absent.note, absent.score) == ("missing", "submitted nothing", 0)
    assert (absent.student or {})["id"] == "S3" and absent.max_score == 100
    assert joined.unlisted == ("mallory",) and joined.ambiguous == ()


def read_class_list_text(text: str) -> tuple[Student, ...]:
    rows = csv.DictReader(io.StringIO(text))
    return tuple(Student(r["id"], r["name"], r["email"]) for r in rows)


def test_the_exports_have_the_lms_columns_a_row_per_student(manifest: Manifest) -> None:
    from test_class_summary import _result

    labs = manifest.required_labs
    rows = join_class_list(
        [graded_row("ada", "r/ada", _result(manifest, {"11.3#001"}), ())],
        read_class_list_text(CLASS.replace("ada@", "=ada@")),
        labs,
    ).grades
    canvas = list(csv.reader(io.StringIO(canvas_csv("11", rows))))
    assert canvas[0] == [*CANVAS_COLUMNS, "Chapter 11"]
    assert CANVAS_COLUMNS == ("Student", "ID", "SIS User ID", "SIS Login ID", "Section")
    assert canvas[1:] == [  # who submitted nothing is blank: the LMS keeps what it has
        ["Lovelace, Ada", "", "S1", "'=ada@uni.edu", "", "80"],
        ["李雷", "", "S2", "lilei@uni.edu", "", ""],
        ["Cy Young", "", "S3", "cy@uni.edu", "", ""],
    ]
    zeros = list(csv.reader(io.StringIO(canvas_csv("11", rows, Exports(zero_missing=True)))))
    assert [row[-1] for row in zeros[1:]] == ["80", "0", "0"], "zeros only when asked"
    moodle = list(csv.reader(io.StringIO(moodle_csv("11", rows))))
    assert moodle[0] == [*MOODLE_COLUMNS, "Chapter 11", "Chapter 11 feedback"]
    assert MOODLE_COLUMNS == ("ID number", "Email address")
    assert [row[:3] for row in moodle[1:]] == [
        ["S1", "'=ada@uni.edu", "80"],
        ["S2", "lilei@uni.edu", ""],
        ["S3", "cy@uni.edu", ""],
    ]
    assert moodle[1][3].startswith("Grade: 80/100; Lab 11.1")
    assert "Lab 11.3" in moodle[1][3] and "failed" in moodle[1][3]
    assert [row[3] for row in moodle[2:]] == ["", ""], "no feedback where nothing was graded"


def test_canvas_late_marker_is_kept(tmp_path: Path) -> None:
    pattern = names_pattern(CANVAS)
    assert marked_late("smithben_late_12346_67891_p.tgz", pattern)
    assert not marked_late("lovelaceada_12345_67890_practice.zip", pattern)
    assert not marked_late("late_12345_67890_x.zip", pattern)
    assert not marked_late("smithben_late_1_2_p.tgz", None)
    grouped = names_pattern(r"(?P<learner>\w+?)-(?P<late>LATE)?")
    assert marked_late("ben-LATE.zip", grouped) and not marked_late("ben-.zip", grouped)
    (tmp_path / "smithben_late_12346_67891_p.zip").write_bytes(b"")
    [entry] = survey(tmp_path, pattern).submissions
    assert (entry.learner, entry.late) == ("smithben", True)


def test_a_roster_with_a_class_list_writes_every_student_and_both_exports(
    manifest: Manifest, tmp_path: Path
) -> None:
    roster = tmp_path / "roster"
    work = tmp_path / "work" / "practice-11"
    create_workspace(manifest, kit_root(), work)
    roster.mkdir()
    zip_folder(work, roster / "lovelaceada_late_12345_67890_practice.zip")
    shutil.copytree(work, roster / "lilei_12346_67891_practice")
    class_list = _class_list(tmp_path)
    run = cli(
        "checkpoint",
        *("11", "--roster", str(roster), "--names", CANVAS, "--class-list", str(class_list)),
    )
    assert run.returncode == 0, run.stdout + run.stderr
    book = json.loads((roster / "gradebook.json").read_text(encoding="utf-8"))
    rows = {row["learner"]: row for row in book["learners"]}
    assert sorted(rows) == ["Cy Young", "lilei", "lovelaceada"]
    assert rows["lovelaceada"]["late"] is True and "late" in rows["lovelaceada"]["flags"]
    assert rows["lilei"]["late"] is False and rows["lilei"]["student"]["name"] == "李雷"
    assert rows["Cy Young"]["note"] == "submitted nothing"
    table = (roster / "gradebook.csv").read_bytes()
    assert table.startswith("\ufefflearner,".encode())
    [ada] = [r for r in csv.DictReader(io.StringIO(table.decode("utf-8-sig"))) if r["late"]]
    assert (ada["learner"], ada["student_id"], ada["student_email"]) == (
        "lovelaceada",
        "S1",
        "ada@uni.edu",
    )
    canvas = (roster / "gradebook-canvas.csv").read_text(encoding="utf-8").splitlines()
    assert canvas[0] == "Student,ID,SIS User ID,SIS Login ID,Section,Chapter 11"
    assert len(canvas) == 4
    assert f"LMS imports: {roster / 'gradebook-canvas.csv'} (Canvas)" in run.stdout
    feedback = roster / "gradebook-feedback"
    assert sorted(path.name for path in feedback.iterdir()) == [
        "Cy_Young.txt",
        "lilei.txt",
        "lovelaceada.txt",
    ]
    said = (feedback / "Cy_Young.txt").read_text(encoding="utf-8")
    assert said == "Chapter 11 · Cy Young\n\nNot graded: submitted nothing\n", "no grade shown"
    assert "Lab 11.1" in (feedback / "lilei.txt").read_text(encoding="utf-8")
    listed = ("--names", CANVAS, "--class-list", str(class_list))
    again = cli("checkpoint", "11", "--roster", str(roster), *listed)
    assert f"  {'gradebook-feedback':<24} feedback files (rewritten" in again.stdout
    book = json.loads((roster / "gradebook.json").read_text(encoding="utf-8"))
    before, copies = {row["learner"]: row for row in book["learners"]}, book["copies"]
    others = (feedback / "lovelaceada.txt").read_bytes()
    (feedback / "lovelaceada.txt").write_bytes(others + b"(as the whole run wrote it)\n")

    # lilei hands in a fixed workspace: regraded alone, every other row as it was
    fixed = roster / "lilei_12346_67891_practice"
    for file in manifest.files_with_role("learner"):
        (fixed / file.path).write_bytes((kit_root() / file.reference).read_bytes())
    run = cli("checkpoint", "11", "--roster", str(roster), *listed, "--only", "lilei")
    assert run.returncode == 0, run.stdout + run.stderr
    assert f"Regraded 李雷 (lilei) into {roster / 'gradebook.json'}; the other" in run.stdout
    assert "lovelaceada" not in run.stdout.split("Score:")[0]
    book = json.loads((roster / "gradebook.json").read_text(encoding="utf-8"))
    after = {row["learner"]: row for row in book["learners"]}
    assert sorted(after) == sorted(before)
    assert (after["lilei"]["score"], before["lilei"]["score"]) == (100, 0)
    assert after["lilei"]["student"]["id"] == "S2"
    assert after["lovelaceada"] == before["lovelaceada"]
    assert after["Cy Young"] == before["Cy Young"]
    assert book["regraded"]["learner"] == "lilei" and book["copies"] == copies
    [lilei] = [
        r
        for r in csv.DictReader((roster / "gradebook.csv").open(encoding="utf-8-sig"))
        if r["learner"] == "lilei"
    ]
    assert lilei["score"] == "100"
    canvas_rows = (roster / "gradebook-canvas.csv").read_text(encoding="utf-8").splitlines()
    assert canvas_rows[2] == "李雷,,S2,lilei@uni.edu,,100"
    assert re.search(r"^grade +100/100$", (feedback / "lilei.txt").read_text("utf-8"), re.M)
    kept = (feedback / "lovelaceada.txt").read_bytes()
    assert kept == others + b"(as the whole run wrote it)\n", "a regrade rewrites only its own"
    outputs = ("gradebook-canvas.csv", "gradebook-moodle.csv", "gradebook-summary.html")
    for name in (*outputs, "gradebook-summary-anonymous.html"):
        assert f"  {name:<24} a gradebook (replaced" in again.stdout, again.stdout


def test_a_class_list_goes_with_a_roster_and_a_bad_one_stops_before_grading(
    tmp_path: Path,
) -> None:
    alone = cli("checkpoint", "11", "--class-list", "class.csv")
    assert alone.returncode == 2 and "--class-list and --only go with --roster" in alone.stderr
    bad = _class_list(tmp_path, "name,email\nAda,a@x\n")
    run = cli("checkpoint", "11", "--roster", str(tmp_path), "--class-list", str(bad))
    assert run.returncode == 2, run.stdout + run.stderr
    assert f"{bad}: line 1: the class list has no column id" in run.stderr


def test_a_gradebook_reads_back_row_for_row_and_a_wrong_field_is_named(
    manifest: Manifest, tmp_path: Path
) -> None:
    from test_class_summary import _result

    row = graded_row("ada", "r/ada", _result(manifest, {"11.3#002"}), ["late"], limits=("cpu",))
    row = replace(row, student={"id": "S1", "name": "Ada", "email": "a@x"}, late=True)
    row = replace(row, hints={"11.2": 1, "11.3": 3})
    absent = ungraded_row("Cy", "", manifest.required_labs, Status.MISSING, "submitted nothing")
    path = tmp_path / "gradebook.json"
    path.write_text(gradebook_json("11", [row, absent], {"copies": {"pairs": 0}}), "utf-8")
    run, rows = read_gradebook(path, "11")
    assert rows == [row, absent] and run == {"copies": {"pairs": 0}}
    data = json.loads(path.read_text(encoding="utf-8"))
    data["learners"][1]["labs"][2]["status"] = "great"
    path.write_text(json.dumps(data), encoding="utf-8")
    with pytest.raises(GradebookError, match=r"learners\[1\]\.labs\[2\]\.status: must be one of"):
        read_gradebook(path, "11")
    with pytest.raises(GradebookError, match="no gradebook to regrade into"):
        read_gradebook(tmp_path / "none.json", "11")


def test_a_decoy_named_like_a_classmate_never_takes_her_row(manifest: Manifest) -> None:
    """An entry named like a classmate (``lovelaceada``, an unimplemented workspace, sorting
    first) beside her own (``ada``, 100/100). Before: the decoy took her class-list row, the
    Canvas export gave her its 0, and her real row was 'not on the class list'. Now a student two
    entries name is contested: nothing is exported for her and both entries are listed."""
    from test_class_summary import _result

    labs = manifest.required_labs
    real = graded_row("ada", "r/ada", _result(manifest, set()), ())
    fresh = replace(real, learner="lovelaceada", workspace="r/lovelaceada.zip")
    decoy = replace(fresh, labs=tuple(replace(lab, score=0) for lab in real.labs))
    assert (real.score, decoy.score) == (100, 0)
    joined = join_class_list([decoy, real], read_class_list_text(CLASS), labs)
    assert joined.contested == (("Lovelace, Ada (S1)", ("lovelaceada", "ada")),)
    assert joined.unlisted == () and joined.ambiguous == ()
    by_learner = {row.learner: row for row in joined.grades}
    assert by_learner["ada"].student is None and by_learner["lovelaceada"].student is None
    held = by_learner["Lovelace, Ada"]
    assert (held.graded, held.status, (held.student or {})["id"]) == (False, "error", "S1")
    assert held.note == "2 entries name this student, so none is exported: lovelaceada, ada"
    canvas = list(csv.reader(io.StringIO(canvas_csv("11", joined.grades, Exports(True)))))
    assert [row[2:] for row in canvas[1:] if row[2] == "S1"] == [["S1", "ada@uni.edu", "", ""]]
    assert without_class_list(joined.grades) == [replace(decoy), replace(real)]


def test_a_contested_student_is_listed_on_the_terminal(manifest: Manifest, tmp_path: Path) -> None:
    roster = tmp_path / "roster"
    create_workspace(manifest, kit_root(), roster / "ada")
    create_workspace(manifest, kit_root(), roster / "lovelaceada")
    run = cli(
        "checkpoint",
        *("11", "--roster", str(roster), "--class-list", str(_class_list(tmp_path))),
        *("--gradebook", str(tmp_path / "grades")),
    )
    assert run.returncode == 0, run.stdout + run.stderr
    out = run.stdout
    assert "Students named by more than one entry (1): nothing is exported for them" in out
    assert "  Lovelace, Ada (S1): ada, lovelaceada" in out
    canvas = (tmp_path / "grades" / "gradebook-canvas.csv").read_text(encoding="utf-8")
    assert '"Lovelace, Ada",,S1,ada@uni.edu,,\n' in canvas
    assert "NOT GRADED (3)" in out, out


def test_a_regrade_keeps_the_whole_runs_copy_flags(manifest: Manifest, tmp_path: Path) -> None:
    """Before: ``--only ada`` wiped ada's class-wide copy flags (``like ben?``) from the CSV and
    the JSON while ``copies`` still listed them: one learner compared with nobody. The copy check
    is the whole run's: the regraded row keeps the flags it gave."""
    roster = tmp_path / "roster"
    for name in ("ada", "ben"):  # the same independent solution, handed in twice
        create_workspace(manifest, kit_root(), roster / name)
        for lab in manifest.required_labs:
            solve_lab(manifest, kit_root(), roster / name, lab.id, donors=donors("first"))
    grades = ("--gradebook", str(tmp_path / "grades"))
    whole = cli("checkpoint", "11", "--roster", str(roster), *grades)
    assert whole.returncode == 0, whole.stdout + whole.stderr

    def ada() -> tuple[dict[str, str], dict[str, object]]:
        book = json.loads((tmp_path / "grades" / "gradebook.json").read_text(encoding="utf-8"))
        table = (tmp_path / "grades" / "gradebook.csv").open(encoding="utf-8-sig")
        [row] = [row for row in csv.DictReader(table) if row["learner"] == "ada"]
        [data] = [row for row in book["learners"] if row["learner"] == "ada"]
        return row, data

    row, data = ada()
    assert any(flag.startswith("like ben?") for flag in data["flags"]), data["flags"]
    regrade = cli("checkpoint", "11", "--roster", str(roster), *grades, "--only", "ada")
    assert regrade.returncode == 0, regrade.stdout + regrade.stderr
    after_row, after_data = ada()
    assert after_data["flags"] == data["flags"] and after_row["flags"] == row["flags"]
    assert after_data["score"] == data["score"] == 100
