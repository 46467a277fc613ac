"""``checkpoint 11 --roster`` over submissions as they arrive: folders, archives, repositories.

One roster is graded once for the module. It holds what a course platform's download and a
GitHub Classroom clone put side by side: folders, a zip, a tar.gz, a zip wrapped in one folder,
a Canvas-named zip, a learner who handed in twice, a git repository (with a config that would
run a program if git were run on it), three refused archives (a zip slip, a zip bomb, a
symbolic link), hostile workspaces of ``hostile.py`` packed into archives, and a loose file.
Each is graded or refused with its reason, and nothing is left on disk.
"""

from __future__ import annotations

import csv
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import sysconfig
import tarfile
import tempfile
import zipfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from harness_support import cli, kill_processes_with
from hostile import DAEMON_TOKEN, PTH_NAME, attacks
from packing import committed, tar_folder, zip_folder, zip_members, zip_symlink
from solutions import solve_lab
from test_roster import assert_earns_nothing, assert_honest_fresh

from course.harness.kit import kit_root
from course.harness.manifest import Manifest
from course.harness.workspace import create_workspace

CANVAS = r"(?P<learner>[^_]+)_(?:late_)?\d+_\d+_"
ONE_LAB = ["passed"] + ["pending"] * 4
PACKED_ATTACKS = {"h-forge": "zip", "h-conftest": "tar.gz", "h-shadow": "wrapped zip"}


@dataclass(frozen=True)
class Intake:
    """One roster run over mixed submissions: its output, gradebook and surroundings."""

    run: subprocess.CompletedProcess[str]
    roster: Path
    outside: Path
    temporary: Path
    before: list[str]
    commit: str
    rows: list[dict[str, str]]
    book: dict[str, Any]

    def row(self, learner: str) -> dict[str, str]:
        [row] = [row for row in self.rows if row["learner"] == learner]
        return row

    def learner(self, learner: str) -> dict[str, Any]:
        [row] = [row for row in self.book["learners"] if row["learner"] == learner]
        return row


def _workspace(manifest: Manifest, folder: Path, solved: int = 0) -> Path:
    create_workspace(manifest, kit_root(), folder)
    for lab in manifest.required_labs[:solved]:
        solve_lab(manifest, kit_root(), folder, lab.id)
    return folder


def _submissions(manifest: Manifest, roster: Path, work: Path) -> str:
    """Lay out the class; returns the git repository's commit."""
    _workspace(manifest, roster / "ada", solved=1)
    solved = _workspace(manifest, work / "solved" / "practice-11", solved=1)
    fresh = _workspace(manifest, work / "fresh" / "practice-11")
    zip_folder(solved, roster / "ben.zip")
    tar_folder(fresh, roster / "cy.tar.gz")
    zip_folder(solved.parent, roster / "dee.zip")
    zip_folder(fresh, roster / "lovelaceada_12345_67890_practice-11.zip")
    older = _workspace(manifest, roster / "fay", solved=1)
    tar_folder(fresh, roster / "fay.tgz", "practice-11/")
    os.utime(older, (1_000_000_000, 1_000_000_000))
    repository = _workspace(manifest, roster / "gil", solved=1)
    commit = committed(repository)
    with (repository / "pi_course" / "groups.py").open("a") as edited:
        edited.write("# edited after the commit\n")
    with (repository / ".git" / "config").open("a") as config:
        config.write(f"[core]\n\tfsmonitor = touch {work / 'git-ran'}\n")
    _without_a_workspace(manifest, roster, work)
    zip_members(roster / "slip.zip", {"practice-11/../../../escaped.txt": b"owned\n"})
    zip_members(roster / "bomb.zip", {"zeros.bin": bytes(20 * 1024 * 1024)})
    zip_symlink(roster / "link.zip", "practice-11", "/home")
    (roster / "notes.txt").write_text("grade by Friday\n")
    return commit


LAB_FILES = ("summary.py", "groups.py", "context.py", "compaction.py")
WITHOUT_A_WORKSPACE = {
    # learner: how the lab files arrived (the row's source), each with Lab 11.1 solved
    "ivy": "files (lab files)",  # Canvas's multi-file upload: each file on its own, named
    "jo": "folder (lab files)",  # Moodle's folder per learner, holding the files
    "kay": "zip (lab files)",  # a zip of pi_course/ only
    "lou": "zip (lab files)",  # a workspace zipped by a file manager: its hidden marker lost
}


