"""``checkpoint CHAPTER --watch``: a saved file re-runs the lab at hand; keys steer; no events."""

from __future__ import annotations

import io
import queue
import subprocess
import sys
import threading
import time
from dataclasses import replace
from pathlib import Path

from harness_support import MakeWorkspace
from solutions import solve_lab

from course.cli.watch import Event, Probe, RunAll, WatchLoop, serve
from course.harness.catalog import Catalog, CatalogTest
from course.harness.hints import HINTS_FILE
from course.harness.manifest import Manifest
from course.harness.results import CheckpointResult, TestOutcome, summarize
from course.sandboxed.status import Status

WAIT = 90.0
"""The most any step of the watched run may take before the test gives up (a bound, not a claim)."""


class Lines:
    """A child's output read on a thread, handed out line by line with a deadline."""

    def __init__(self, process: subprocess.Popen[str]) -> None:
        self.queue: queue.Queue[str] = queue.Queue()
        self.seen: list[str] = []
        assert process.stdout is not None
        stream = process.stdout
        threading.Thread(target=lambda: [self.queue.put(x) for x in stream], daemon=True).start()

    def until(self, text: str) -> list[str]:
        """The lines up to and including the first holding ``text``."""
        deadline = time.monotonic() + WAIT
        got: list[str] = []
        while time.monotonic() < deadline:
            try:
                line = self.queue.get(timeout=0.2)
            except queue.Empty:
                continue
            got.append(line)
            self.seen.append(line)
            if text in line:
                return got
        raise AssertionError(f"no line with {text!r} within {WAIT:g}s:\n{''.join(self.seen)}")


