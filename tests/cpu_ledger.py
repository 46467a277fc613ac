"""Where the suite's CPU goes: each test's CPU seconds, its own and its finished children's.

``python -m pytest --cpu-ledger=DIR`` writes one JSON line per test to ``DIR/cpu-WORKER.jsonl``
(``main`` without xdist): the node id, the CPU seconds of the process running it (``self``),
those of the children it waited for (``children``: the sandboxed runs, the CLIs, the kernels)
and its wall seconds. ``python tests/cpu_ledger.py DIR`` sums them by module and lists the
dearest tests. CPU, not wall time, is what a shared machine leaves comparable between runs; a
module-scoped fixture's cost falls on the test that first asks for it, and a child is counted
when it is waited for (a kernel kept for a module, when the module ends).
"""

from __future__ import annotations

import json
import os
import resource
import sys
import time
from collections import defaultdict
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any

import pytest


def cpu_seconds() -> tuple[float, float]:
    """(this process's, its waited-for children's) user plus system CPU seconds."""
    own = resource.getrusage(resource.RUSAGE_SELF)
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime, children.ru_utime + children.ru_stime


class CpuLedger:
    """The plugin ``--cpu-ledger=DIR`` registers: a line per test, appended as it ends."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.out: IO[str] | None = None

    def _file(self) -> IO[str]:
        if self.out is None:
            self.folder.mkdir(parents=True, exist_ok=True)
            worker = os.environ.get("PYTEST_XDIST_WORKER", "main")
            self.out = open(self.folder / f"cpu-{worker}.jsonl", "a", encoding="utf-8")  # noqa: SIM115
        return self.out

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_protocol(self, item: pytest.Item) -> Iterator[None]:
        own, children = cpu_seconds()
        started = time.monotonic()
        yield
        own_after, children_after = cpu_seconds()
        line = {
            "id": item.nodeid,
            "self": round(own_after - own, 3),
            "children": round(children_after - children, 3),
            "wall": round(time.monotonic() - started, 3),
        }
        out = self._file()
        out.write(json.dumps(line) + "\n")
        out.flush()


def read(folder: Path) -> list[dict[str, Any]]:
    return [
        json.loads(line)
        for path in sorted(folder.glob("cpu-*.jsonl"))
        for line in path.read_text(encoding="utf-8").splitlines()
    ]


def report(rows: list[dict[str, Any]], shown: int = 40) -> str:
    """Totals, then the modules and the tests by CPU seconds, dearest first."""

    def cpu(row: dict[str, Any]) -> float:
        return float(row["self"]) + float(row["children"])

    modules: dict[str, list[float]] = defaultdict(lambda: [0.0, 0.0, 0.0, 0.0])
    for row in rows:
        totals = modules[row["id"].split("::")[0]]
        totals[0] += cpu(row)
        totals[1] += row["self"]
        totals[2] += row["wall"]
        totals[3] += 1
    lines = [
        f"{len(rows)} tests: {sum(map(cpu, rows)):.0f} CPU s "
        f"({sum(r['self'] for r in rows):.0f} in the test processes), "
        f"{sum(r['wall'] for r in rows):.0f} wall s summed over workers",
        "",
        "   CPU s   self s   wall s  tests  module",
    ]
    for name, (total, own, wall, count) in sorted(modules.items(), key=lambda m: -m[1][0])[:shown]:
        lines.append(f"{total:8.1f} {own:8.1f} {wall:8.1f} {int(count):6d}  {name}")
    lines += ["", "   CPU s   self s   wall s  test"]
    for row in sorted(rows, key=lambda r: -cpu(r))[:shown]:
        name = row["id"].splitlines()[0][:160]
        lines.append(f"{cpu(row):8.1f} {row['self']:8.1f} {row['wall']:8.1f}  {name}")
    return "\n".join(lines)


if __name__ == "__main__":
    print(report(read(Path(sys.argv[1]))))
