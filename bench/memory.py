"""build_context's peak memory on a long path: ``python3 bench/memory.py [--entries N]``.

Builds a path of N parsed entries (default 10⁶) from the benchmark's workload, then traces
one ``build_context`` call at a small budget (``--available``) with ``tracemalloc`` and prints
the path's own size, the size of the result the call returns, and the call's own peak: how
far the traced memory rose above the path while the call ran. The goal: that peak stays
within the path's own size plus what it returns (the call never copies nor re-parses the
whole path). Three more calls, untraced, give the CPU time of one."""

from __future__ import annotations

import argparse
import gc
import sys
import time
import tracemalloc
from collections.abc import Sequence
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:  # run as a script: make ``bench`` and ``course`` importable
    sys.path.insert(0, str(ROOT))

from bench.budgets import SYSTEM_PROMPT, kit_estimator  # noqa: E402
from bench.workload import interactions_for, iter_entries  # noqa: E402
from course.context import BuildContextResult, build_context  # noqa: E402
from course.entries import SessionEntry, parse_session_entry  # noqa: E402

MB = 1e6


def build_path(entries: int) -> list[SessionEntry]:
    """``entries`` parsed entries; the JSON objects they come from are not kept."""
    return [parse_session_entry(value) for value in iter_entries(interactions_for(entries))]


def project(path: Sequence[SessionEntry], available: int) -> BuildContextResult:
    """build_context over ``path`` with ``available`` tokens left for messages."""
    return build_context(
        path,
        max_tokens=available + kit_estimator({"role": "system", "content": SYSTEM_PROMPT}),
        system_prompt=SYSTEM_PROMPT,
        reserved_output=0,
        safety_margin=0,
        estimate_tokens=kit_estimator,
    )


def measure(entries: int, available: int) -> dict[str, Any]:
    """Trace the path's construction and one build_context call over it, then time one."""
    gc.collect()
    tracemalloc.start()
    try:
        path = build_path(entries)
        gc.collect()
        path_bytes = tracemalloc.get_traced_memory()[0]
        tracemalloc.reset_peak()
        result = project(path, available)
        after, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    returned, working = after - path_bytes, peak - path_bytes
    kept, reason = len(result.kept_entry_ids), result.reason
    del result
    times = []
    for _ in range(3):
        gc.collect()
        cpu = time.process_time()
        project(path, available)
        times.append(time.process_time() - cpu)
    return {
        "entries": len(path),
        "available_for_messages": available,
        "kept": kept,
        "reason": reason,
        "path_mb": path_bytes / MB,
        "returned_mb": returned / MB,
        "call_peak_mb": working / MB,
        "call_peak_over_path_and_result": working / (path_bytes + returned),
        "cpu_s_untraced": min(times),
    }


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--entries", type=int, default=1_000_000, help="path length")
    parser.add_argument(
        "--available", type=int, default=4_000, help="tokens left for messages (a small budget)"
    )
    args = parser.parse_args(argv)
    figures = measure(args.entries, args.available)
    print(
        f"{figures['entries']:,} entries, {figures['available_for_messages']:,} tokens for "
        f"messages: kept {figures['kept']:,} ({figures['reason']})\n"
        f"path {figures['path_mb']:.1f} MB, result {figures['returned_mb']:.3f} MB; "
        f"build_context's own peak {figures['call_peak_mb']:.1f} MB = "
        f"{figures['call_peak_over_path_and_result']:.3f} x (path + result); "
        f"{figures['cpu_s_untraced']:.2f} CPU s a call untraced (best of 3)"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
