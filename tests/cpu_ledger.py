"""Where the suite's CPU goes: each test's CPU seconds, its process tree's whole.

``python -m pytest --cpu-ledger=DIR`` writes one JSON line per test to ``DIR/cpu-WORKER.jsonl``
(``main`` without xdist): the node id, the CPU seconds of the process running it (``self``),
those of the children it waited for (``children``), those of every process it started, at any
depth, finished or not (``tree``), and its wall seconds. ``python tests/cpu_ledger.py DIR`` sums
them by module and lists the dearest tests. CPU, not wall time, is what a shared machine leaves
comparable between runs; a module-scoped fixture's cost falls on the test that first asks for it.

``children`` misses most of the grading: a process that bubblewrap runs in a PID namespace of
its own never reaches its parent's ``RUSAGE_CHILDREN`` (the namespace's init reaps it), so a
sandboxed check's pytest and probe driver, most of its CPU, are not in it. ``tree`` is read from
a cgroup (v2) the worker moves itself into at its start, which every process it starts inherits;
where no cgroup can be made (not root, no cgroup2 mount, a manager that does not delegate) the
ledger says so and ``tree`` is left out. The two clocks are the kernel's two accounts: the
cgroup's is charged as the scheduler updates it, so at a test's end it can trail the process's
own by the slice still running (a few milliseconds); compare them at that grain, not exactly.
"""

from __future__ import annotations

import contextlib
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


def cgroup2_root() -> Path | None:
    """Where cgroup2 is mounted (``/sys/fs/cgroup`` or, on a hybrid host, ``…/unified``)."""
    for line in Path("/proc/self/mountinfo").read_text(encoding="utf-8").splitlines():
        before, _, after = line.partition(" - ")
        if after.split(" ", 1)[0] == "cgroup2":
            return Path(before.split(" ")[4])
    return None


class TreeClock:
    """CPU seconds of this process and everything it starts, from a cgroup of their own."""

    def __init__(self, name: str) -> None:
        self.group: Path | None = None
        self.home: Path | None = None
        self.why = ""
        root = cgroup2_root()
        if root is None:
            self.why = "no cgroup2 mount"
            return
        own = Path("/proc/self/cgroup").read_text(encoding="utf-8")
        relative = next((ln[3:] for ln in own.splitlines() if ln.startswith("0::")), "/")
        home = root / relative.lstrip("/")
        group = home / name
        try:
            group.mkdir(exist_ok=True)
            (group / "cgroup.procs").write_text(str(os.getpid()), encoding="utf-8")
        except OSError as error:
            self.why = f"cannot make a cgroup in {home}: {error.strerror}"
            with contextlib.suppress(OSError):
                group.rmdir()
            return
        self.group, self.home = group, home

    def seconds(self) -> float | None:
        if self.group is None:
            return None
        for line in (self.group / "cpu.stat").read_text(encoding="utf-8").splitlines():
            key, _, value = line.partition(" ")
            if key == "usage_usec":
                return int(value) / 1e6
        return None

    def close(self) -> None:
        """Back to the cgroup the process came from; the ledger's is removed once empty."""
        if self.group is None or self.home is None:
            return
        with contextlib.suppress(OSError):
            (self.home / "cgroup.procs").write_text(str(os.getpid()), encoding="utf-8")
            self.group.rmdir()
        self.group = None


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
        self.worker = os.environ.get("PYTEST_XDIST_WORKER", "main")
        self._tree: TreeClock | None = None

    @property
    def tree(self) -> TreeClock:
        """Made by the first test this process runs (xdist's controller runs none)."""
        if self._tree is None:
            self._tree = TreeClock(f"course-cpu-ledger-{self.worker}-{os.getpid()}")
        return self._tree

    def _file(self) -> IO[str]:
        if self.out is None:
            self.folder.mkdir(parents=True, exist_ok=True)
            self.out = open(self.folder / f"cpu-{self.worker}.jsonl", "a", encoding="utf-8")  # noqa: SIM115
            if self.tree.why:
                self.out.write(json.dumps({"no_tree": self.tree.why}) + "\n")
        return self.out

    def pytest_unconfigure(self) -> None:
        if self._tree is not None:
            self._tree.close()

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_protocol(self, item: pytest.Item) -> Iterator[None]:
        # The tree is read outside the process's own readings: made (and joined) before them,
        # read first at the start and last at the end, so it spans everything they count.
        tree = self.tree.seconds()
        own, children = cpu_seconds()
        started = time.monotonic()
        yield
        own_after, children_after = cpu_seconds()
        tree_after = self.tree.seconds()
        line: dict[str, Any] = {
            "id": item.nodeid,
            "self": round(own_after - own, 3),
            "children": round(children_after - children, 3),
            "wall": round(time.monotonic() - started, 3),
        }
        if tree is not None and tree_after is not None:
            line["tree"] = round(tree_after - tree, 3)
        out = self._file()
        out.write(json.dumps(line) + "\n")
        out.flush()


def read(folder: Path) -> tuple[list[dict[str, Any]], list[str]]:
    """The tests' lines, and why a worker counted no ``tree`` (if one did not)."""
    lines = [
        json.loads(line)
        for path in sorted(folder.glob("cpu-*.jsonl"))
        for line in path.read_text(encoding="utf-8").splitlines()
    ]
    return [ln for ln in lines if "id" in ln], sorted(
        {ln["no_tree"] for ln in lines if "no_tree" in ln}
    )


def report(rows: list[dict[str, Any]], no_tree: list[str] | None = None, shown: int = 40) -> str:
    """Totals, then the modules and the tests by CPU seconds, dearest first: the process
    tree's where every line has it, else the test process's and its waited-for children's."""
    whole = bool(rows) and all("tree" in row for row in rows)

    def cpu(row: dict[str, Any]) -> float:
        if whole:
            return float(row["tree"])
        return float(row["self"]) + float(row["children"])

    modules: dict[str, list[float]] = defaultdict(lambda: [0.0, 0.0, 0.0, 0.0])
    for row in rows:
        totals = modules[row["id"].split("::")[0]]
        totals[0] += cpu(row)
        totals[1] += row["self"]
        totals[2] += row["wall"]
        totals[3] += 1
    counted = (
        "every process each test started (cgroup)"
        if whole
        else "the test processes and their waited-for children only, no sandboxed child"
        + (f" ({'; '.join(no_tree)})" if no_tree else "")
    )
    lines = [
        f"{len(rows)} tests: {sum(map(cpu, rows)):.0f} CPU s "
        f"({sum(r['self'] for r in rows):.0f} in the test processes), "
        f"{sum(r['wall'] for r in rows):.0f} wall s summed over workers",
        f"counted: {counted}",
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
    found, why = read(Path(sys.argv[1]))
    print(report(found, no_tree=why))
