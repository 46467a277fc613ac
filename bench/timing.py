"""Interleaved timing: CPU seconds (and the garbage collector's share) per call, medians."""

from __future__ import annotations

import gc
import statistics
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any


@dataclass
class Samples:
    """Per-run measurements of one contender."""

    cpu: list[float] = field(default_factory=list)
    wall: list[float] = field(default_factory=list)
    gc: list[float] = field(default_factory=list)
    full: list[int] = field(default_factory=list)
    """Full (generation 2) collections during each run."""

    def summary(self) -> dict[str, float]:
        return {
            "cpu_s": statistics.median(self.cpu),
            "wall_s": statistics.median(self.wall),
            "gc_s": statistics.median(self.gc),
            "full_collections": statistics.median(self.full),
            "runs": len(self.cpu),
        }


class _GcClock:
    """CPU time the cyclic garbage collector spends while it is installed, and its full runs."""

    def __init__(self) -> None:
        self.total = 0.0
        self.full = 0
        self._start = 0.0

    def __call__(self, phase: str, info: dict[str, Any]) -> None:
        if phase == "start":
            self._start = time.process_time()
        else:
            self.total += time.process_time() - self._start
            self.full += info["generation"] == 2


def measure(fn: Callable[[], object], samples: Samples, *, gc_paused: bool = False) -> object:
    """Run ``fn`` once from a freshly collected heap and record its CPU, wall and GC time.

    With ``gc_paused`` the cyclic garbage collector is disabled for the call (and enabled
    again afterwards), which shows what the code itself costs.
    """
    gc.collect()
    clock = _GcClock()
    gc.callbacks.append(clock)
    if gc_paused:
        gc.disable()
    try:
        wall = time.perf_counter()
        cpu = time.process_time()
        result = fn()
        cpu = time.process_time() - cpu
        wall = time.perf_counter() - wall
    finally:
        gc.enable()
        gc.callbacks.remove(clock)
    samples.cpu.append(cpu)
    samples.wall.append(wall)
    samples.gc.append(clock.total)
    samples.full.append(clock.full)
    return result


def interleave(
    contenders: Sequence[Callable[[], object]], runs: int, *, gc_paused: bool = False
) -> tuple[list[Samples], list[object]]:
    """Run every contender ``runs`` times, alternating who goes first; last results kept."""
    samples = [Samples() for _ in contenders]
    results: list[object] = [None] * len(contenders)
    order = list(range(len(contenders)))
    for run in range(runs):
        for index in order if run % 2 == 0 else reversed(order):
            results[index] = None  # the previous result is not part of the next run's heap
            results[index] = measure(contenders[index], samples[index], gc_paused=gc_paused)
    return samples, results
