"""The CPU ledger (``--cpu-ledger=DIR``): a line per test, summed by module, dearest first."""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace
from typing import Any, cast

import pytest
from cpu_ledger import CpuLedger, read, report


def test_a_test_gets_a_line_with_its_own_and_its_childrens_cpu(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PYTEST_XDIST_WORKER", "gw7")
    ledger = CpuLedger(tmp_path / "ledger")
    item = cast(pytest.Item, SimpleNamespace(nodeid="tests/test_x.py::test_spins"))
    protocol = ledger.pytest_runtest_protocol(item)
    next(protocol)
    sum(range(200_000))  # some CPU for the test's own process
    with pytest.raises(StopIteration):
        next(protocol)
    (line,) = (tmp_path / "ledger" / "cpu-gw7.jsonl").read_text(encoding="utf-8").splitlines()
    found = json.loads(line)
    assert found["id"] == "tests/test_x.py::test_spins"
    assert found["self"] >= 0 and found["children"] >= 0 and found["wall"] >= 0
    assert set(found) == {"id", "self", "children", "wall"}


def test_the_report_sums_modules_and_lists_the_dearest_first(tmp_path: Path) -> None:
    rows: list[dict[str, Any]] = [
        {"id": "tests/a.py::test_one", "self": 1.0, "children": 2.0, "wall": 5.0},
        {"id": "tests/a.py::test_two", "self": 0.5, "children": 0.0, "wall": 1.0},
        {"id": "tests/b.py::test_dear", "self": 0.0, "children": 9.0, "wall": 20.0},
    ]
    for worker, part in (("gw0", rows[:2]), ("gw1", rows[2:])):
        lines = "".join(json.dumps(row) + "\n" for row in part)
        (tmp_path / f"cpu-{worker}.jsonl").write_text(lines, encoding="utf-8")
    said = report(read(tmp_path)).splitlines()
    assert said[0].startswith("3 tests: 12 CPU s (2 in the test processes), 26 wall s")
    modules = [line.split()[-1] for line in said[3:5]]
    assert modules == ["tests/b.py", "tests/a.py"]
    assert said[4].split()[:4] == ["3.5", "1.5", "6.0", "2"]
    dearest = [line.split()[-1] for line in said[7:10]]
    assert dearest == ["tests/b.py::test_dear", "tests/a.py::test_one", "tests/a.py::test_two"]
