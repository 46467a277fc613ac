"""Benchmarks of build_context and the JSONL store: ``python3 bench/run.py [--quick]``."""

from __future__ import annotations

import argparse
import gc
import json
import os
import platform
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from functools import partial
from importlib import metadata
from pathlib import Path
from typing import Any, cast

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:  # run as a script: make ``bench`` and ``course`` importable
    sys.path.insert(0, str(ROOT))

import langchain_core  # noqa: E402
from langchain_core.messages import BaseMessage  # noqa: E402

from bench import compare, jsonl_bench  # noqa: E402
from bench.budgets import budgets_for, run_kit  # noqa: E402
from bench.scaling import describe, measure_scaling, sizes_arg  # noqa: E402
from bench.timing import interleave  # noqa: E402
from bench.workload import WORKLOADS, history_json  # noqa: E402
from course.context import BuildContextResult  # noqa: E402
from course.session import parse_entries  # noqa: E402

SIZES = (1_000, 10_000, 100_000)
IN_BUDGET = ("10%", "50%", "90%", "all")
HEADLINE = "50%"
MAIN, SECOND = WORKLOADS
"""The chapter's workload, compared at every budget, and a second one at the headline budget."""


def installed(distribution: str) -> str | None:
    try:
        return metadata.version(distribution)
    except metadata.PackageNotFoundError:
        return None


def machine() -> dict[str, Any]:
    cpu = platform.processor() or "unknown"
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as info:
            for line in info:
                if line.startswith("model name"):
                    cpu = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    return {
        "python": platform.python_version(),
        "implementation": platform.python_implementation(),
        "platform": platform.platform(),
        "cpu": cpu,
        "cores": os.cpu_count(),
        "langchain_core": langchain_core.__version__,
        "fast_json": jsonl_bench.fast_json_available(),
        "orjson": installed("orjson"),
        "timer": "time.process_time (CPU seconds of this process), median of interleaved runs",
        "gc": "on (CPython defaults); gc.collect() before every timed call",
    }


def warm_up() -> None:
    """One untimed pass of both trimmers, so first-call imports and caches are not timed."""
    entries = history_json(50)
    path = parse_entries(entries)
    lc_messages = compare.to_langchain(entries)
    for budget in budgets_for(entries, [HEADLINE, "overflow"]):
        run_kit(path, budget)
        compare.run_trim(lc_messages, budget)
        compare.run_trim_memoized(lc_messages, budget)


def compare_size(
    messages: int, labels: Sequence[str], runs: int, workload: str = MAIN
) -> list[dict[str, Any]]:
    """build_context against trim_messages on one history, one case per budget."""
    entries = WORKLOADS[workload](messages)
    budgets = budgets_for(entries, labels)
    path = parse_entries(entries)
    lc_messages = compare.to_langchain(entries)
    del entries
    cases = []
    for budget in budgets:
        case_runs = 1 if budget.label == "overflow" else runs
        contenders: list[Callable[[], object]] = [
            partial(run_kit, path, budget),
            partial(compare.run_trim, lc_messages, budget),
        ]
        if budget.label == HEADLINE:
            memoized = partial(compare.run_trim_memoized, lc_messages, budget)
            contenders.append(memoized)
        samples, results = interleave(contenders, case_runs)
        kit_result = cast(BuildContextResult, results[0])
        kit_ids = kit_result.kept_entry_ids
        trim_ids = compare.trimmed_ids(cast(list[BaseMessage], results[1]))
        kit, trim = samples[0].summary(), samples[1].summary()
        case: dict[str, Any] = {
            "workload": workload,
            "messages": len(path),
            "budget": budget.label,
            "available_for_messages": budget.available,
            "kit_max_tokens": budget.kit_max_tokens,
            "trim_max_tokens": budget.trim_max_tokens,
            "build_context": kit,
            "trim_messages": trim,
            "ratio": kit["cpu_s"] / trim["cpu_s"],
            "kit_reason": kit_result.reason,
            "kit_kept": len(kit_ids),
            "trim_kept": len(trim_ids),
            "identical": kit_ids == trim_ids,
        }
        if budget.label == HEADLINE:
            paused, _ = interleave(contenders[:2], case_runs, gc_paused=True)
            kit_paused, trim_paused = paused[0].summary(), paused[1].summary()
            case["gc_paused"] = {
                "build_context": kit_paused,
                "trim_messages": trim_paused,
                "ratio": kit_paused["cpu_s"] / trim_paused["cpu_s"],
            }
        if len(samples) > 2:
            memo = samples[2].summary()
            memo_ids = compare.trimmed_ids(cast(list[BaseMessage], results[2]))
            case["trim_messages_memoized_counter"] = memo
            case["ratio_vs_memoized_counter"] = kit["cpu_s"] / memo["cpu_s"]
            case["memoized_identical"] = memo_ids == trim_ids
        cases.append(case)
        print(row(case), flush=True)
    return cases


