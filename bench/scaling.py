"""How build_context's time grows with the history: ``python3 bench/scaling.py [--sizes …]``.

Two regimes, which differ in what the processor's cache holds when a call starts:

- ``cold``: every size's heap lives in one process and the calls take turns; the
  ``gc.collect()`` before each call walks the whole heap, far larger than the cache, so every
  call reads its path from memory. This is the growth of the work itself.
- ``warm``: each size alone in its heap, as in the comparison with ``trim_messages``, the sizes
  taking turns over three rounds. A small path stays in the cache between calls and a large one
  does not, so the ratio adds the cost of outgrowing the cache to the growth of the work.

And two heaps, which differ in CPython's full collections:

- ``comparison``: the path and its LangChain messages, as in the comparison;
- ``paths only``: nothing but the paths.

A full collection runs when the containers that survived the young generations since the last
one outnumber a quarter of the long-lived ones. The copies a call keeps count toward that, so a
call that keeps half of a path which dominates the heap sets one off, while the same call in a
heap of other objects does not. The figures say how many fell inside each call.
"""

from __future__ import annotations

import argparse
import gc
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:  # run as a script: make ``bench`` and ``course`` importable
    sys.path.insert(0, str(ROOT))

from bench.budgets import budgets_for, run_kit  # noqa: E402
from bench.timing import Samples, measure  # noqa: E402
from bench.workload import WORKLOADS  # noqa: E402
from course.session import parse_entries  # noqa: E402

BUDGET = "50%"
HEAPS = ("comparison", "paths only")
REGIMES = ("cold", "warm")


def measure_scaling(
    workload: str,
    sizes: Sequence[int],
    runs: int,
    *,
    heap: str = "comparison",
    regime: str = "cold",
    rounds: int = 3,
) -> dict[str, Any]:
    """build_context at ``BUDGET`` on each size: medians of ``runs * rounds`` calls, ratios."""
    if heap not in HEAPS:
        raise ValueError(f"heap: one of {', '.join(HEAPS)}, got {heap!r}")
    if regime not in REGIMES:
        raise ValueError(f"regime: one of {', '.join(REGIMES)}, got {regime!r}")
    on = [Samples() for _ in sizes]
    paused = [Samples() for _ in sizes]
    if regime == "cold":
        calls = [prepare(workload, size, heap) for size in sizes]
        for _ in range(rounds):
            time_calls(calls, runs, on, paused)
        del calls
    else:
        for turn in range(rounds):
            order = range(len(sizes)) if turn % 2 == 0 else reversed(range(len(sizes)))
            for index in order:
                call = prepare(workload, sizes[index], heap)
                time_calls([call], runs, [on[index]], [paused[index]])
                del call
    gc.collect()
    on_s = [samples.summary() for samples in on]
    paused_s = [samples.summary() for samples in paused]
    return {
        "workload": workload,
        "heap": heap,
        "regime": regime,
        "budget": BUDGET,
        "sizes": list(sizes),
        "runs": runs * rounds,
        "build_context_cpu_s": [s["cpu_s"] for s in on_s],
        "build_context_gc_s": [s["gc_s"] for s in on_s],
        "full_collections": [s["full_collections"] for s in on_s],
        "build_context_cpu_s_gc_paused": [s["cpu_s"] for s in paused_s],
        "ratio": on_s[-1]["cpu_s"] / on_s[0]["cpu_s"],
        "ratio_gc_paused": paused_s[-1]["cpu_s"] / paused_s[0]["cpu_s"],
        "linear_ratio": sizes[-1] / sizes[0],
    }


class _Call:
    """One size's call, holding what its heap holds besides the path."""

    def __init__(self, workload: str, size: int, heap: str) -> None:
        entries = WORKLOADS[workload](size)
        self.budget = budgets_for(entries, [BUDGET])[0]
        if heap == "comparison":
            from bench import compare  # LangChain only for this heap: instructions.py runs without

            self.held: object = compare.to_langchain(entries)
        else:
            self.held = None
        self.path = parse_entries(entries)

    def __call__(self) -> object:
        return run_kit(self.path, self.budget)


def prepare(workload: str, size: int, heap: str) -> Callable[[], object]:
    """One size's call, run once untimed so that first-call costs are not part of it."""
    call = _Call(workload, size, heap)
    gc.collect()
    call()
    return call


def time_calls(
    calls: Sequence[Callable[[], object]],
    runs: int,
    on: Sequence[Samples],
    paused: Sequence[Samples],
) -> None:
    """``runs`` turns of every call, collector on then paused, alternating who goes first."""
    for run in range(runs):
        order = range(len(calls)) if run % 2 == 0 else reversed(range(len(calls)))
        for index in order:
            measure(calls[index], on[index])
            measure(calls[index], paused[index], gc_paused=True)


def describe(result: dict[str, Any]) -> str:
    """One line: the ratio with the collector on and paused, and the full collections."""
    small, large = result["sizes"][0], result["sizes"][-1]
    full = "/".join(f"{n:g}" for n in result["full_collections"])
    return (
        f"{result['workload']}, {result['regime']}, {result['heap']}: "
        f"t({large})/t({small}) {result['ratio']:.1f}, "
        f"collector paused {result['ratio_gc_paused']:.1f} (linear {result['linear_ratio']:g}); "
        f"full collections per call {full}; "
        f"{' / '.join(f'{t:.3f}' for t in result['build_context_cpu_s'])} s"
    )


def sizes_arg(text: str) -> list[int]:
    sizes = [int(part) for part in text.split(",")]
    if len(sizes) < 2 or sizes != sorted(sizes) or sizes[0] < 10:
        raise argparse.ArgumentTypeError("two or more increasing message counts, each >= 10")
    return sizes


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=sizes_arg, default=[10_000, 100_000])
    parser.add_argument("--runs", type=int, default=5, help="timed calls a size, each round")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--workload", choices=list(WORKLOADS), default=next(iter(WORKLOADS)))
    parser.add_argument("--heap", choices=HEAPS, action="append", help="default: both")
    parser.add_argument("--regime", choices=REGIMES, action="append", help="default: both")
    args = parser.parse_args(argv)
    for regime in args.regime or REGIMES:
        for heap in args.heap or HEAPS:
            result = measure_scaling(
                args.workload, args.sizes, args.runs, heap=heap, regime=regime, rounds=args.rounds
            )
            print(describe(result), flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
