"""build_context's work in instructions, which no cache or neighbour changes: needs valgrind.

``python3 bench/instructions.py [--sizes 10000,100000]`` runs, for each size, a child Python
(``bench/callgrind_child.py``) under ``valgrind --tool=callgrind`` that loads the history,
parses it and calls build_context once, and another that calls it three times; half the
difference is the instructions of one call in the steady state (``PYTHONHASHSEED=0``). Each pair
runs with the collector on and with it paused; the children hold only the path, the heap in
which a large call sets off a full collection (see ``bench/scaling.py``). The children run side
by side, one per core; at 100 000 messages the run takes about five minutes on two cores.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:  # run as a script: make ``bench`` and ``course`` importable
    sys.path.insert(0, str(ROOT))

from bench.scaling import BUDGET, sizes_arg  # noqa: E402
from bench.workload import WORKLOADS  # noqa: E402

COLLECTED = re.compile(r"Collected\s*:\s*(\d+)")
"""callgrind's total instruction count on its standard error."""
COLLECTOR = ("on", "paused")
CHILD = Path(__file__).resolve().parent / "callgrind_child.py"


def instructions(history: Path, calls: int, collector: str) -> int:
    """Instructions callgrind counts for a child making ``calls`` calls."""
    valgrind = shutil.which("valgrind")
    if valgrind is None:
        raise SystemExit("valgrind is not installed (Debian: apt-get install valgrind)")
    command = [
        valgrind,
        "--tool=callgrind",
        "--callgrind-out-file=/dev/null",
        sys.executable,  # the venv's own interpreter path: its packages come with it
        str(CHILD),
        str(history),
        str(calls),
        collector,
        BUDGET,
    ]
    env = {**os.environ, "PYTHONHASHSEED": "0"}
    done = subprocess.run(command, capture_output=True, text=True, env=env, check=True)
    found = COLLECTED.search(done.stderr)
    if found is None:
        raise SystemExit(f"callgrind printed no count:\n{done.stderr[-2000:]}")
    return int(found.group(1))


def per_call(
    workload: str, sizes: Sequence[int], collectors: Sequence[str] = COLLECTOR
) -> dict[tuple[int, str], int]:
    """Steady-state instructions of one call, by size and collector."""
    with tempfile.TemporaryDirectory(prefix="course-instructions-") as tmp:
        runs: list[tuple[int, str, int, Path]] = []
        for size in sizes:
            history = Path(tmp) / f"history-{size}.json"
            history.write_text(json.dumps(WORKLOADS[workload](size)), encoding="utf-8")
            runs += [(size, c, calls, history) for c in collectors for calls in (1, 3)]
        with ThreadPoolExecutor(max_workers=os.cpu_count() or 1) as pool:
            counts = list(pool.map(lambda run: instructions(run[3], run[2], run[1]), runs))
    by_run = {(size, c, calls): n for (size, c, calls, _), n in zip(runs, counts, strict=True)}
    return {
        (size, c): (by_run[size, c, 3] - by_run[size, c, 1]) // 2
        for size in sizes
        for c in collectors
    }


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=sizes_arg, default=[10_000, 100_000])
    parser.add_argument("--workload", choices=list(WORKLOADS), default=next(iter(WORKLOADS)))
    parser.add_argument(
        "--collector", choices=[*COLLECTOR, "both"], default="both", help="default: both"
    )
    args = parser.parse_args(argv)
    collectors = COLLECTOR if args.collector == "both" else (args.collector,)
    counts = per_call(args.workload, args.sizes, collectors)
    small, large = args.sizes[0], args.sizes[-1]
    for collector in collectors:
        figures = ", ".join(f"{counts[size, collector]:,}" for size in args.sizes)
        ratio = counts[large, collector] / counts[small, collector]
        print(
            f"{args.workload}, {BUDGET}, collector {collector}: instructions a call {figures}; "
            f"I({large})/I({small}) {ratio:.2f} (linear {large / small:g})"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
