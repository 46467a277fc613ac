"""build_context's work in instructions, which no cache or neighbour changes: needs valgrind.

``python3 bench/instructions.py [--sizes 10000,100000]`` runs, for each size, a child Python
under ``valgrind --tool=callgrind`` that loads the history, parses it and calls build_context
once, and another that calls it three times; half the difference is the instructions of one
call in the steady state (the collector on, ``PYTHONHASHSEED=0``). A run at 100 000 messages
takes several minutes.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:  # run as a script: make ``bench`` and ``course`` importable
    sys.path.insert(0, str(ROOT))

from bench import compare  # noqa: E402
from bench.scaling import BUDGET, sizes_arg  # noqa: E402
from bench.workload import WORKLOADS  # noqa: E402
from course.session import parse_entries  # noqa: E402

COLLECTED = re.compile(r"Collected\s*:\s*(\d+)")


def child(history: Path, calls: int) -> None:
    """Inside valgrind: parse the history, then call build_context ``calls`` times."""
    entries = json.loads(history.read_text(encoding="utf-8"))
    budget = compare.budgets_for(entries, [BUDGET])[0]
    path = parse_entries(entries)
    del entries
    gc.collect()
    for _ in range(calls):
        compare.run_kit(path, budget)


def instructions(history: Path, calls: int) -> int:
    """Instructions callgrind counts for a child making ``calls`` calls."""
    valgrind = shutil.which("valgrind")
    if valgrind is None:
        raise SystemExit("valgrind is not installed (Debian: apt-get install valgrind)")
    command = [
        valgrind,
        "--tool=callgrind",
        "--callgrind-out-file=/dev/null",
        os.path.realpath(sys.executable),
        str(Path(__file__).resolve()),
        "--child",
        str(history),
        str(calls),
    ]
    env = {**os.environ, "PYTHONHASHSEED": "0"}
    done = subprocess.run(command, capture_output=True, text=True, env=env, check=True)
    found = COLLECTED.search(done.stderr)
    if found is None:
        raise SystemExit(f"callgrind printed no count:\n{done.stderr[-2000:]}")
    return int(found.group(1))


def per_call(workload: str, size: int) -> int:
    """Steady-state instructions of one build_context call on ``size`` messages."""
    with tempfile.TemporaryDirectory(prefix="course-instructions-") as tmp:
        history = Path(tmp) / "history.json"
        history.write_text(json.dumps(WORKLOADS[workload](size)), encoding="utf-8")
        return (instructions(history, 3) - instructions(history, 1)) // 2


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=sizes_arg, default=[10_000, 100_000])
    parser.add_argument("--workload", choices=list(WORKLOADS), default=next(iter(WORKLOADS)))
    parser.add_argument("--child", nargs=2, metavar=("HISTORY", "CALLS"), help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        child(Path(args.child[0]), int(args.child[1]))
        return 0
    counts = [per_call(args.workload, size) for size in args.sizes]
    for size, count in zip(args.sizes, counts, strict=True):
        print(f"{args.workload}, {size} messages, {BUDGET}: {count:,} instructions a call")
    print(
        f"I({args.sizes[-1]})/I({args.sizes[0]}) {counts[-1] / counts[0]:.2f} "
        f"(linear {args.sizes[-1] / args.sizes[0]:g})"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
