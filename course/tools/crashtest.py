"""Crash trials for the JSONL store: kill a writer at random, reopen, count lost entries.

``python -m course.tools.crashtest --trials N`` runs N trials on one log. In each, a child process
opens the log (repairing a torn tail left by the previous kill, as a restarting agent would),
appends entries and reports each acknowledgement (``append`` returned) on stdout; the parent
sends SIGKILL at a random moment, reads the log back and checks that every entry acknowledged
on it, in this trial or an earlier one, is there. Every second trial splits one write on
purpose: its child writes the first half of an entry's line, says so, and waits; the kill lands
there, so every run makes torn tails (a random kill inside a large ``write`` rarely does). The
next trial's child reopens that same log and repairs the tail (a log is only rotated when it is
clean, and after the last trial a torn log is reopened once more), so every torn tail seen is
also repaired on reopen.
"""

from __future__ import annotations

import argparse
import os
import random
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from ..jsonl import JsonlSessionStore, recover_jsonl

ACK = "ack "
SPLIT = "split "
STARTUP_TIMEOUT = 10.0
KILL_WINDOW = 0.1
"""The kill lands up to this many seconds after the first acknowledgement."""
ROTATE_BYTES = 16 * 1024 * 1024
"""Start a new log once a clean one grows past this, so reopening stays quick."""


@dataclass
class TrialTally:
    """Running totals over the trials."""

    trials: int = 0
    acknowledged: int = 0
    lost: list[str] = field(default_factory=list)
    torn_tails: int = 0
    repaired: int = 0
    on_this_log: set[str] = field(default_factory=set)
    """Every entry acknowledged on the current log, in any trial."""

    def check(self, log: Path) -> bool:
        """Count what is missing from ``log``; True if it ends in a torn tail."""
        recovered = recover_jsonl(log.read_bytes())
        present = {entry.id for entry in recovered.entries}
        self.lost += sorted(self.on_this_log - present - set(self.lost))
        return recovered.has_uncommitted_tail


