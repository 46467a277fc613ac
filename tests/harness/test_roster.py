"""``checkpoint 11 --roster``: a class of honest and hostile workspaces, graded into one gradebook.

One roster of twenty workspaces is graded once for the module: seven honest ones (complete,
partial, fresh, broken, hanging, wrong, nested) and thirteen that attack the grader from a
fresh workspace, whose honest grade is every lab pending with 0 tests. Around them sit what a
shared submissions folder collects: symlinked learners, a stray folder, a folder named like
the gradebook, a symlinked gradebook file, and workspaces that cannot be read. Each test
checks one attack against the same gradebook: the honest grade or a flagged row, and no row
of anyone else changed.
"""

from __future__ import annotations

import csv
import json
import os
import subprocess
import sysconfig
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from harness_support import (
    HANGS,
    cli,
    kill_processes_with,
    processes_with,
    replace_in,
    roster_workspace,
)
from hostile import DAEMON_TOKEN, PTH_NAME, TTY_LINE, attacks

from course.harness.kit import chapter_fingerprints, kit_root, short
from course.harness.manifest import Manifest
from course.sandboxed.marker import MARKER

LABS = ["11.1", "11.2", "11.3", "11.4", "11.5"]
HONEST = {
    # learner: (status, tests passed, score: 20 points a lab passed whole, per-lab statuses)
    "ada": ("passed", 14, 100, ["passed"] * 5),
    "ben": ("pending", 6, 40, ["passed"] * 2 + ["pending"] * 3),
    "cy": ("pending", 0, 0, ["pending"] * 5),
    # a syntax error in groups.py costs Lab 11.2 alone: each other lab is graded on its own;
    # the counts are the learner's own run's, where every test stops at the import
    "dee": ("error", 0, 80, ["passed", "error", "passed", "passed", "passed"]),
    "eve": ("timeout", 11, 80, ["passed"] * 4 + ["timeout"]),
    # Lab 11.4's mistake fails both its tests and its cases: a failed lab earns nothing
    "fay": ("failed", 9, 60, ["passed"] * 3 + ["failed", "pending"]),
    "gus/practice-11": ("passed", 14, 100, ["passed"] * 5),
    # begun from another scaffold than the kit's: graded as any other, and noted
    "hal": ("passed", 14, 100, ["passed"] * 5),
}
OLD_SCAFFOLD = "0123456789ab" + "0" * 52
"""The starter fingerprint ``hal``'s marker says it began from (not the kit's)."""


@dataclass(frozen=True)
class GradedClass:
    """One roster run: its output, the gradebook's rows and where things were."""

    run: subprocess.CompletedProcess[str]
    seconds: float
    roster: Path
    victims: dict[Path, str]
    rows: dict[str, dict[str, str]]
    book: dict[str, Any]

    def learner(self, name: str) -> dict[str, Any]:
        return next(row for row in self.book["learners"] if row["learner"] == name)


_workspace = roster_workspace


def _honest(manifest: Manifest, roster: Path) -> None:
    _workspace(manifest, roster, "ada", solved=5)
    _workspace(manifest, roster, "ben", solved=2)
    _workspace(manifest, roster, "cy")
    broken = _workspace(manifest, roster, "dee", solved=5)
    (broken / "pi_course" / "groups.py").write_text("def split_interactions(:\n")
    hangs = _workspace(manifest, roster, "eve", solved=5)
    replace_in(  # never returns on a path holding a compaction: all of Lab 11.5 (waiting,
        # not spinning: only the timeout verdict is wanted)
        hangs / "pi_course" / "compaction.py",
        "def latest_compaction(path: Sequence[SessionEntry]) -> int | None:\n",
        "def latest_compaction(path: Sequence[SessionEntry]) -> int | None:\n"
        f"    if any(entry.id.startswith('compact') for entry in path):\n        {HANGS}\n",
    )
    wrong = _workspace(manifest, roster, "fay", solved=4)
    replace_in(  # the parent is taken from first kept instead of the leaf
        wrong / "pi_course" / "compaction.py",
        '            "parentId": path[-1].id,\n',
        '            "parentId": first_kept_entry_id,\n',
    )
    (roster / "gus").mkdir()
    _workspace(manifest, roster, "gus/practice-11", solved=5)
    older = _workspace(manifest, roster, "hal", solved=5)
    marker = (older / MARKER).read_text(encoding="utf-8")
    began = marker.split('starter_fingerprint = "', 1)[1].split('"', 1)[0]
    (older / MARKER).write_text(marker.replace(began, OLD_SCAFFOLD), encoding="utf-8")