def _without_a_workspace(manifest: Manifest, roster: Path, work: Path) -> None:
    """Lab files handed in without their workspace, as platforms and file managers hand them
    over; an empty zip; a plain tar."""
    solved = _workspace(manifest, work / "one-lab" / "practice-11", solved=1)
    for name in LAB_FILES:
        shutil.copy(solved / "pi_course" / name, roster / f"ivy_31_41_{name}")
    (roster / "jo").mkdir()
    for name in LAB_FILES:
        shutil.copy(solved / "pi_course" / name, roster / "jo" / name)
    (roster / "jo" / "report.pdf").write_bytes(b"%PDF")
    zip_folder(solved / "pi_course", roster / "kay_32_42_pi_course.zip", "pi_course/")
    with zipfile.ZipFile(roster / "lou_33_43_practice-11.zip", "w") as stripped:
        for path in sorted(solved.rglob("*")):
            inside = path.relative_to(solved).as_posix()
            if path.is_file() and not any(part.startswith(".") for part in inside.split("/")):
                stripped.write(path, inside)
    zip_members(roster / "mo_34_44_practice-11.zip", {})
    fresh = _workspace(manifest, work / "plain-tar" / "practice-11")
    with tarfile.open(roster / "nat_35_45_practice-11.tar", "w") as plain:
        for path in sorted(fresh.rglob("*")):
            plain.add(path, path.relative_to(fresh).as_posix(), recursive=False)


def _packed_attacks(manifest: Manifest, roster: Path, work: Path) -> None:
    for attack in attacks([roster / "gradebook.csv"]):
        if attack.learner in PACKED_ATTACKS:
            workspace = _workspace(manifest, work / attack.learner / "practice-11")
            attack.apply(workspace)
            how = PACKED_ATTACKS[attack.learner]
            if how == "zip":
                zip_folder(workspace, roster / f"{attack.learner}.zip")
            elif how == "tar.gz":
                tar_folder(workspace, roster / f"{attack.learner}.tar.gz")
            else:
                zip_folder(workspace.parent, roster / f"{attack.learner}.zip")


@pytest.fixture(scope="module")
def intake(manifest: Manifest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Intake]:
    base = tmp_path_factory.mktemp("intake")
    roster, work = base / "roster", base / "work"
    for folder in (roster, work):
        folder.mkdir()
    # The roster's own temporary folder, outside pytest's private one: a root grader starts the
    # sandbox as nobody where nobody can run its Python, and nobody must reach what it unpacks.
    temporary = Path(tempfile.mkdtemp(prefix="course-intake-test-"))
    temporary.chmod(0o755)
    commit = _submissions(manifest, roster, work)
    _packed_attacks(manifest, roster, work)
    before = sorted(os.listdir(roster))
    try:
        run = cli(
            "checkpoint",
            *("11", "--roster", str(roster), "--names", CANVAS, "--timeout", "5", "--jobs", "2"),
            env={"TMPDIR": str(temporary)},
        )
        rows = list(csv.DictReader((roster / "gradebook.csv").open(encoding="utf-8-sig")))
        book = json.loads((roster / "gradebook.json").read_text(encoding="utf-8"))
        yield Intake(run, roster, base, temporary, before, commit, rows, book)
    finally:
        kill_processes_with(DAEMON_TOKEN)
        (Path(sysconfig.get_paths()["purelib"]) / PTH_NAME).unlink(missing_ok=True)
        shutil.rmtree(temporary, ignore_errors=True)


def test_every_entry_is_a_row_or_listed_and_the_closing_line_counts_both(intake: Intake) -> None:
    assert intake.run.returncode == 0, intake.run.stdout + intake.run.stderr
    entries = {
        name
        for row in intake.rows
        for path in row["workspace"].split(", ")  # files at the roster's top: each named
        for name in [Path(path).relative_to(intake.roster).parts[0] if "/" in path else path]
    }
    assert sorted([*entries, "notes.txt"]) == intake.before, "each entry, once"
    out = intake.run.stdout.splitlines()
    skipped = out.index("Not in the gradebook (1):")
    why = "a file that is not a submission (not a folder, nor an archive: .zip, .tar.gz, .tgz, "
    why += ".tar, .tar.bz2, .tbz2, .tar.xz, .txz)"
    assert out[skipped + 1].split(None, 1) == ["notes.txt", why]
    assert out[-1] == f"Roster: {len(intake.rows)} row(s) in the gradebook, 1 entry not in it " + (
        "(listed above)"
    )
    assert [row["learner"] for row in intake.book["learners"]] == [
        r["learner"] for r in intake.rows
    ]


