"""What the grader does itself before and around the sandbox, bounded (issue 29, the roster side).

One roster is graded once for the module: an honest learner and submissions that attack the
grader's own reading (``intake_attacks.py``): a version-4 git index whose paths each grow, a
``.tar.bz2`` with a megabytes-long member name, a zip with a 60,000-character name, a marker
with a huge ``chapter`` or nested 3,000 deep, 300 archives in one learner's folder, a zip 1,100
folders deep, records missing their fields, a learner file that is a FIFO with a writer waiting
on it, and a 240 KiB tuple in a lab function. Each is bounded or refused in its own row, with a
reason, and the honest learners beside them are graded 14/14. The unit tests below time and
weigh each reader on its own with the attack at full size.
"""

from __future__ import annotations

import csv
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import tracemalloc
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

import pytest
from costs import growth
from harness_support import cli, roster_workspace
from hostile import MODULE
from intake_attacks import (
    FAKE_COMMIT,
    deep_zip,
    fifo_learner_file,
    fifo_writer,
    huge_tuple,
    lay_out_attacks,
    long_name_tar,
    nested_marker,
    v4_index,
)

from course.grading.intake.archives import Refused, unpack
from course.grading.intake.folder import SUBMISSIONS_LISTED, Submission, cap_submissions, mark_older
from course.grading.intake.gitrepo import MAX_INDEX_ENTRIES, MAX_INDEX_PATH, index_blobs
from course.grading.intake.safefs import Tree, UnsafePath
from course.grading.records.copies import SOURCE_BYTES, baseline, learner_prints
from course.grading.roster import OverBudget, within_deadline
from course.grading.verdict.engine import GradingOptions
from course.harness.kit import kit_root, read_source
from course.harness.manifest import Manifest
from course.harness.records import RecordReader
from course.sandboxed.marker import MARKER, WorkspaceError, parse_marker
from course.sandboxed.untrusted import NAME_CHARS

T = TypeVar("T")
FULL = ("passed", "100", "14")  # status, score (20 points a lab), tests


def costs(work: Callable[[], T]) -> tuple[T | Exception, float]:
    """What ``work`` returned (or raised) and its peak of Python memory in MiB (time is the
    benchmarks' business: ``bench/roster.py``)."""
    tracemalloc.start()
    try:
        done: T | Exception = work()
    except Exception as error:
        done = error
    peak = tracemalloc.get_traced_memory()[1] / 2**20
    tracemalloc.stop()
    return done, peak


# --------------------------------------------------------------------------- one roster


@dataclass(frozen=True)
class Hostile:
    run: subprocess.CompletedProcess[str]
    roster: Path
    temporary: Path
    left_in_temporary: list[str]
    fifo_opened: bool
    fifo_writer_waiting: bool
    rows: list[dict[str, str]]
    book: dict[str, Any]
    json_text: str
    csv_text: str

    def row(self, learner: str) -> dict[str, str]:
        [row] = [row for row in self.rows if row["learner"] == learner]
        return row

    def learner(self, learner: str) -> dict[str, Any]:
        [row] = [row for row in self.book["learners"] if row["learner"] == learner]
        return row


def _scores(row: dict[str, str]) -> tuple[str, str, str]:
    return row["status"], row["score"], row["total"]


@pytest.fixture(scope="module")
def hostile(manifest: Manifest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Hostile]:
    base = tmp_path_factory.mktemp("hostile-intake")
    roster = base / "roster"
    roster.mkdir()
    temporary = Path(tempfile.mkdtemp(prefix="course-hostile-intake-"))
    temporary.chmod(0o755)
    roster_workspace(manifest, roster, "ada", solved=5)
    fifo = lay_out_attacks(manifest, roster, small=True)
    witness = base / "fifo-opened"
    writer = fifo_writer(fifo, witness)
    try:
        run = cli(
            "checkpoint",
            *("11", "--roster", str(roster), "--timeout", "5", "--jobs", "2"),
            env={"TMPDIR": str(temporary)},
        )
        waiting = writer.poll() is None
        opened = witness.exists()
        csv_text = (roster / "gradebook.csv").read_text(encoding="utf-8-sig")
        json_text = (roster / "gradebook.json").read_text(encoding="utf-8")
        rows = list(csv.DictReader(csv_text.splitlines()))
        left = sorted(path.name for path in temporary.iterdir())
        yield Hostile(
            run,
            roster,
            temporary,
            left,
            opened,
            waiting,
            rows,
            json.loads(json_text),
            json_text,
            csv_text,
        )
    finally:
        writer.kill()
        writer.wait()
        shutil.rmtree(temporary, ignore_errors=True)


