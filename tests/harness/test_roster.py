"""``checkpoint CHAPTER --roster DIR``: one gradebook row per learner, whatever their code does."""

from __future__ import annotations

import csv
import json
from pathlib import Path

from harness_support import cli, replace_in

from course.harness.kit import kit_root
from course.harness.manifest import Manifest
from course.harness.solutions import solve_lab
from course.harness.workspace import create_workspace


def test_a_roster_of_solved_partial_pending_broken_and_hostile_workspaces(
    manifest: Manifest, tmp_path: Path
) -> None:
    kit = kit_root()
    roster = tmp_path / "class"

    def workspace(name: str, solved: int) -> Path:
        folder = roster / name
        create_workspace(manifest, kit, folder)
        for lab in manifest.required_labs[:solved]:
            solve_lab(manifest, kit, folder, lab.id)
        return folder

    workspace("ada", solved=5)
    workspace("ben", solved=2)
    workspace("cy", solved=0)
    broken = workspace("dee", solved=5)
    (broken / "pi_course" / "groups.py").write_text("def split_interactions(:\n")
    hostile = workspace("eve", solved=5)
    replace_in(  # loops forever once a second compaction exists: one Lab 11.5 test
        hostile / "pi_course" / "compaction.py",
        "def latest_compaction(path: Sequence[SessionEntry]) -> int | None:\n",
        "def latest_compaction(path: Sequence[SessionEntry]) -> int | None:\n"
        "    while any(entry.id == 'compact-2' for entry in path):\n"
        "        pass\n",
    )
    (roster / "fay" / "nested").mkdir(parents=True)  # no workspace at all
    create_workspace(manifest, kit, roster / "gus" / "practice-11")  # one level down

    books = tmp_path / "books"
    run = cli(
        "checkpoint",
        "11",
        "--roster",
        "class",
        "--gradebook",
        "books",
        "--timeout",
        "2",
        cwd=tmp_path,
    )
    assert run.returncode == 0, run.stdout + run.stderr
    assert "7/7" in run.stderr, "the progress bar reaches every workspace"

    rows = {r["learner"]: r for r in csv.DictReader((books / "gradebook.csv").open())}
    assert list(rows) == ["ada", "ben", "cy", "dee", "eve", "fay", "gus/practice-11"]
    expected = {
        "ada": ("passed", "14", ["passed"] * 5),
        "ben": ("pending", "6", ["passed"] * 2 + ["pending"] * 3),
        "cy": ("pending", "0", ["pending"] * 5),
        "dee": ("error", "0", ["error"] * 5),
        "eve": ("timeout", "13", ["passed"] * 4 + ["timeout"]),
        "fay": ("error", "0", ["error"] * 5),
        "gus/practice-11": ("pending", "0", ["pending"] * 5),
    }
    for learner, (status, passed, labs) in expected.items():
        row = rows[learner]
        assert (row["status"], row["passed"], row["total"]) == (status, passed, "14"), row
        assert [row[f"status {lab.id}"] for lab in manifest.required_labs] == labs, row
    assert [rows["ben"][f"lab {lab.id}"] for lab in manifest.required_labs] == [
        "3/3",
        "3/3",
        "0/3",
        "0/2",
        "0/3",
    ]
    assert "no practice workspace found" in rows["fay"]["note"]

    book = json.loads((books / "gradebook.json").read_text(encoding="utf-8"))
    assert book["chapter"] == "11"
    assert [g["learner"] for g in book["learners"]] == list(rows)
    assert book["learners"][0]["labs"][0] == {
        "id": "11.1",
        "passed": 3,
        "total": 3,
        "status": "passed",
    }
