"""The grader's own work inside each learner's deadline and caps (issue 44, item 4).

Each test stages one attack of the fifth hostile review and fails on the code before its
defence: empty lines appended to the records (223 s of grader CPU for 8 MiB), a zip listing a
million entries (466 MB before the 5,000-file cap), a learner folder holding several workspaces
(a deadline each), a roster entry whose name is not UTF-8 (no gradebook at all).
"""

from __future__ import annotations

import csv
import io
import json
import os
import time
import tracemalloc
from collections.abc import Callable, Sequence
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from harness_support import roster_workspace
from intake_attacks import listing_zip

from course.grading import roster as roster_module
from course.grading.intake.archives import Refused, unpack
from course.grading.intake.folder import names_pattern, survey
from course.grading.records.gradebook import encodable
from course.grading.roster import RosterOptions, grade_roster, grade_submissions
from course.grading.verdict.engine import GradingOptions
from course.harness.kit import kit_root
from course.harness.manifest import Manifest
from course.harness.records import MAX_LINES, RecordReader
from course.harness.results import TestOutcome
from course.harness.runner import (
    Attempt,
    Collected,
    Record,
    RunLog,
    RunTarget,
    run_focused_tests,
)
from course.harness.supervisor import Limits
from course.sandboxed.frames import dump_file
from course.sandboxed.status import Status

HONEST = {"event": "end", "nodeid": "t.py::test_ok", "duration": 0.1}


def peak_mib(work: Callable[[], object]) -> tuple[object, float]:
    """What ``work`` returned (or raised) and its peak of Python memory in MiB."""
    tracemalloc.start()
    try:
        done = work()
    except Exception as error:
        done = error
    peak = tracemalloc.get_traced_memory()[1] / 2**20
    tracemalloc.stop()
    return done, peak


# --------------------------------------------------------------------------- the records


def test_empty_lines_in_the_records_are_read_up_to_a_line_count(tmp_path: Path) -> None:
    """Before, every empty line was parsed and counted (8 MiB of them: 223 s of CPU)."""
    results = tmp_path / "results.jsonl"
    line = json.dumps(HONEST).encode() + b"\n"
    results.write_bytes(line + b"\n" * (4 * MAX_LINES) + line)
    reader = RecordReader(results)
    assert reader.new() == [HONEST], "the record after the flood is past the line cap"
    refused = MAX_LINES - 1  # the empty lines within the cap, each a record refused
    assert reader.dropped == refused + 1, "and the rest of the file, counted once, unread"
    with results.open("ab") as more:
        more.write(line)
    assert reader.new() == [] and reader.dropped == refused + 1, "nothing more is read"


def test_no_record_is_read_past_the_deadline(tmp_path: Path) -> None:
    results = tmp_path / "results.jsonl"
    results.write_bytes(json.dumps(HONEST).encode() + b"\n")
    assert RecordReader(results, deadline=time.monotonic() + 600).new() == [HONEST]
    late = RecordReader(results, deadline=time.monotonic() - 1)
    assert late.new() == [] and late.dropped == 1


# --------------------------------------------------------------------------- archives


@pytest.mark.parametrize("declared", [None, 1], ids=["declared", "lying-end-record"])
def test_a_zip_listing_is_capped_before_it_is_read(tmp_path: Path, declared: int | None) -> None:
    """200,000 entries (9 MiB): before, the standard library built every entry first, 466 MB
    for a million; an end record declaring one entry changes nothing (the listing is walked)."""
    archive = listing_zip(tmp_path / "listing.zip", 200_000, declared)
    target = tmp_path / "unpacked"
    target.mkdir()
    done, peak = peak_mib(lambda: unpack(archive, target))
    assert isinstance(done, Refused) and "more than 5000 files" in str(done), done
    assert peak < 2, peak
    assert list(target.iterdir()) == []


def test_an_honest_zip_is_still_unpacked_whole(tmp_path: Path) -> None:
    archive = listing_zip(tmp_path / "small.zip", 1)
    target = tmp_path / "unpacked"
    target.mkdir()
    unpack(archive, target)
    assert [p.name for p in target.iterdir()] == ["f"]


# --------------------------------------------------------------------------- the roster


class FakeGrading:
    """``engine.grade`` replaced: each call takes 3 s of a fake clock and records the deadline
    it was given, then fails (a row of its own, as a grader fault is)."""

    def __init__(self) -> None:
        self.now = 1000.0
        self.given: list[tuple[float | None, float | None]] = []

    def clock(self) -> float:
        return self.now

    def grade(self, *args: Any, **named: Any) -> object:
        limits, options = args[4], args[5]
        assert isinstance(limits, Limits) and isinstance(options, GradingOptions)
        self.given.append((options.deadline_seconds, limits.deadline))
        self.now += 3.0
        raise RuntimeError("graded elsewhere")


@pytest.fixture
def fake(monkeypatch: pytest.MonkeyPatch) -> FakeGrading:
    faked = FakeGrading()
    monkeypatch.setattr(roster_module, "time", SimpleNamespace(monotonic=faked.clock))
    monkeypatch.setattr(roster_module, "grade", faked.grade)
    return faked