def test_archives_are_graded_as_their_folders_are(intake: Intake) -> None:
    for learner, source, inside in (
        ("ada", "folder", "ada"),
        ("ben", "zip", "ben.zip"),
        ("dee", "zip", "dee.zip/practice-11"),
    ):
        row = intake.row(learner)
        labs = [lab["status"] for lab in intake.learner(learner)["labs"]]
        assert (row["status"], row["passed"], labs) == ("pending", "3", ONE_LAB), row
        assert (row["source"], row["workspace"]) == (source, str(intake.roster / inside))
    cy = intake.row("cy")
    assert_honest_fresh(cy)
    assert cy["source"] == "tar.gz"


def test_lab_files_without_a_workspace_are_graded_in_the_kits_scaffold(intake: Intake) -> None:
    """Loose files named for their learner, a learner's folder of files, a zip of pi_course/
    only, a zip that lost its hidden marker: each graded as Gradescope grades it (before: no
    grade, 'not a submission', or 'refused archive' and an error)."""
    for learner, source in WITHOUT_A_WORKSPACE.items():
        row = intake.row(learner)
        labs = [lab["status"] for lab in intake.learner(learner)["labs"]]
        assert (row["status"], row["score"], labs) == ("pending", "20", ONE_LAB), row
        assert row["source"] == source and "refused archive" not in row["flags"], row
        said = intake.learner(learner)["notes"][0]
        assert said.startswith("lab files put in the kit's scaffold (no workspace handed in): ")
        assert intake.learner(learner)["graded"] is True
    ivy = intake.learner("ivy")["notes"][0]
    assert "ivy_31_41_summary.py → pi_course/summary.py" in ivy, ivy
    assert "also uploaded, not graded: report.pdf" in intake.learner("jo")["notes"]
    assert intake.row("ivy")["workspace"].startswith(str(intake.roster / "ivy_31_41_"))


def test_an_empty_zip_is_an_empty_submission_and_a_plain_tar_is_read(intake: Intake) -> None:
    empty = intake.row("mo")
    assert (empty["status"], empty["score"], empty["flags"]) == ("skipped", "", ""), empty
    assert empty["note"] == "mo_34_44_practice-11.zip: empty submission"
    assert intake.learner("mo")["graded"] is False and intake.learner("mo")["score"] is None
    assert_honest_fresh(intake.row("nat"))
    assert intake.row("nat")["source"] == "tar"


def test_a_platforms_naming_gives_the_learners_name(intake: Intake) -> None:
    row = intake.row("lovelaceada")
    assert_honest_fresh(row)
    assert row["workspace"].endswith("lovelaceada_12345_67890_practice-11.zip")
    unmatched = [e for e in intake.before if not re.match(CANVAS, e) and e != "notes.txt"]
    assert intake.book["names"] == {"pattern": CANVAS, "unmatched": unmatched}
    line = f"--names did not match {len(unmatched)} entries, each named by its whole name: "
    assert line + ", ".join(unmatched) in intake.run.stdout


def test_two_submissions_of_one_learner_are_both_listed_and_the_newest_graded(
    intake: Intake,
) -> None:
    # one key per row: the graded one keeps the name, the older one is fay#2
    newer, older = intake.row("fay"), intake.row("fay#2")
    assert (older["source"], newer["source"]) == ("folder", "tgz")
    assert older["status"] == "skipped"
    assert older["note"] == "an older submission of fay: fay.tgz is graded instead"
    assert_honest_fresh(newer)  # the folder was solved; the newer archive is not
    assert "several submissions" in newer["flags"]
    [graded] = [r for r in intake.book["learners"] if r["learner"] == "fay" and r["tests"]]
    assert "also handed in fay (older, not graded)" in graded["notes"]


def test_a_git_repository_is_graded_at_its_commit_and_git_is_never_run(intake: Intake) -> None:
    row = intake.row("gil")
    assert (row["status"], row["passed"], row["source"]) == ("pending", "3", "git")
    assert row["commit"] == intake.commit
    assert not any("commit is not known" in note for note in intake.learner("gil")["notes"])
    assert "changed since the commit" in row["flags"]
    changed = "changed since the commit, graded as they are: pi_course/groups.py"
    assert changed in intake.learner("gil")["notes"]
    assert "changed since the commit" not in intake.row("ada")["flags"]
    assert not (intake.outside / "work" / "git-ran").exists()
    assert all(row["commit"] == "" for row in intake.rows if row["learner"] != "gil")


def test_unsafe_archives_are_refused_with_their_reason(intake: Intake) -> None:
    for learner, why in (
        ("slip", "slip.zip: refused: 'practice-11/../../../escaped.txt': a path that climbs out"),
        ("bomb", "bomb.zip: refused: 'zeros.bin' declares 20971520 bytes"),
        ("link", "link.zip: refused: 'practice-11': a symbolic link"),
    ):
        row = intake.row(learner)
        assert (row["status"], row["passed"], row["flags"]) == ("error", "0", "refused archive")
        assert row["note"].startswith(why), row["note"]
    assert "(a zip bomb?)" in intake.row("bomb")["note"]
    assert not list(intake.outside.rglob("escaped.txt"))