def row(case: dict[str, Any]) -> str:
    kit, trim = case["build_context"], case["trim_messages"]
    same = "yes" if case["identical"] else "NO"
    if case["budget"] == "overflow":
        same = "n/a"
    line = (
        f"{case['messages']:>7} msgs  {case['budget']:>8}  kept {case['kit_kept']:>6}/"
        f"{case['trim_kept']:<6} build_context {kit['cpu_s']:7.3f}s (gc {kit['gc_s']:.3f})  "
        f"trim_messages {trim['cpu_s']:7.3f}s  ratio {case['ratio']:.2f}  identical {same}"
    )
    if "gc_paused" in case:
        paused = case["gc_paused"]
        line += (
            f"\n{'':>24}collector paused: build_context "
            f"{paused['build_context']['cpu_s']:7.3f}s  trim_messages "
            f"{paused['trim_messages']['cpu_s']:7.3f}s  ratio {paused['ratio']:.2f}"
        )
    return line


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--quick", action="store_true", help="fewer budgets, runs and appends")
    parser.add_argument("--out", type=Path, default=ROOT / "bench" / "results.json")
    parser.add_argument(
        "--sizes",
        type=sizes_arg,
        default=list(SIZES),
        help="history sizes in messages, comma-separated (default: 1000,10000,100000)",
    )
    parser.add_argument(
        "--runs", type=int, help="timed runs per contender (default 5/7; scaling: 3/5 a round)"
    )
    args = parser.parse_args(argv)
    started = time.perf_counter()
    sizes: list[int] = args.sizes
    runs: int = args.runs or (5 if args.quick else 7)

    warm_up()
    cases: list[dict[str, Any]] = []
    print(f"workload {MAIN}", flush=True)
    for size in sizes:
        labels = list(IN_BUDGET)
        if args.quick and size == sizes[-1]:
            labels = [HEADLINE]
        cases += compare_size(size, labels + ["overflow"], runs)
        gc.collect()
    second: list[dict[str, Any]] = []
    print(f"workload {SECOND}", flush=True)
    for size in sizes[-2:]:
        second += compare_size(size, [HEADLINE], runs, SECOND)
        gc.collect()

    def case(messages: int, budget: str) -> dict[str, Any]:
        return next(c for c in cases if c["messages"] == messages and c["budget"] == budget)

    second_headline = second[-1]
    in_budget = [c for c in cases if c["budget"] != "overflow"]
    overflow = [c for c in cases if c["budget"] == "overflow"]
    headline = case(sizes[-1], HEADLINE)

    scaling_runs = args.runs or (3 if args.quick else 5)  # calls a size, in each of 3 rounds
    scalings: dict[str, dict[str, Any]] = {}
    settings = {
        "scaling": (MAIN, "comparison", "cold"),
        "scaling_warm": (MAIN, "comparison", "warm"),
        "scaling_paths_only": (MAIN, "paths only", "cold"),
        "scaling_second_workload": (SECOND, "comparison", "cold"),
    }
    for key, (workload, heap, regime) in settings.items():
        scalings[key] = measure_scaling(
            workload, sizes[-2:], scaling_runs, heap=heap, regime=regime
        )
        print(describe(scalings[key]), flush=True)
    scaling, second_scaling = scalings["scaling"], scalings["scaling_second_workload"]

    entries = history_json(sizes[-1])
    with tempfile.TemporaryDirectory(prefix="course-bench-") as tmp:
        directory = Path(tmp)
        log = directory / "session.jsonl"
        jsonl_bench.write_log(log, entries)
        count = len(entries)
        del entries  # not part of the heap the readers work in
        jsonl = jsonl_bench.open_vs_json_loads(log, count, runs)
        print(
            f"JSONL open {count} entries: store {jsonl['kit_open']['cpu_s']:.3f}s, "
            f"bare json.loads {jsonl['bare_json_loads']['cpu_s']:.3f}s, "
            f"throughput ratio {jsonl['ratio']:.2f} (collector paused "
            f"{jsonl['ratio_gc_paused']:.2f}, json module only {jsonl['ratio_json_only']:.2f})",
            flush=True,
        )
        memory = jsonl_bench.peak_memory(log)
        appends = history_json(min(count, 10_000 if args.quick else 20_000))
        synced_count = max(1, min(200 if args.quick else 1_000, count // 10))
        plain = jsonl_bench.append_rate(directory, appends, fsync=False)
        synced = jsonl_bench.append_rate(directory, appends[:synced_count], fsync=True)
        filesystem = jsonl_bench.filesystem_of(directory)
    print(
        f"appends: {plain['entries_per_s']:,.0f}/s, with fsync {synced['entries_per_s']:,.0f}/s "
        f"({filesystem}); peak memory: store {memory['kit_open_mb']:.0f} MB, "
        f"bare loop {memory['bare_json_loads_mb']:.0f} MB",
        flush=True,
    )

    results: dict[str, Any] = {
        "build_context_vs_trim_messages": {
            "messages": headline["messages"],
            "budget": HEADLINE,
            "ratio": headline["ratio"],
            "ratio_gc_paused": headline["gc_paused"]["ratio"],
            "ratio_vs_memoized_counter": headline["ratio_vs_memoized_counter"],
            "mismatches": sum(not c["identical"] for c in in_budget),
            "mismatched_cases": [
                f"{c['messages']} messages, {c['budget']}" for c in in_budget if not c["identical"]
            ],
            "cases_compared": len(in_budget),
            "cases": in_budget,
        },
        "second_workload": {
            "workload": SECOND,
            "description": " ".join((WORKLOADS[SECOND].__doc__ or "").split()),
            "messages": second_headline["messages"],
            "budget": HEADLINE,
            "ratio": second_headline["ratio"],
            "ratio_gc_paused": second_headline["gc_paused"]["ratio"],
            "mismatches": sum(not c["identical"] for c in second),
            "scaling": second_scaling["ratio"],
            "cases": second,
        },
        "newest_group_overflow": [
            {
                "messages": c["messages"],
                "available_for_messages": c["available_for_messages"],
                "build_context": f"{c['kit_reason']}, keeps {c['kit_kept']} messages",
                "trim_messages": f"keeps {c['trim_kept']} messages besides the system message",
            }
            for c in overflow
        ],
        "jsonl_open_vs_json_loads": jsonl,
        "jsonl_append": {"plain": plain, "fsync": synced, "filesystem": filesystem},
        "jsonl_peak_memory": memory,
        "scaling_100k_over_10k": scaling["ratio"],
        **scalings,
        "meta": {**machine(), "quick": args.quick, "runs": runs},
    }
    results["meta"]["elapsed_s"] = time.perf_counter() - started
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(results, indent=2) + "\n", encoding="utf-8")
    mismatches = results["build_context_vs_trim_messages"]["mismatches"]
    print(
        f"build_context/trim_messages at {headline['messages']} messages: "
        f"{headline['ratio']:.2f}, collector paused {headline['gc_paused']['ratio']:.2f} "
        f"(mismatches {mismatches}); JSONL open/json.loads throughput {jsonl['ratio']:.2f}; "
        f"t({sizes[-1]})/t({sizes[-2]}) {scaling['ratio']:.1f}, collector paused "
        f"{scaling['ratio_gc_paused']:.1f} ({SECOND} {second_scaling['ratio']:.1f}); "
        f"{SECOND}: {second_headline['ratio']:.2f}, collector paused "
        f"{second_headline['gc_paused']['ratio']:.2f} "
        f"(mismatches {results['second_workload']['mismatches']}); "
        f"{results['meta']['elapsed_s']:.0f}s -> {args.out}"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