def split_the_next_write() -> None:
    """Make this process's next log write stop halfway: half the line reaches the file, the
    parent is told (``split``), and the process waits for its kill."""
    from .. import jsonl

    def write_half(fd: int, data: bytes) -> None:
        os.write(fd, data[: max(1, len(data) // 2)])
        print(SPLIT + str(len(data)), flush=True)
        time.sleep(STARTUP_TIMEOUT * 6)
        raise SystemExit("the split write was not killed")

    jsonl.write_whole = write_half  # type: ignore[attr-defined]  # this child only


def child(
    log: Path, seed: int, fsync: bool, *, reopen_only: bool = False, split: bool = False
) -> None:
    """Reopen the log (repairing a torn tail), then append entries forever, acknowledging each
    one after ``append`` returns; with ``split``, the first append stops halfway."""
    rng = random.Random(seed)
    with JsonlSessionStore(log, fsync=fsync) as store:
        if store.warnings:
            store.repair()
            print("repaired", flush=True)
        if reopen_only:
            return
        if split:
            split_the_next_write()
        entries = store.entries()
        parent = entries[-1].id if entries else None
        number = len(entries)
        while True:
            entry_id = f"s{seed}-e{number}"
            role = "user" if number % 2 == 0 else "assistant"
            text = "x" * rng.choice((10, 1_000, 100_000, 1_000_000))
            content = text if role == "user" else [{"type": "text", "text": text}]
            entry = {"type": "message", "id": entry_id, "parentId": parent, "timestamp": number}
            store.append(entry | {"message": {"role": role, "content": content}})
            print(ACK + entry_id, flush=True)
            parent = entry_id
            number += 1


def child_command(log: Path, seed: int, *options: str) -> list[str]:
    module = "course.tools.crashtest"
    return [sys.executable, "-m", module, "--child", str(log), "--seed", str(seed), *options]


def run_trial(
    log: Path, seed: int, rng: random.Random, tally: TrialTally, *, split: bool = False
) -> bool:
    """One child, one SIGKILL (at a random moment, or inside the write it splits), one check of
    the log; True if it is torn."""
    fsync = ["--fsync"] if rng.random() < 0.3 else []
    command = child_command(log, seed, *fsync, *(["--split"] if split else []))
    process = subprocess.Popen(command, stdout=subprocess.PIPE, text=True)
    acknowledged: list[str] = []
    started = threading.Event()
    assert process.stdout is not None
    stdout = process.stdout

    def read() -> None:
        for line in stdout:
            if line.startswith(ACK):
                acknowledged.append(line[len(ACK) :].strip())
                started.set()
            elif line.startswith(SPLIT):
                process.send_signal(signal.SIGKILL)
                started.set()
            elif line.strip() == "repaired":
                tally.repaired += 1

    reader = threading.Thread(target=read)
    reader.start()
    started.wait(timeout=STARTUP_TIMEOUT)  # kill while appending, not while starting up
    if not split:
        time.sleep(rng.uniform(0.0, KILL_WINDOW))
    process.send_signal(signal.SIGKILL)
    process.wait()
    reader.join()

    tally.trials += 1
    tally.acknowledged += len(acknowledged)
    tally.on_this_log.update(acknowledged)
    torn = tally.check(log)
    tally.torn_tails += int(torn)
    return torn


def run(trials: int, seed: int, directory: Path) -> TrialTally:
    rng = random.Random(seed)
    logs = 1
    log = directory / "crash-1.jsonl"
    tally = TrialTally()
    torn = False
    for trial in range(trials):
        if not torn and log.exists() and log.stat().st_size > ROTATE_BYTES:
            logs += 1
            log = directory / f"crash-{logs}.jsonl"
            tally.on_this_log = set()
        torn = run_trial(log, seed * 1_000 + trial, rng, tally, split=trial % 2 == 1)
        print(
            f"trial {trial + 1}/{trials}: acknowledged {tally.acknowledged}, "
            f"torn tails {tally.torn_tails}, lost {len(tally.lost)}",
            flush=True,
        )
    if torn:  # reopened in a child that repairs the torn tail and exits, as a restart would
        command = child_command(log, 0, "--reopen-only")
        done = subprocess.run(command, stdout=subprocess.PIPE, text=True, check=True)
        tally.repaired += done.stdout.split().count("repaired")
        tally.check(log)
    return tally


def add_options(parser: argparse.ArgumentParser) -> argparse.ArgumentParser:
    """The crash test's options, on its own parser or on ``course-kit crashtest``."""
    parser.add_argument("--trials", type=int, default=20, help="number of kills (default 20)")
    parser.add_argument("--seed", type=int, default=11, help="random seed (default %(default)s)")
    parser.add_argument("--dir", type=Path, help="keep the log in this directory")
    parser.add_argument("--child", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--fsync", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--reopen-only", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--split", action="store_true", help=argparse.SUPPRESS)
    return parser


def main(argv: Sequence[str] | None = None, prog: str = "python -m course.tools.crashtest") -> int:
    """Command line: ``--trials N [--seed S]``; exit 1 if an acknowledged entry was lost."""
    parser = add_options(argparse.ArgumentParser(prog=prog, description=__doc__))
    args = parser.parse_args(argv)
    if args.child is not None:
        child(args.child, args.seed, args.fsync, reopen_only=args.reopen_only, split=args.split)
        return 0
    if args.trials < 1:
        parser.error("--trials must be at least 1")
    if args.dir is not None:
        args.dir.mkdir(parents=True, exist_ok=True)
        tally = run(args.trials, args.seed, args.dir)
    else:
        with tempfile.TemporaryDirectory(prefix="crashtest-") as directory:
            tally = run(args.trials, args.seed, Path(directory))
    if tally.lost:
        print(f"lost entries: {', '.join(tally.lost[:20])}", file=sys.stderr)
    print(f"torn tails seen: {tally.torn_tails}, repaired on reopen: {tally.repaired}")
    acknowledged = f"acknowledged entries: {tally.acknowledged}"
    print(f"crash trials: {tally.trials}, {acknowledged}, lost: {len(tally.lost)}")
    return 1 if tally.lost else 0


if __name__ == "__main__":
    os.environ.setdefault("PYTHONUNBUFFERED", "1")
    raise SystemExit(main())