def test_a_learner_folder_of_several_workspaces_costs_one_deadline(
    manifest: Manifest, tmp_path: Path, fake: FakeGrading
) -> None:
    """Before, each of ``gus``'s workspaces got the whole 5 s (ten of them, ten deadlines)."""
    roster = tmp_path / "roster"
    roster_workspace(manifest, roster, "ada")
    for name in ("a", "b", "c"):
        roster_workspace(manifest, roster / "gus", name)
    entries = survey(roster).submissions
    options = RosterOptions(
        lab_ids=("11.1",), workspace_seconds=5.0, jobs=1, grading=GradingOptions(sandbox="off")
    )
    graded = grade_submissions(manifest, kit_root(), roster, entries, options, io.StringIO(), ())
    rows = {row.learner: row for row in graded.grades}
    assert fake.given == [(5.0, 1005.0), (5.0, 1008.0), (2.0, 1008.0)], "ada, then gus's two"
    assert rows["gus/c"].status == Status.TIMEOUT, "nothing of gus's deadline is left for c"
    assert "longer than 5s" in rows["gus/c"].note
    assert [rows[n].status for n in ("ada", "gus/a", "gus/b")] == [Status.ERROR] * 3


def test_every_gradebook_writer_survives_a_name_that_is_not_utf8(
    manifest: Manifest, tmp_path: Path, fake: FakeGrading
) -> None:
    """Before, ``--names`` with an unmatched entry named ``ada-\\xff`` crashed while writing
    ``gradebook.json``: no learner got a gradebook."""
    roster, book = tmp_path / "roster", tmp_path / "book"
    roster_workspace(manifest, roster, os.fsdecode(b"ada-\xff"))
    roster_workspace(manifest, roster, "bo_1")
    options = RosterOptions(
        lab_ids=("11.1",),
        jobs=1,
        grading=GradingOptions(sandbox="off"),
        names=names_pattern(r"(?P<learner>[a-z]+)_\d+"),
    )
    out = io.StringIO()
    grade_roster(manifest, kit_root(), roster, book, options, io.StringIO(), out)
    written = json.loads((book / "gradebook.json").read_text(encoding="utf-8"))
    assert written["names"]["unmatched"] == ["ada-\\udcff"]
    assert [row["learner"] for row in written["learners"]] == ["ada-\\udcff", "bo"]
    with (book / "gradebook.csv").open(encoding="utf-8-sig", newline="") as table:
        assert [row[0] for row in csv.reader(table)][1:] == ["ada-\\udcff", "bo"]
    assert "ada-\\udcff" in out.getvalue()


# --------------------------------------------------------------------------- written files


def filling(tests: Collected, seen: list[list[str]] | None = None) -> Attempt:
    """An attempt that fills its results file and stack dump (1 MiB each), reports one test
    still to go and ends, as a child killed in its test does (``seen``: the folder's files as
    each attempt starts)."""

    def attempt(
        target: RunTarget,
        labs: Sequence[str],
        results: Path,
        nodeids: Sequence[str],
        limits: Limits,
        log: RunLog,
        record: Record,
    ) -> Collected:
        if seen is not None:
            seen.append(sorted(path.name for path in results.parent.iterdir()))
        for path in (results, dump_file(results)):
            path.write_bytes(b"x" * 1024 * 1024)
        nodeid, name, lab = next(t for t in tests if not nodeids or t[0] in nodeids)
        record(TestOutcome(nodeid, name, lab, Status.FAILED, "filled its files"))
        return tests

    return attempt


def test_each_childs_written_files_leave_the_graders_disk_when_it_ends(tmp_path: Path) -> None:
    """Before, every child's results file and stack dump (63 MiB each, past the reader's cap)
    stayed until the run ended: 1,641 MiB in 5 s. Each attempt here reports one test and ends,
    as a child killed in its test does, its files filled."""
    tests: Collected = [(f"t.py::test_{n}", f"test_{n}", f"11.{n + 1}") for n in range(4)]
    seen: list[list[str]] = []
    target = RunTarget(tmp_path, ("t.py",), "pi_course")
    outcomes, _ = run_focused_tests(target, attempt=filling(tests, seen))
    assert [o.status for o in outcomes] == [Status.FAILED] * 4
    assert seen == [[f"results-{n}.jsonl"] for n in range(1, 5)], "only the child's own file"


def test_what_the_children_write_counts_against_the_runs_disk_cap(tmp_path: Path) -> None:
    """Removed as each child ends, the files still count: a learner whose every child fills
    its records and stack dump runs no further child once the run's cap is spent (before, a
    new child started for each test, each free to write its 63 MiB pair again)."""
    tests: Collected = [(f"t.py::test_{n}", f"test_{n}", f"11.{n + 1}") for n in range(4)]
    target = RunTarget(tmp_path, ("t.py",), "pi_course")
    cap = Limits(written_bytes=3 * 1024 * 1024)
    outcomes, log = run_focused_tests(target, attempt=filling(tests), limits=cap)
    assert [o.status for o in outcomes] == [Status.FAILED] * 2 + [Status.ERROR] * 2
    assert log.written == 4 * 1024 * 1024
    said = "the test processes wrote 4 MB of records and stack dumps, past the run's 3 MB"
    assert all(said in o.message and o.not_run for o in outcomes[2:]), outcomes[2:]


def test_what_utf8_cannot_write_is_escaped_wherever_it_is_nested() -> None:
    """The one helper the CSV, ``gradebook.json`` and Gradescope's ``results.json`` go through."""
    name = os.fsdecode(b"bo-\xfe")
    found = encodable({"learners": [{"learner": name, "notes": (name, "kept")}], name: 1})
    assert found == {
        "learners": [{"learner": "bo-\\udcfe", "notes": ["bo-\\udcfe", "kept"]}],
        "bo-\\udcfe": 1,
    }
    assert json.dumps(found, ensure_ascii=False).encode("utf-8")