def test_nothing_is_left_on_disk(intake: Intake) -> None:
    assert list(intake.temporary.iterdir()) == [], "every unpacked archive is removed"
    after = sorted(os.listdir(intake.roster))
    made = ["gradebook.csv", "gradebook.json", "assignment-11.toml", "gradebook-summary.html"]
    made += ["gradebook-summary-anonymous.html"]  # the same page without names
    made += ["gradebook-feedback"]  # a file per learner, nothing else
    assert after == sorted([*intake.before, *made])


def test_hostile_workspaces_in_archives_are_graded_as_they_are_in_folders(intake: Intake) -> None:
    forged = intake.row("h-forge")
    assert_earns_nothing(forged)
    assert "a forged report: its functions are the starter's stubs" in forged["flags"]
    assert "the test report says 3/3 tests passed, but probes pending" in forged["note"]
    conftest = intake.row("h-conftest")
    assert_honest_fresh(conftest)
    assert {"files outside the curriculum", "edited test files"} <= set(
        conftest["flags"].split("; ")
    )
    shadow = intake.row("h-shadow")
    assert_honest_fresh(shadow)
    assert shadow["workspace"] == str(intake.roster / "h-shadow.zip" / "practice-11")
    notes = intake.learner("h-shadow")["notes"]
    assert any("pytest/, sitecustomize.py" in note for note in notes), notes


def _readme_intake_commands() -> list[str]:
    readme = (kit_root() / "docs" / "instructors.md").read_text(encoding="utf-8")
    section = readme.split("**Submissions as they arrive.**", 1)[1]
    block = section.split("```sh\n", 1)[1].split("```", 1)[0]
    return block.strip().splitlines()


def test_the_readmes_intake_commands_work_as_shown(manifest: Manifest, tmp_path: Path) -> None:
    """Each command of the three intakes (docs/instructors.md), run on a roster laid out as it
    describes."""
    _workspace(manifest, tmp_path / "submissions" / "ada")
    _workspace(manifest, tmp_path / "submissions" / "ben" / "practice-11")
    fresh = _workspace(manifest, tmp_path / "work" / "practice-11")
    (tmp_path / "downloads").mkdir()
    zip_folder(fresh, tmp_path / "downloads" / "lovelaceada_12345_67890_practice.zip")
    tar_folder(fresh, tmp_path / "downloads" / "smithben_late_12346_67891_p.tgz", "p/")
    committed(_workspace(manifest, tmp_path / "classroom" / "practice-11-ada"))
    expected = {
        "submissions": [("ada", "folder"), ("ben/practice-11", "folder")],
        "downloads": [("lovelaceada", "zip"), ("smithben", "tgz")],
        "classroom": [("ada", "git")],
    }
    commands = _readme_intake_commands()
    assert len(commands) == len(expected)
    for command in commands:
        words = shlex.split(command, comments=True)
        assert words[:3] == [".venv/bin/checkpoint", "11", "--roster"], command
        run = subprocess.run(
            [sys.executable, "-m", "course.cli.checkpoint", *words[1:]],
            cwd=tmp_path,
            capture_output=True,
            text=True,
            timeout=300,
            check=False,
        )
        assert run.returncode == 0, command + run.stdout + run.stderr
        rows = list(
            csv.DictReader((tmp_path / words[3] / "gradebook.csv").open(encoding="utf-8-sig"))
        )
        assert [(r["learner"], r["source"]) for r in rows] == expected[words[3]], command
        assert all(row["status"] == "pending" for row in rows), rows


def test_a_names_pattern_that_cannot_name_anyone_is_a_usage_error(tmp_path: Path) -> None:
    for pattern, why in (
        (r"(\w+)_\d+_", r"has no (?P<learner>...) group to take the name from"),
        ("(?P<learner>", "is not a regular expression: missing ), unterminated subpattern"),
    ):
        run = cli("checkpoint", "11", "--roster", str(tmp_path), "--names", pattern)
        assert run.returncode == 2, run.stderr
        assert run.stderr.startswith(f"checkpoint: --names {pattern!r} {why}"), run.stderr
    elsewhere = cli("checkpoint", "11", "--names", "(?P<learner>.+)")
    assert elsewhere.returncode == 2
    said = "--gradebook and --names go with --roster"
    assert said in elsewhere.stderr