def test_saving_a_solved_lab_turns_it_green_and_moves_on(
    manifest: Manifest, kit: Path, make_workspace: MakeWorkspace
) -> None:
    workspace = make_workspace("watched")
    process = subprocess.Popen(
        [sys.executable, "-m", "course.cli.checkpoint", "11", "--watch"],
        cwd=workspace,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    assert process.stdin is not None
    lines = Lines(process)
    try:
        lines.until("File changes are picked up: save a file to re-run Lab 11.1")
        solve_lab(manifest, kit, workspace, "11.1")  # a real save of pi_course/summary.py
        after = "".join(lines.until("Now: Lab 11.2"))
        assert "saved summary.py" in after
        [line] = [x for x in after.splitlines() if x.startswith("Lab 11.1 ") and "tests" in x]
        head, _, cases = line.partition("3/3 tests · ")
        assert head.split() == ["Lab", "11.1", "compaction", "entry"], line
        agreed, _, rest = cases.partition("/")
        assert rest == f"{agreed} cases  passed" and int(agreed) > 0, line
        assert "focused tests  3/3 → 0/3 → 0/3 → 0/2 → 0/3 (3/14)" in after
        assert "Lab 11.1 passes." in after
        process.stdin.write("h\n")
        process.stdin.flush()
        hint = "".join(lines.until("shows hint 2 of 3"))
        assert "Hint 1 of 3 · Lab 11.2 interaction groups" in hint
        assert " ".join(manifest.lab("11.2").hints[0].split()[:5]) in " ".join(hint.split())
        assert (workspace / HINTS_FILE).read_text("utf-8").endswith('"11.2" = 1\n')
        process.stdin.write("q\n")
        process.stdin.flush()
        assert process.wait(timeout=WAIT) == 0
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    assert not (workspace / "pi_course" / ".checkpoint-watch-probe").exists()


def fake_run(
    manifest: Manifest, green: set[str], failing: dict[str, str] | None = None
) -> tuple[list[int], RunAll]:
    """A stand-in for evaluating the chapter: labs in ``green`` pass, the labs in ``failing``
    fail their first test with its message, the others are pending."""
    calls: list[int] = []
    catalog = Catalog(
        tuple(
            CatalogTest(lab.id, f"test_{n}", lab.id)
            for lab in manifest.labs
            for n in range(lab.tests)
        )
    )

    def run() -> CheckpointResult:
        calls.append(len(calls))
        outcomes = [
            TestOutcome(
                f"{test.file}::{test.function}",
                test.function,
                test.lab,
                Status.PASSED if test.lab in green else Status.PENDING,
                "" if test.lab in green else f"Lab {test.lab} not implemented yet",
            )
            for test in catalog.tests
        ]
        for index, outcome in enumerate(outcomes):
            said = (failing or {}).get(str(outcome.lab))
            if said is not None and outcome.lab not in green and outcome.name == "test_0":
                outcomes[index] = replace(outcome, status=Status.FAILED, message=said)
        return summarize(manifest, manifest.labs, outcomes, catalog=catalog, target="")

    return calls, run


def test_without_file_events_it_says_so_and_falls_back(manifest: Manifest, tmp_path: Path) -> None:
    green: set[str] = set()
    calls, run = fake_run(manifest, green)
    out = io.StringIO()
    loop = WatchLoop(manifest, run, out)
    events: queue.Queue[Event] = queue.Queue()
    events.put(("ready", ""))  # a watcher that starts but never reports the probe
    fallbacks: list[str] = []

    def fall_back() -> None:
        fallbacks.append("polling")
        green.add("11.1")
        events.put(("key", "r"))  # the manual re-run the message offers
        events.put(("key", "q"))

    assert serve(loop, events, Probe(tmp_path), fall_back, probe_seconds=0.2) == 0
    text = out.getvalue()
    assert fallbacks == ["polling"]
    assert "No file change events arrive from" in text and "press r (or Enter)" in text
    assert len(calls) == 2, "a run at start, then one after the manual re-run"
    assert "Lab 11.1 passes." in text and "Now: Lab 11.2 interaction groups" in text
    assert not (tmp_path / ".checkpoint-watch-probe").exists()


def test_moving_on_to_a_failing_lab_says_why_it_fails_at_once(
    manifest: Manifest, tmp_path: Path
) -> None:
    green: set[str] = set()
    failing = {"11.2": "split_interactions: expected 3, got 2"}
    calls, run = fake_run(manifest, green, failing)
    out = io.StringIO()
    loop = WatchLoop(manifest, run, out)
    loop.start()
    assert loop.current is not None and loop.current.id == "11.1"
    green.add("11.1")
    start = len(out.getvalue())
    loop.rerun()  # the save that turns Lab 11.1 green: on to Lab 11.2, which fails
    moved = out.getvalue()[start:].splitlines()
    now = next(i for i, line in enumerate(moved) if line.startswith("Now: Lab 11.2"))
    assert moved[now + 1 :] == ["    failed   test_0: split_interactions: expected 3, got 2"], moved
    start = len(out.getvalue())
    loop.rerun()  # a save that leaves it failing: it still says why
    stayed = out.getvalue()[start:]
    assert "    failed   test_0: split_interactions: expected 3, got 2" in stayed, stayed
    assert len(calls) == 3, "a run at start, then one per save"


def test_keys_skip_to_the_next_lab_and_show_the_legend(manifest: Manifest, tmp_path: Path) -> None:
    calls, run = fake_run(manifest, set())
    out = io.StringIO()
    loop = WatchLoop(manifest, run, out)
    events: queue.Queue[Event] = queue.Queue()
    for key in ("n", "?", "q"):
        events.put(("key", key))
    assert serve(loop, events, Probe(tmp_path), lambda: None) == 0
    text = out.getvalue()
    assert "Now: Lab 11.2 interaction groups" in text
    assert len(calls) == 2, "a run at start, then one for the lab skipped to"
    assert "keys: h hint · n next lab · r re-run · q quit" in text


def test_a_watcher_that_fails_falls_back_to_polling_once(
    manifest: Manifest, tmp_path: Path
) -> None:
    _, run = fake_run(manifest, set())
    out = io.StringIO()
    events: queue.Queue[Event] = queue.Queue()
    events.put(("error", "OSError: the inotify watch limit was reached"))
    fallbacks: list[str] = []

    def fall_back() -> None:
        fallbacks.append("polling")
        events.put(("error", "OSError: polling failed too"))
        events.put(("key", "q"))

    assert serve(WatchLoop(manifest, run, out), events, Probe(tmp_path), fall_back) == 0
    text = out.getvalue()
    assert fallbacks == ["polling"], "polling is tried once, not again and again"
    assert "The file watcher stopped (OSError: the inotify watch limit was reached)." in text
    assert "The file watcher stopped (OSError: polling failed too). Press r" in text
