"""Work counted, not timed: the Python lines a call executes, the same on any machine.

A test that a reader is linear compares the lines it runs on an input and on one four times
larger (linear: about 4, quadratic: about 16). Wall-clock figures belong to the benchmarks.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from types import FrameType
from typing import Any, TypeVar

T = TypeVar("T")


def lines_run(work: Callable[[], T]) -> tuple[T | Exception, int]:
    """What ``work`` returned (or raised) and how many Python lines it executed."""
    count = 0

    def tracer(frame: FrameType, event: str, arg: Any) -> Any:
        nonlocal count
        if event == "line":
            count += 1
        return tracer

    previous = sys.gettrace()
    sys.settrace(tracer)
    try:
        done: T | Exception = work()
    except Exception as error:
        done = error
    finally:
        sys.settrace(previous)
    return done, count


def growth(work: Callable[[int], object], size: int) -> float:
    """Lines run at ``4 * size`` over lines run at ``size``: about 4 when ``work`` is linear."""
    _, small = lines_run(lambda: work(size))
    _, large = lines_run(lambda: work(4 * size))
    return large / max(small, 1)
