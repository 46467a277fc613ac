"""The suite's own schedule: costly scopes reach xdist's workers first (tests/schedule.py)."""

from __future__ import annotations

import shlex
import tomllib
from pathlib import Path

from schedule import costly_first, scope_of

ROOT = Path(__file__).resolve().parent.parent


def ordered(items: list[tuple[str, bool]]) -> list[str]:
    return [nodeid for nodeid, _ in costly_first(items, lambda i: i[0], lambda i: i[1])]


def test_a_class_is_its_own_scope_and_a_module_function_its_module() -> None:
    # xdist splits at the last "::", inside a parameter id too: the scope must be its very own
    assert scope_of("tests/a.py::TestX::test_one[p::q]") == "tests/a.py::TestX::test_one[p"
    assert scope_of("tests/a.py::TestX::test_one") == "tests/a.py::TestX"
    assert scope_of("tests/a.py::test_one") == "tests/a.py"
    assert scope_of("notebooks/n.ipynb::Cell 4") == "notebooks/n.ipynb"


def test_costly_scopes_go_first_in_the_order_they_came() -> None:
    items = [
        ("a.py::test_1", False),
        ("a.py::test_2", False),
        ("b.py::test_1", True),
        ("c.py::TestK::test_1", True),
        ("d.py::test_1", False),
    ]
    assert ordered(items) == [
        "b.py::test_1",
        "c.py::TestK::test_1",
        "a.py::test_1",
        "a.py::test_2",
        "d.py::test_1",
    ]


def test_one_costly_test_makes_its_whole_scope_costly() -> None:
    items = [("a.py::test_1", False), ("b.py::test_1", False), ("b.py::test_2", True)]
    assert ordered(items) == ["b.py::test_1", "b.py::test_2", "a.py::test_1"]


def test_the_other_scopes_go_most_tests_first_ties_in_the_order_they_came() -> None:
    items = [
        ("a.py::test_1", False),
        ("b.py::test_1", False),
        ("b.py::test_2", False),
        ("c.py::test_1", False),
    ]
    assert ordered(items) == ["b.py::test_1", "b.py::test_2", "a.py::test_1", "c.py::test_1"]


def test_a_notebook_s_cells_keep_their_order() -> None:
    cells = [(f"notebooks/n.ipynb::Cell {n}", False) for n in range(12)]
    assert ordered([("x.py::test_1", True), *cells]) == ["x.py::test_1"] + [c for c, _ in cells]


def test_xdist_keeps_the_order_it_is_given() -> None:
    """Left to itself, ``--dist loadscope`` sorts the scopes by their number of tests again."""
    settings = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    options = shlex.split(settings["tool"]["pytest"]["ini_options"]["addopts"])
    assert options[options.index("--dist") + 1] == "loadscope"
    assert "--no-loadscope-reorder" in options
