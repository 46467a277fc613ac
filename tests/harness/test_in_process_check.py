"""The browser's check(): grading in the caller's own process gives the command line's verdict.

Where no child process can start (Pyodide), ``GradingOptions(in_process=True)`` runs the focused
tests with ``pytest.main`` and answers the probe cases in this process, each under a
``sys.settrace`` time limit. On the same files it must give what ``checkpoint 11 --lab X
--practice DIR --json`` gives: each lab's status and counts, each test's status, each probe
case's agreement. Run here in plain pytest (no browser), on this machine's Python.
"""

from __future__ import annotations

import gc
import sys
import time
import types
from pathlib import Path
from typing import Any

import pytest
from harness_support import (
    HANGS,
    QUICK,
    MakeWorkspace,
    command_line_report,
    essentials,
    on_the_command_line,
    replace_in,
    sabotage,
    with_mutant,
)
from mutants import BROWSER_CHECKED, Mutant
from solutions import solve_lab

from course.grading.verdict.engine import GradingOptions, evaluate
from course.harness.manifest import Manifest
from course.harness.runner import Limits

pytestmark = pytest.mark.costly  # handed to a worker first (tests/schedule.py)


def in_this_process(
    manifest: Manifest, kit: Path, workspace: Path, lab: str, seconds: float
) -> dict[str, Any]:
    result = evaluate(
        manifest,
        kit,
        workspace,
        [lab],
        Limits(test_seconds=seconds),
        GradingOptions(in_process=True),
    )
    return essentials(result.to_json())


def assert_same_verdict(
    manifest: Manifest, kit: Path, workspace: Path, lab: str, tmp_path: Path, seconds: float = 10.0
) -> dict[str, Any]:
    here = in_this_process(manifest, kit, workspace, lab, seconds)
    there = on_the_command_line(workspace, lab, seconds, tmp_path)
    assert here == there, (
        f"Lab {lab} on {workspace}\nexpected (CLI): {there}\ngot (in process): {here}"
    )
    return here


FRESH_LABS = ("11.1", "11.3", "11.5")
Fresh = tuple[Path, dict[str, Any], dict[str, Any]]
"""A fresh workspace, its report in this process, its report on the command line."""


@pytest.fixture(scope="module")
def fresh(manifest: Manifest, kit: Path, make_workspace: MakeWorkspace) -> Fresh:
    """A fresh workspace and its reports for ``FRESH_LABS``, graded once in this process and
    once on the command line; each test reads the labs it is about (the workspace is only read)."""
    workspace = make_workspace("fresh")
    options = GradingOptions(in_process=True)
    here = evaluate(manifest, kit, workspace, FRESH_LABS, Limits(), options).to_json()
    there = command_line_report(workspace, FRESH_LABS, Limits().test_seconds, workspace.parent)
    return workspace, here, there


@pytest.mark.parametrize("lab", FRESH_LABS)
def test_a_fresh_workspace_is_pending_as_on_the_command_line(lab: str, fresh: Fresh) -> None:
    workspace, here, there = fresh
    got, expected = essentials(here, lab), essentials(there, lab)
    assert got == expected, (
        f"Lab {lab} on {workspace}\nexpected (CLI): {expected}\ngot (in process): {got}"
    )
    assert got["labs"][lab]["status"] == "pending"


def test_a_solved_lab_passes_as_on_the_command_line(
    manifest: Manifest, kit: Path, make_workspace: MakeWorkspace, tmp_path: Path
) -> None:
    workspace = make_workspace("solved")
    for lab in ("11.1", "11.2", "11.3"):
        solve_lab(manifest, kit, workspace, lab)
    got = assert_same_verdict(manifest, kit, workspace, "11.3", tmp_path)
    assert got["labs"]["11.3"]["status"] == "passed"
    assert got["labs"]["11.3"]["agreed"] == got["labs"]["11.3"]["cases"] > 0


@pytest.mark.parametrize("mutant", BROWSER_CHECKED, ids=lambda m: m.name)
def test_a_wrong_version_fails_as_on_the_command_line(
    mutant: Mutant, manifest: Manifest, kit: Path, make_workspace: MakeWorkspace, tmp_path: Path
) -> None:
    workspace = with_mutant(manifest, kit, make_workspace, mutant)
    got = assert_same_verdict(manifest, kit, workspace, mutant.lab, tmp_path)
    assert got["labs"][mutant.lab]["status"] == "failed"