def _surroundings(manifest: Manifest, roster: Path, outside: Path) -> dict[Path, str]:
    """Links, strays and unreadable workspaces; returns the files that must stay as they are."""
    (roster / "mallory").symlink_to("ada")
    (roster / "zed").symlink_to("/")
    (roster / "notes" / "week-1").mkdir(parents=True)
    (roster / "notes" / "todo.txt").write_text("grade the class\n")
    (roster / "gradebook.json").mkdir()  # a learner folder with the gradebook's name
    fifo = _workspace(manifest, roster, "ivy")
    (fifo / MARKER).unlink()
    os.mkfifo(fifo / MARKER)
    linked = _workspace(manifest, roster, "jon")
    (linked / "pi_course" / "summary.py").unlink()
    (linked / "pi_course" / "summary.py").symlink_to("../../ada/pi_course/summary.py")
    victims = {outside / "victim.csv": "precious\n", outside / "victim.json": "{}\n"}
    for path, text in victims.items():
        path.write_text(text)
    (roster / "gradebook-2.csv").symlink_to(outside / "victim.csv")
    (roster / "gradebook-2.json").symlink_to(outside / "victim.json")
    return victims


def _pth() -> Path:
    return Path(sysconfig.get_paths()["purelib"]) / PTH_NAME


