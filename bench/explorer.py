"""How long one slider move takes on a real session: ``python3 bench/explorer.py [--moves N]``.

The budget explorer calls ``build_context`` again on every move and re-renders its views. This
script imports the largest shipped Pi session (1,019 chapter entries after import),
builds the explorer as the real-session notebook does, moves ``max_tokens`` through a range of
values (60 unless ``--moves`` says) and prints the median and worst wall-clock time of a move,
in milliseconds.
"""

from __future__ import annotations

import argparse
import json
import math
import statistics
import sys
import time
from collections.abc import Sequence
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:  # run as a script: make ``course`` importable
    sys.path.insert(0, str(ROOT))

from course.context import build_context  # noqa: E402
from course.curricula.ch11.explorer import BudgetExplorer  # noqa: E402
from course.fixtures import Budget  # noqa: E402
from course.groups import group_interactions  # noqa: E402
from course.interop import import_pi_session, pi_session_files  # noqa: E402

MOVES = 60
TARGET_MS = 100.0


def chars_over_four(message: dict[str, object]) -> int:
    """The real-session notebook's estimator: a token per four characters."""
    content = message["content"]
    if isinstance(content, str):
        return math.ceil(len(content) / 4)
    chars = 0
    for block in content:  # type: ignore[attr-defined]
        if block["type"] == "text":
            chars += len(block["text"])
        else:
            chars += len(block["name"]) + len(json.dumps(block["arguments"]))
    return math.ceil(chars / 4)


def main(argv: Sequence[str] = ()) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--moves", type=int, default=MOVES, help=f"default {MOVES}")
    moves = parser.parse_args(argv).moves
    imported = import_pi_session(pi_session_files()["large-session"], repair="synthesize")
    path = imported.path
    budget = Budget(60_000, "You are a coding agent. " * 40, 8_000, 2_000)
    explorer = BudgetExplorer(
        path,
        build_context,
        estimate_tokens=chars_over_four,
        budget=budget,
        groups=group_interactions(path),
        continuous_update=False,
    )
    step = 2_377 * MOVES // moves  # fewer moves cover the same range in wider steps
    values = [12_000 + (i * step) % 120_000 for i in range(moves)]
    timings = []
    for value in values:
        start = time.perf_counter()
        explorer.max_tokens.value = value
        timings.append((time.perf_counter() - start) * 1000)
    median, worst = statistics.median(timings), max(timings)
    print(f"entries on the path: {len(path)}, groups: {len(explorer.groups)}, moves: {moves}")
    print(f"slider move: median {median:.1f} ms, worst {worst:.1f} ms (target <= {TARGET_MS:g} ms)")
    return 0 if median <= TARGET_MS else 1


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
