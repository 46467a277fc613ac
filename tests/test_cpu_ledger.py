"""The CPU ledger (``--cpu-ledger=DIR``): a line per test, summed by module, dearest first."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import time
from pathlib import Path
from types import SimpleNamespace
from typing import Any, cast

import pytest
from cpu_ledger import CpuLedger, read, report

TICK_GRAIN = 0.05  # seconds the cgroup's account may trail the process's own
SPIN = "import time\nend = time.process_time() + 0.3\nwhile time.process_time() < end: pass"


def spin(seconds: float) -> None:
    end = time.process_time() + seconds
    while time.process_time() < end:
        pass


def test_a_test_gets_a_line_with_its_own_and_its_childrens_cpu(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PYTEST_XDIST_WORKER", "gw7")
    ledger = CpuLedger(tmp_path / "ledger")
    try:
        item = cast(pytest.Item, SimpleNamespace(nodeid="tests/test_x.py::test_spins"))
        protocol = ledger.pytest_runtest_protocol(item)
        next(protocol)
        spin(0.2)  # some CPU for the test's own process
        with pytest.raises(StopIteration):
            next(protocol)
    finally:
        ledger.pytest_unconfigure()
    lines = (tmp_path / "ledger" / "cpu-gw7.jsonl").read_text(encoding="utf-8").splitlines()
    found = json.loads(lines[-1])
    assert found["id"] == "tests/test_x.py::test_spins"
    assert found["self"] >= 0 and found["children"] >= 0 and found["wall"] >= 0
    assert set(found) - {"tree"} == {"id", "self", "children", "wall"}
    if ledger.tree.why:
        assert json.loads(lines[0]) == {"no_tree": ledger.tree.why}
    else:
        assert found["tree"] >= found["self"] - TICK_GRAIN >= 0.2 - TICK_GRAIN, found


def test_the_tree_counts_a_child_in_a_pid_namespace_that_children_misses(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A sandboxed child (bubblewrap, a PID namespace of its own) reaches no parent's
    ``RUSAGE_CHILDREN``; the cgroup counts it."""
    bwrap = shutil.which("bwrap")
    if bwrap is None:
        pytest.skip("bubblewrap is not installed (scripts/setup installs it)")
    monkeypatch.setenv("PYTEST_XDIST_WORKER", "gw8")
    ledger = CpuLedger(tmp_path / "ledger")
    try:
        if ledger.tree.why:
            pytest.skip(f"no cgroup for the tree: {ledger.tree.why}")
        item = cast(pytest.Item, SimpleNamespace(nodeid="tests/test_x.py::test_sandboxed"))
        protocol = ledger.pytest_runtest_protocol(item)
        next(protocol)
        command = [bwrap, "--unshare-pid", "--dev-bind", "/", "/", sys.executable, "-c", SPIN]
        subprocess.run(command, check=True)
        with pytest.raises(StopIteration):
            next(protocol)
    finally:
        ledger.pytest_unconfigure()
    found = json.loads((tmp_path / "ledger" / "cpu-gw8.jsonl").read_text("utf-8").splitlines()[-1])
    assert found["children"] < 0.2 <= found["tree"], found


def test_the_report_sums_modules_and_lists_the_dearest_first(tmp_path: Path) -> None:
    rows: list[dict[str, Any]] = [
        {"id": "tests/a.py::test_one", "self": 1.0, "children": 2.0, "wall": 5.0},
        {"id": "tests/a.py::test_two", "self": 0.5, "children": 0.0, "wall": 1.0},
        {"id": "tests/b.py::test_dear", "self": 0.0, "children": 9.0, "wall": 20.0},
    ]
    for worker, part in (("gw0", rows[:2]), ("gw1", rows[2:])):
        lines = "".join(json.dumps(row) + "\n" for row in part)
        (tmp_path / f"cpu-{worker}.jsonl").write_text(lines, encoding="utf-8")
    found, no_tree = read(tmp_path)
    said = report(found, no_tree=no_tree).splitlines()
    assert said[0].startswith("3 tests: 12 CPU s (2 in the test processes), 26 wall s")
    assert said[1] == (
        "counted: the test processes and their waited-for children only, no sandboxed child"
    )
    modules = [line.split()[-1] for line in said[4:6]]
    assert modules == ["tests/b.py", "tests/a.py"]
    assert said[5].split()[:4] == ["3.5", "1.5", "6.0", "2"]
    dearest = [line.split()[-1] for line in said[8:11]]
    assert dearest == ["tests/b.py::test_dear", "tests/a.py::test_one", "tests/a.py::test_two"]


def test_the_report_counts_the_tree_when_every_line_has_it(tmp_path: Path) -> None:
    rows: list[dict[str, Any]] = [
        {"id": "tests/a.py::test_one", "self": 1.0, "children": 0.0, "wall": 5.0, "tree": 4.0},
        {"id": "tests/b.py::test_two", "self": 0.5, "children": 0.0, "wall": 1.0, "tree": 0.5},
    ]
    lines = "".join(json.dumps(row) + "\n" for row in rows)
    (tmp_path / "cpu-gw0.jsonl").write_text(lines, encoding="utf-8")
    said = report(*read(tmp_path)).splitlines()
    assert said[0].startswith("2 tests: 4 CPU s (2 in the test processes)")
    assert said[1] == "counted: every process each test started (cgroup)"


def test_a_worker_without_a_cgroup_says_why(tmp_path: Path) -> None:
    row = {"id": "tests/a.py::test_one", "self": 1.0, "children": 0.0, "wall": 5.0}
    lines = json.dumps({"no_tree": "no cgroup2 mount"}) + "\n" + json.dumps(row) + "\n"
    (tmp_path / "cpu-gw0.jsonl").write_text(lines, encoding="utf-8")
    said = report(*read(tmp_path)).splitlines()
    assert said[1].endswith("no sandboxed child (no cgroup2 mount)")
