"""Crash trials for the JSONL store: kill a writer at random, reopen, count lost entries.

``python -m course.tools.crashtest --trials N`` runs N trials on one log. In each, a child process
opens the log (repairing a torn tail left by the previous kill, as a restarting agent would),
appends entries and reports each acknowledgement (``append`` returned) on stdout; the parent
sends SIGKILL at a random moment, reopens the log and checks that every acknowledged entry is
there. Large random payloads make a kill inside a ``write`` likely, so torn tails do occur.
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
STARTUP_TIMEOUT = 10.0
ROTATE_BYTES = 16 * 1024 * 1024
"""Start a new log once one grows past this, so reopening stays quick."""


@dataclass
class TrialTally:
    """Running totals over the trials."""

    trials: int = 0
    acknowledged: int = 0
    lost: list[str] = field(default_factory=list)
    torn_tails: int = 0
    repaired: int = 0

    def summary(self) -> str:
        return (
            f"crash trials: {self.trials}, acknowledged entries: {self.acknowledged}, "
            f"lost: {len(self.lost)}"
        )


def child(log: Path, seed: int, fsync: bool) -> None:
    """Append entries forever, acknowledging each one after ``append`` returns."""
    rng = random.Random(seed)
    with JsonlSessionStore(log, fsync=fsync) as store:
        if store.warnings:
            store.repair()
            print("repaired", flush=True)
        entries = store.entries()
        parent = entries[-1].id if entries else None
        number = len(entries)
        while True:
            entry_id = f"s{seed}-e{number}"
            role = "user" if number % 2 == 0 else "assistant"
            text = "x" * rng.choice((10, 1_000, 20_000, 100_000))
            content = text if role == "user" else [{"type": "text", "text": text}]
            store.append(
                {
                    "type": "message",
                    "id": entry_id,
                    "parentId": parent,
                    "timestamp": number,
                    "message": {"role": role, "content": content},
                }
            )
            print(ACK + entry_id, flush=True)
            parent = entry_id
            number += 1


def run_trial(log: Path, seed: int, rng: random.Random, tally: TrialTally) -> None:
    """One child, one SIGKILL at a random moment, one check of the reopened log."""
    fsync = rng.random() < 0.3
    command = [
        sys.executable,
        "-m",
        "course.tools.crashtest",
        "--child",
        str(log),
        "--seed",
        str(seed),
    ]
    if fsync:
        command.append("--fsync")
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
            elif line.strip() == "repaired":
                tally.repaired += 1

    reader = threading.Thread(target=read)
    reader.start()
    started.wait(timeout=STARTUP_TIMEOUT)  # kill while appending, not while starting up
    time.sleep(rng.uniform(0.0, 0.25))
    process.send_signal(signal.SIGKILL)
    process.wait()
    reader.join()

    recovered = recover_jsonl(log.read_bytes())
    present = {entry.id for entry in recovered.entries}
    tally.trials += 1
    tally.acknowledged += len(acknowledged)
    tally.lost += [entry_id for entry_id in acknowledged if entry_id not in present]
    tally.torn_tails += int(recovered.has_uncommitted_tail)


def run(trials: int, seed: int, directory: Path) -> TrialTally:
    """Run ``trials`` crash trials against one log in ``directory``."""
    rng = random.Random(seed)
    logs = 1
    log = directory / "crash-1.jsonl"
    tally = TrialTally()
    for trial in range(trials):
        if log.exists() and log.stat().st_size > ROTATE_BYTES:
            logs += 1
            log = directory / f"crash-{logs}.jsonl"
        run_trial(log, seed * 1_000 + trial, rng, tally)
        print(
            f"trial {trial + 1}/{trials}: acknowledged {tally.acknowledged}, "
            f"torn tails {tally.torn_tails}, lost {len(tally.lost)}",
            flush=True,
        )
    return tally


def main(argv: Sequence[str] | None = None) -> int:
    """Command line: ``--trials N [--seed S]``; exit 1 if an acknowledged entry was lost."""
    parser = argparse.ArgumentParser(prog="python -m course.tools.crashtest", description=__doc__)
    parser.add_argument("--trials", type=int, default=20, help="number of kills (default 20)")
    parser.add_argument("--seed", type=int, default=11, help="random seed (default 11)")
    parser.add_argument("--dir", type=Path, help="keep the log in this directory")
    parser.add_argument("--child", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--fsync", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child is not None:
        child(args.child, args.seed, args.fsync)
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
    print(tally.summary())
    return 1 if tally.lost else 0


if __name__ == "__main__":
    os.environ.setdefault("PYTHONUNBUFFERED", "1")
    raise SystemExit(main())