def test_the_honest_learner_is_graded_whole_beside_every_attack(hostile: Hostile) -> None:
    assert hostile.run.returncode == 0, hostile.run.stdout + hostile.run.stderr
    assert _scores(hostile.row("ada")) == FULL, hostile.row("ada")
    assert "Traceback" not in hostile.run.stderr, hostile.run.stderr
    failed = [r["learner"] for r in hostile.rows if "the grader failed" in r["note"]]
    assert failed == [], "every attack is its learner's row with a reason"


def test_a_v4_index_whose_paths_grow_is_cut_and_said(hostile: Hostile) -> None:
    row = hostile.learner("h-index")
    assert _scores(hostile.row("h-index")) == FULL, row
    assert row["commit"] == FAKE_COMMIT
    said = f"its git index was not read: an index path is longer than {MAX_INDEX_PATH} bytes"
    assert said in row["notes"], row["notes"]


def test_records_missing_their_fields_are_dropped_and_counted(hostile: Hostile) -> None:
    row = hostile.learner("h-records")
    assert _scores(hostile.row("h-records")) == FULL, row
    assert any("record(s) dropped" in note for note in row["notes"]), row["notes"]


def test_a_huge_tuple_in_a_lab_function_is_cut_from_the_copy_check(hostile: Hostile) -> None:
    row = hostile.learner("h-tuple")
    assert _scores(hostile.row("h-tuple")) == FULL, row
    assert "copy check cut (see copies.cut)" in row["flags"], row["flags"]
    [cut] = hostile.book["copies"]["cut"]["h-tuple"]
    assert (cut["path"], cut["limit"]) == ("pi_course/context.py", "bytes"), cut
    assert cut["kept"] <= SOURCE_BYTES < cut["size"]


def test_long_learner_text_is_cut_once_where_it_enters(hostile: Hostile) -> None:
    """A 2 MB member name (20 MB in the bench), a 60,000-character one and a 900,000-character
    ``chapter`` (a marker over the marker's cap, refused unread; a long ``chapter`` within the
    cap is cut at every door, see test_hostile_doors): each row says why in a few hundred
    characters; the gradebook and the terminal stay small."""
    for learner, why in (
        ("h-longname", "a header of 2000001 bytes"),
        ("h-zipname", "more characters cut]': an absolute path"),
        ("h-chapter", ".course-workspace.toml: larger than 64 KiB"),
    ):
        row = hostile.row(learner)
        assert row["status"] == "error" and why in row["note"], row
        assert len(row["note"]) < 2 * NAME_CHARS + 400, len(row["note"])
    assert len(hostile.json_text) < 1_000_000 and len(hostile.csv_text) < 50_000
    assert max(len(line) for line in hostile.run.stdout.splitlines()) < 2_000


def test_a_marker_nested_thousands_deep_is_its_learners_error(hostile: Hostile) -> None:
    row = hostile.row("h-nested")
    assert row["status"] == "error" and "not valid TOML (nested too deeply)" in row["note"], row


def test_many_submissions_of_one_learner_are_capped_and_the_rest_said(hostile: Hostile) -> None:
    mine = [r for r in hostile.rows if r["learner"].partition("#")[0] == "h-many"]
    assert len(mine) == SUBMISSIONS_LISTED, len(mine)
    # one key per row: the graded one keeps the name, the older ones are numbered
    keys = ["h-many", *(f"h-many#{n}" for n in range(2, SUBMISSIONS_LISTED + 1))]
    assert sorted(r["learner"] for r in mine) == sorted(keys)
    graded = [hostile.row("h-many")]
    assert all("older submission" in r["note"] for r in mine if r not in graded)
    assert [r["workspace"].rsplit("/", 1)[1] for r in graded] == ["try-00299.zip"], graded
    left = 300 - SUBMISSIONS_LISTED
    said = f"h-many                   {left} more submissions, older than the 10 listed"
    assert said in hostile.run.stdout, hostile.run.stdout[-2000:]


def test_a_deep_archive_is_refused_and_nothing_is_left_behind(hostile: Hostile) -> None:
    row = hostile.row("h-deep")
    assert row["status"] == "error" and "a path more than 32 folders deep" in row["note"], row
    assert hostile.left_in_temporary == [], hostile.left_in_temporary


def test_a_fifo_learner_file_is_refused_and_never_opened(hostile: Hostile) -> None:
    row = hostile.row("h-fifo")
    assert row["status"] == "error" and f"h-fifo/{MODULE}: not a regular file" in row["note"], row
    assert not hostile.fifo_opened, "the grader opened the FIFO"
    assert hostile.fifo_writer_waiting, "the writer still waits: nobody opened it"