@pytest.fixture(scope="module")
def graded(manifest: Manifest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[GradedClass]:
    base = tmp_path_factory.mktemp("class")
    roster = base / "roster"
    roster.mkdir()
    _honest(manifest, roster)
    targets = [roster / name for name in ("gradebook.csv", "gradebook-2.csv", "gradebook-2.json")]
    for attack in attacks(targets):
        attack.apply(_workspace(manifest, roster, attack.learner))
    victims = _surroundings(manifest, roster, base)
    started = time.monotonic()
    try:
        run = cli("checkpoint", "11", "--roster", str(roster), "--timeout", "2", "--jobs", "2")
        seconds = time.monotonic() - started
        rows = {
            r["learner"]: r
            for r in csv.DictReader((roster / "gradebook-2.csv").open(encoding="utf-8-sig"))
        }
        book = json.loads((roster / "gradebook-2.json").read_text(encoding="utf-8"))
        yield GradedClass(run, seconds, roster, victims, rows, book)
    finally:
        kill_processes_with(DAEMON_TOKEN)  # only if an attack ever got out
        _pth().unlink(missing_ok=True)


def _statuses(row: dict[str, str]) -> list[str]:
    return [row[f"status {lab}"] for lab in LABS]


def assert_honest_fresh(row: dict[str, str]) -> None:
    """A fresh workspace's honest grade: every lab pending, nothing passed."""
    assert (row["status"], row["passed"], row["total"]) == ("pending", "0", "14"), row
    assert_earns_nothing(row)
    assert [row[f"lab {lab}"] for lab in LABS] == ["0/3", "0/3", "0/3", "0/2", "0/3"], row


def assert_earns_nothing(row: dict[str, str]) -> None:
    """Whatever its tests claim: no score, every lab pending, no probe case agreed."""
    assert (row["status"], row["score"], row["agreed"]) == ("pending", "0", "0"), row
    assert _statuses(row) == ["pending"] * 5, row
    assert all(row[f"cases {lab}"].startswith("0/") for lab in LABS), row


def test_the_whole_class_is_graded_into_one_gradebook(graded: GradedClass) -> None:
    assert graded.run.returncode == 0, graded.run.stdout + graded.run.stderr
    workspaces = [*HONEST, *(a.learner for a in attacks([])), "ivy", "jon"]
    listed = ["gradebook.json", "mallory", "notes", "zed"]
    assert sorted(graded.rows) == sorted(workspaces + listed)
    assert [row["learner"] for row in graded.book["learners"]] == list(graded.rows)
    assert f"{len(graded.rows)}/{len(graded.rows)}" in graded.run.stderr, "progress ends full"
    # ivy and jon cannot be read: rows, but not graded, like the four entries listed
    said = f"Graded {len(workspaces) - 2} workspace(s) of chapter 11 (not graded: "
    assert said in graded.run.stdout
    assert graded.book["sandbox"]["sandboxed"] is True
    limits = graded.learner("ada")["limits"]
    assert limits[0].startswith("own user, PID, network, IPC and UTS namespaces")
    assert graded.book["probes"]["cases"] > 100


def test_every_honest_row_is_right(graded: GradedClass) -> None:
    for learner, (status, passed, score, labs) in HONEST.items():
        row = graded.rows[learner]
        why = [(lab["status"], lab["reason"]) for lab in graded.learner(learner)["labs"]]
        expected = (status, str(passed), str(score), "100", "14")
        got = (row["status"], row["passed"], row["score"], row["max_score"], row["total"])
        assert got == expected, why
        assert _statuses(row) == labs, row
        shown = f"{score}/100".rjust(len("100/100"))  # right-aligned
        assert f"  {learner:<24} {row['status']:<8} {shown}  " in graded.run.stdout, learner
    assert [graded.rows["ben"][f"lab {lab}"] for lab in LABS] == ["3/3", "3/3", "0/3", "0/2", "0/3"]
    assert "copy of the reference? (Lab 11.3 100%)" in graded.rows["ada"]["flags"]
    flagged = [f["id"] for f in graded.book["copies"]["flags"] if f["kind"] == "reference"]
    assert "reference/11.3/ada" in flagged, flagged


def test_copy_flags_and_groups_are_on_the_terminal(graded: GradedClass) -> None:
    """Each learner or group flagged is a line of the summary, not only in the files."""
    lines = [line.strip() for line in graded.run.stdout.splitlines()]
    assert any(
        line.startswith("copies: ada matches the reference in Lab 11.1 (100 %), ") for line in lines
    ), graded.run.stdout
    groups = [f for f in graded.book["copies"]["flags"] if f["kind"] == "cluster"]
    assert groups, graded.book["copies"]["flags"]
    for group in groups:
        names = ", ".join(group["learners"])
        assert any(line.startswith(f"copies: {names} share ") for line in lines), names
    assert "still running after 2s" in graded.rows["eve"]["note"]
    fay = graded.learner("fay")["labs"][3]
    assert fay["status"] == "failed" and fay["probes"]["status"] == "failed"
    assert (fay["passed"], fay["score"], graded.rows["fay"]["lab 11.4"]) == (0, 0, "0/2")
    assert [lab["points"] for lab in graded.learner("fay")["labs"]] == [20] * 5
    assert fay["agreed"] < fay["cases"] == fay["probes"]["cases"]
    said = "Score: out of 100, 20 for each of the 5 labs, earned only when the lab passes whole"
    assert said in graded.run.stdout


def test_a_workspace_begun_from_another_scaffold_is_noted_at_every_door(
    manifest: Manifest, graded: GradedClass
) -> None:
    """The row, its JSON and the terminal name both scaffolds; the kit's own are unmarked."""
    now = short(chapter_fingerprints(manifest, kit_root()).starter)
    began = OLD_SCAFFOLD[:12]
    assert graded.rows["hal"]["scaffold"] == f"began from {began}; the kit's is {now}"
    assert graded.learner("hal")["scaffold"] == {"began": began, "kit": now}
    assert any(f"begun from scaffold {began}" in note for note in graded.learner("hal")["notes"])
    hal = next(line for line in graded.run.stdout.splitlines() if line.startswith("  hal "))
    assert f"begun from scaffold {began}; the kit's is now {now}" in hal, hal
    assert graded.rows["ada"]["scaffold"] == "" and graded.learner("ada")["scaffold"] is None


@pytest.mark.parametrize(
    "learner", ["h-reporter", "h-forge", "h-code"], ids=["reporter", "results-file", "code"]
)
def test_a_forged_test_report_earns_nothing_and_is_flagged(
    graded: GradedClass, learner: str
) -> None:
    """The report claims 14/14; the probes get a stub's answer; the row earns nothing."""
    row = graded.rows[learner]
    assert_earns_nothing(row)
    assert "a forged report: its functions are the starter's stubs" in row["flags"], row
    labs = graded.learner(learner)["labs"]
    assert all(lab["probes"]["status"] == "pending" for lab in labs)
    assert "the test report says 3/3 tests passed, but probes pending" in row["note"]


def test_files_outside_the_curriculum_are_not_graded(graded: GradedClass) -> None:
    """A conftest.py passing every test, a sitecustomize.py and a pytest/ package: ignored."""
    for learner, strays in (
        ("h-conftest", "conftest.py"),
        ("h-shadow", "pytest/, sitecustomize.py"),
    ):
        row = graded.rows[learner]
        assert_honest_fresh(row)
        assert "files outside the curriculum" in row["flags"]
        assert any(strays in note for note in graded.learner(learner)["notes"]), learner
    assert "edited test files" in graded.rows["h-conftest"]["flags"]


def test_edited_tests_and_fixtures_are_noted_and_graded_from_the_kit(graded: GradedClass) -> None:
    for learner, path, flag in (
        ("h-tests", "tests/chapter11/test_11_context_compaction.py", "edited test files"),
        ("h-conftest", "tests/chapter11/conftest.py", "edited test files"),
        ("h-fixtures", "pi_course/fixtures.py", "edited given files"),
    ):
        row = graded.rows[learner]
        assert_honest_fresh(row)
        assert flag in row["flags"]
        note = f"{path} was edited in the workspace; graded with the kit's copy"
        assert note in graded.learner(learner)["notes"], learner


def test_rewriting_the_tests_and_re_executing_earns_nothing(graded: GradedClass) -> None:
    assert_honest_fresh(graded.rows["h-rewrite"])
    original = kit_root() / "tests/chapter11/test_11_context_compaction.py"
    mine = graded.roster / "h-rewrite/tests/chapter11/test_11_context_compaction.py"
    assert mine.read_bytes() == original.read_bytes(), "only the read-only copy was attacked"


def test_a_pth_file_never_reaches_site_packages(graded: GradedClass) -> None:
    assert_honest_fresh(graded.rows["h-pth"])
    assert not _pth().exists()
    for learner in ("h-reporter", "h-rewrite", "h-shadow", "h-tests", "h-tty"):
        assert graded.rows[learner]["status"] == "pending", "the next learners are not affected"


def test_a_daemon_dies_with_the_run_and_never_touches_the_gradebook(graded: GradedClass) -> None:
    assert_honest_fresh(graded.rows["h-daemon"])
    assert processes_with(DAEMON_TOKEN) == [], "every process learner code starts ends with its run"
    assert (
        (graded.roster / "gradebook-2.csv")
        .read_text(encoding="utf-8-sig")
        .startswith("learner,status,score,max_score,passed")
    )


def test_learner_code_cannot_kill_the_roster(graded: GradedClass) -> None:
    assert graded.run.returncode == 0
    assert_honest_fresh(graded.rows["h-killer"])


def test_learner_code_cannot_write_to_the_graders_terminal(graded: GradedClass) -> None:
    assert_honest_fresh(graded.rows["h-tty"])
    assert TTY_LINE not in graded.run.stdout + graded.run.stderr


def test_forked_children_share_one_memory_cap(graded: GradedClass) -> None:
    """The cap itself is shown without a clock in ``test_sandbox.py``; here, the row: the
    children either reach the cap (and the row says so) or, on a busy machine, are still
    faulting their pages in when the 2 s limit of the test that imports them runs out."""
    row = graded.rows["h-memory"]
    assert row["score"] == "0" and row["status"] != "passed", row
    notes = graded.learner("h-memory")["notes"]
    capped = any("reached its 1024 MB memory limit" in note for note in notes)
    assert capped or row["status"] == "timeout", (row, notes)


def test_symlinked_learners_are_listed_never_graded(graded: GradedClass) -> None:
    for learner, target in (("mallory", "ada"), ("zed", "/")):
        row = graded.rows[learner]
        assert (row["status"], row["flags"]) == ("skipped", "symlink"), row
        assert f"a symbolic link (to {target})" in row["note"]
    assert graded.learner("mallory")["tests"] == []


def test_unreadable_workspaces_are_error_rows(graded: GradedClass) -> None:
    for learner, why in (
        ("ivy", f"ivy/{MARKER}: not a regular file"),
        ("jon", "jon/pi_course/summary.py: a symbolic link"),
    ):
        row = graded.rows[learner]
        assert (row["status"], row["score"], row["passed"]) == ("error", "", "0"), row
        assert why in row["note"], row
        assert graded.learner(learner)["graded"] is False, "its score is no grade"


def test_stray_folders_are_skipped(graded: GradedClass) -> None:
    said = {
        "notes": f"no lab files and no practice workspace (no {MARKER}): todo.txt, week-1",
        "gradebook.json": "empty submission",
    }
    for learner, why in said.items():
        row = graded.rows[learner]
        assert (row["status"], row["note"]) == ("skipped", why)


def test_the_gradebook_never_writes_through_a_symlink_or_over_a_folder(
    graded: GradedClass,
) -> None:
    for path, text in graded.victims.items():
        assert path.read_text() == text, "the symlinks' targets are untouched"
    for name in ("gradebook-2.csv", "gradebook-2.json"):
        assert not (graded.roster / name).is_symlink() and (graded.roster / name).is_file()
    assert (graded.roster / "gradebook.json").is_dir(), "the learner's folder is left alone"
    assert f"{graded.roster / 'gradebook-2.csv'}" in graded.run.stdout


def test_rows_say_why(graded: GradedClass) -> None:
    dee = graded.learner("dee")
    failing = [lab for lab in dee["labs"] if lab["status"] != "passed"]
    assert failing and all(lab["reason"] for lab in failing), "every error has its reason"
    assert "SyntaxError" in graded.rows["dee"]["note"]
    eve = graded.learner("eve")["labs"][4]
    assert eve["status"] == "timeout" and "still running after 2s" in eve["reason"], eve
    tests = graded.learner("ben")["tests"]
    assert len(tests) == 14, "every focused test of the required labs"
    pending = [t for t in tests if t["status"] == "pending"]
    assert pending and all("not implemented yet" in t["message"] for t in pending)