SPINS = "while True:\n        pass"


def test_an_endless_loop_times_out_as_on_the_command_line(
    manifest: Manifest, kit: Path, make_workspace: MakeWorkspace, tmp_path: Path
) -> None:
    workspace = make_workspace("loop")
    solve_lab(manifest, kit, workspace, "11.1")
    sabotage(workspace, "summary", "parse_summary", SPINS)
    tracing, started = sys.gettrace(), time.monotonic()
    got = in_this_process(manifest, kit, workspace, "11.1", QUICK.test_seconds)
    took = time.monotonic() - started
    # the command line kills whatever overruns, spinning or waiting: its side of the comparison
    # waits (the time limit under test here is the in-kernel one, which must stop a spin)
    replace_in(workspace / "pi_course" / "summary.py", SPINS, HANGS)
    there = on_the_command_line(workspace, "11.1", QUICK.test_seconds, tmp_path)
    assert got == there, f"expected (CLI): {there}\ngot (in process): {got}"
    assert got["labs"]["11.1"]["status"] == "timeout"
    assert took < 30, f"an endless loop cost {took:.1f}s in process (limit 2s per test)"
    assert sys.gettrace() is tracing, "the time limit's trace function stays after the check"


def test_a_check_leaves_the_kernels_imports_as_they_were(
    manifest: Manifest, kit: Path, make_workspace: MakeWorkspace
) -> None:
    """The check grades the saved files, not the kernel's modules, and gives the kernel its own
    modules back (objects its cells made keep their classes); the copy's conftest.py leaves no
    import hook behind (it refuses the reference's modules)."""
    workspace = make_workspace("kernel")
    solve_lab(manifest, kit, workspace, "11.1")
    sys.modules.pop("course.display.experiments", None)
    finders, path = list(sys.meta_path), list(sys.path)
    sys.path.insert(0, str(workspace))
    try:
        kernels = __import__(f"{manifest.package}.summary").summary
        # saved after the kernel imported it: the check must see the saved file
        sabotage(workspace, "summary", "parse_summary", "raise ValueError('edited')")
        got = in_this_process(manifest, kit, workspace, "11.1", 10.0)
        assert got["labs"]["11.1"]["status"] == "failed", got
        assert sys.modules[f"{manifest.package}.summary"] is kernels
        assert sys.meta_path == finders
        __import__("course.display.experiments")
    finally:
        sys.path[:] = path
        for name in [n for n in sys.modules if n.split(".")[0] == manifest.package]:
            del sys.modules[name]


def test_a_kernel_module_named_like_a_test_file_does_not_stand_in_for_it(
    manifest: Manifest, kit: Path, fresh: Fresh
) -> None:
    """pytest imports a test file by its basename: a module of that name the kernel already
    holds (a suite that collected the kit's own tests/chapter11, say) is set aside for the check
    and given back after it."""
    workspace, _, there = fresh
    names = ("test_11_context_compaction", "conftest")
    stand_ins = {name: types.ModuleType(name) for name in names}
    saved = {name: sys.modules.get(name) for name in names}
    sys.modules.update(stand_ins)
    try:
        got = in_this_process(manifest, kit, workspace, "11.1", 10.0)
        assert all(sys.modules[name] is stand_ins[name] for name in names)
    finally:
        for name, module in saved.items():
            if module is None:
                sys.modules.pop(name, None)
            else:
                sys.modules[name] = module
    assert got == essentials(there, "11.1")


def test_a_check_freezes_none_of_the_kernels_objects(
    manifest: Manifest, kit: Path, make_workspace: MakeWorkspace
) -> None:
    """A test process of its own keeps what pytest made out of later collections (``gc.freeze``);
    in the kernel's process that would keep the kernel's garbage for good."""
    workspace = make_workspace("frozen")
    frozen = gc.get_freeze_count()
    in_this_process(manifest, kit, workspace, "11.1", 10.0)
    assert gc.get_freeze_count() == frozen, "the check froze the kernel's objects"
