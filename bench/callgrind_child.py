"""The child ``bench/instructions.py`` runs under callgrind: parse a history, call build_context.

``python3 bench/callgrind_child.py HISTORY CALLS COLLECTOR BUDGET``. Callgrind counts the
interpreter's start and imports in every child, and the instructions of a call are the
difference between two children, so this script imports only what the call needs: the kit and
``bench/budgets.py``, not the parent's argparse, subprocess and threads, nor the timing code.
"""

from __future__ import annotations

import gc
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:  # run as a script: make ``bench`` and ``course`` importable
    sys.path.insert(0, str(ROOT))

from bench.budgets import budgets_for, run_kit  # noqa: E402
from course.session import parse_entries  # noqa: E402


def child(history: Path, calls: int, collector: str, budget_label: str) -> None:
    """Parse the history, then call build_context ``calls`` times at the budget labelled."""
    entries = json.loads(history.read_text(encoding="utf-8"))
    budget = budgets_for(entries, [budget_label])[0]
    path = parse_entries(entries)
    del entries
    gc.collect()
    if collector == "paused":
        gc.disable()
    for _ in range(calls):
        run_kit(path, budget)


if __name__ == "__main__":
    child(Path(sys.argv[1]), int(sys.argv[2]), sys.argv[3], sys.argv[4])