# --------------------------------------------------------------------------- each reader


def test_a_v4_index_whose_paths_grow_costs_its_size_not_its_square() -> None:
    """A 1 MiB index: before, its paths took about 2 GB (767 KiB took 1.8 GB)."""
    data = v4_index(16_000)
    done, peak = costs(lambda: index_blobs(data))
    assert isinstance(done, ValueError) and "longer than 4096 bytes" in str(done), done
    assert peak < 8, peak
    assert growth(lambda n: index_blobs(v4_index(n, grow=1)), 1_000) < 6
    many = v4_index(MAX_INDEX_ENTRIES + 1, grow=1)
    done, _ = costs(lambda: index_blobs(many))
    assert isinstance(done, ValueError) and "more than 100000" in str(done), done


def test_only_the_wanted_paths_of_an_index_are_kept() -> None:
    data = v4_index(60, grow=1)
    wanted = {"a" * 10, "a" * 60, "b"}
    assert index_blobs(data, wanted=wanted) == {"a" * 10: "00" * 20, "a" * 60: "00" * 20}


def test_the_copy_check_of_huge_sources_costs_about_nothing(
    manifest: Manifest, tmp_path: Path
) -> None:
    """The review measured 30-39 s for the tuple and 234 s for two 1 MiB files."""
    base = baseline(manifest, kit_root(), tuple(manifest.required_labs))
    files = manifest.files_with_role("learner")
    sources = {f.path: read_source(kit_root(), f.reference) for f in files}
    workspace = roster_workspace(manifest, tmp_path, "tuple", solved=5)
    huge = (huge_tuple(workspace, 240 * 1024) / "pi_course" / "context.py").read_bytes()
    megabyte = b"x = [" + b"1, " * ((1 << 20) // 3) + b"]\n"
    for name, mine in (
        ("tuple", {**sources, "pi_course/context.py": huge}),
        ("two 1 MiB files", {**sources, "pi_course/context.py": megabyte, MODULE: megabyte}),
    ):
        prints, peak = costs(lambda mine=mine: learner_prints(base, mine))  # type: ignore[misc]
        assert not isinstance(prints, Exception), prints
        assert peak < 64, (name, peak)
        assert {c.limit for c in prints.cuts} == {"bytes"}, (name, prints.cuts)


def test_the_graders_own_work_counts_within_the_deadline() -> None:
    options = GradingOptions(deadline_seconds=10.0)
    left = within_deadline(options, time.monotonic() - 4.0).deadline_seconds
    assert left is not None and 0.0 < left <= 6.0, left
    with pytest.raises(OverBudget, match=r"longer than 10s \(reading the submission took 1\d"):
        within_deadline(options, time.monotonic() - 12.0)
    assert within_deadline(GradingOptions(), 0.0).deadline_seconds is None


def test_the_survey_of_thousands_of_submissions_is_linear() -> None:
    """32,000 submissions of one learner: before, the pass that picks the newest took 21 s."""
    rows = [
        Submission("ada", "archive", entry=f"ada/{n:05d}.zip", mtime=float(n))
        for n in range(32_000)
    ]
    done, _ = costs(lambda: cap_submissions(rows))
    assert not isinstance(done, Exception)
    kept, skipped = done
    marked = mark_older(kept)
    assert [m.entry for m in marked if not m.newer] == ["ada/31999.zip"]
    assert len(marked) == SUBMISSIONS_LISTED and len(skipped) == 1
    assert skipped[0].why.startswith("31990 more submissions, older than the 10 listed")

    def one_learner(count: int) -> object:
        return cap_submissions(
            [Submission("ada", "archive", entry=f"ada/{n:05d}.zip", mtime=n) for n in range(count)]
        )

    def many_learners(count: int) -> object:
        return mark_older([Submission(f"l{n}", "archive", entry=f"l{n}.zip") for n in range(count)])

    assert growth(one_learner, 2_000) < 6 and growth(many_learners, 2_000) < 6


def test_an_archive_deeper_than_its_cap_is_refused_before_anything_is_written(
    tmp_path: Path,
) -> None:
    target = tmp_path / "unpacked"
    target.mkdir()
    with pytest.raises(Refused, match="more than 32 folders deep") as refused:
        unpack(deep_zip(tmp_path / "deep.zip", 1100), target)
    assert len(str(refused.value)) < NAME_CHARS + 100
    assert list(target.iterdir()) == []


def test_a_compressed_tar_is_decompressed_a_read_at_a_time(tmp_path: Path) -> None:
    """A 149-byte ``.tar.bz2`` whose one header is 20 MB: before, the grader held 76 MiB of it
    and quoted all of it; a bomb of a few hundred bytes took it past a gigabyte."""
    archive = long_name_tar(tmp_path / "name.tar.bz2", 20_000_000)
    target = tmp_path / "unpacked"
    target.mkdir()
    done, peak = costs(lambda: unpack(archive, target))
    assert isinstance(done, Refused) and "a header of 20000001 bytes" in str(done), done
    assert peak < 8, peak


def test_records_without_their_fields_never_reach_the_reader(tmp_path: Path) -> None:
    results = tmp_path / "results.jsonl"
    records = [
        {"event": "collected"},
        {"event": "collected", "tests": [1]},
        {"event": "start"},
        {"event": "end", "duration": "slow"},
        {"event": "end", "nodeid": ["t.py::x"]},
        {"event": "end", "nodeid": "t.py::test_ok", "duration": 0.1},
    ]
    results.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    reader = RecordReader(results)
    assert reader.new() == [records[-1]] and reader.dropped == 5


def test_a_record_carrying_nan_is_dropped_and_counted_like_any_malformed_one(
    tmp_path: Path,
) -> None:
    """The reader reads as strictly as the kit's JSONL logs (``jsonl.parse_json_line``)."""
    results = tmp_path / "results.jsonl"
    honest = {"event": "end", "nodeid": "t.py::test_ok", "duration": 0.1}
    lines = [
        b'{"event": "end", "nodeid": "t.py::test_nan", "duration": NaN}',
        b'{"event": "end", "nodeid": "t.py::test_inf", "duration": Infinity}',
        b'{"event": "end", "nodeid": "t.py::test_minus_inf", "duration": -Infinity}',
        b"\xef\xbb\xbf" + json.dumps(honest | {"nodeid": "t.py::test_bom"}).encode(),
        json.dumps(honest).encode(),
    ]
    results.write_bytes(b"".join(line + b"\n" for line in lines))
    reader = RecordReader(results)
    assert reader.new() == [honest]
    assert reader.dropped == 4


def test_a_marker_nested_3000_deep_is_a_workspace_error(manifest: Manifest, tmp_path: Path) -> None:
    workspace = nested_marker(roster_workspace(manifest, tmp_path, "deep"), 3000)
    with pytest.raises(WorkspaceError, match=r"not valid TOML \(nested too deeply\)"):
        parse_marker(workspace, (workspace / MARKER).read_bytes(), MARKER)


def test_no_learner_path_is_opened_before_lstat_says_it_is_a_file(
    manifest: Manifest, tmp_path: Path
) -> None:
    workspace = roster_workspace(manifest, tmp_path, "fifo")
    witness = tmp_path / "opened"
    writer = fifo_writer(fifo_learner_file(workspace), witness)
    try:
        with pytest.raises(UnsafePath, match="not a regular file"):
            Tree(tmp_path, ("fifo",)).read(MODULE)
        os.link(workspace / MODULE, workspace / "fifo.zip")  # the same FIFO, as an archive
        target = tmp_path / "unpacked"
        target.mkdir()
        with pytest.raises(Refused, match="not a regular file"):
            unpack(workspace / "fifo.zip", target)
        (workspace / "link.py").symlink_to(workspace / MODULE)
        with pytest.raises(UnsafePath, match="a symbolic link"):
            Tree(tmp_path, ("fifo",)).read("link.py")
        time.sleep(0.2)
        assert not witness.exists() and writer.poll() is None, "the FIFO was opened"
    finally:
        writer.kill()
        writer.wait()


def test_the_roster_bench_measures_a_hostile_class_quickly() -> None:
    """``bench/roster.py --small``: every intake attack beside three learners, with figures."""
    bench = kit_root() / "bench" / "roster.py"
    run = subprocess.run(
        [sys.executable, str(bench), "--small"],
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert run.returncode == 0, run.stdout + run.stderr
    lines = run.stdout.splitlines()
    rows = {line.split()[0]: line.split()[1:] for line in lines if line.startswith(("h-", "ho"))}
    assert rows["honest-00"][:2] == ["passed", "14/14"], rows
    assert {"h-index", "h-deep", "h-fifo", "h-many", "h-nested", "h-tuple"} <= rows.keys()
    assert "OVER THE DEADLINE" not in run.stdout
    assert any(line.startswith("grader's peak resident memory: ") for line in lines), lines
    assert any(line.startswith("survey of the roster: ") for line in lines), lines
