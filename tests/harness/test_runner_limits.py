"""Learner code that hangs, exits, interrupts or floods costs only its own tests."""

from __future__ import annotations

from pathlib import Path

from harness_support import (
    HANGS,
    QUICK,
    Check,
    MakeWorkspace,
    replace_in,
    sabotage,
    solved_workspace,
)

from course.harness.manifest import Manifest
from course.harness.supervisor import Limits, after_a_hang


def test_a_hang_times_out_an_exit_errors_a_flood_passes_and_the_run_goes_on(
    manifest: Manifest, kit: Path, check: Check, make_workspace: MakeWorkspace
) -> None:
    """A CPU-bound endless loop (one that never yields the processor) is killed at the limit;
    the other hangs in this file wait, as they need only the timeout verdict."""
    workspace = solved_workspace(manifest, kit, make_workspace, "hostile")
    sabotage(workspace, "compaction", "summary_message", "while True:\n        pass")
    sabotage(workspace, "compaction", "create_compaction_entry", "import os; os._exit(3)")
    replace_in(
        workspace / "pi_course" / "summary.py",
        "def parse_summary(",
        "print('x' * 5_000_000, flush=True)\n\n\ndef parse_summary(",
    )
    result = check(workspace, limits=QUICK)
    by_lab = {lab.lab.id: lab for lab in result.labs}
    for lab_id in ("11.1", "11.2", "11.3"):
        assert by_lab[lab_id].status == "passed", by_lab[lab_id].tests
    assert [t.status for t in by_lab["11.4"].tests] == ["error", "error"]
    assert all("exited with code 3" in t.message for t in by_lab["11.4"].tests)
    first, *rest = by_lab["11.5"].tests
    assert [t.status for t in by_lab["11.5"].tests] == ["timeout"] * 3
    assert "still running after 2s" in first.message, "the first hang costs one time limit"
    assert all(t.not_run and f"{first.name}, an earlier test" in t.message for t in rest)
    assert not result.ok and result.passed == 9


def test_sys_exit_and_keyboard_interrupt_cost_only_their_tests(
    manifest: Manifest, kit: Path, check: Check, make_workspace: MakeWorkspace
) -> None:
    workspace = solved_workspace(manifest, kit, make_workspace, "quitter")
    sabotage(workspace, "context", "select_groups", "raise SystemExit(4)")
    sabotage(workspace, "compaction", "create_compaction_entry", "raise KeyboardInterrupt")
    result = check(workspace, labs=["11.3", "11.4"], limits=QUICK)
    statuses = {t.name: (t.status, t.message) for t in result.tests}
    assert len(statuses) == 5
    for name, (status, message) in statuses.items():
        assert status == "error", name
        expected = "sys.exit(4)" if "11_3" in name else "KeyboardInterrupt"
        assert expected in message, (name, message)


def test_code_that_hangs_on_import_costs_one_time_limit_not_one_per_test(
    manifest: Manifest, check: Check, make_workspace: MakeWorkspace
) -> None:
    workspace = make_workspace("stuck")
    with (workspace / "pi_course" / "context.py").open("a", encoding="utf-8") as module:
        module.write(f"\n{HANGS}\n")
    result = check(workspace, limits=QUICK)
    assert [t.status for t in result.tests] == ["timeout"] * sum(lab.tests for lab in manifest.labs)
    first, *rest = result.tests
    assert "still running after 2s" in first.message
    assert all(t.message.startswith(f"not run: setting up {first.name}") for t in rest)


def test_after_one_hang_later_hangs_cost_a_tenth_of_the_limit(
    manifest: Manifest, kit: Path, own_run: Check, make_workspace: MakeWorkspace
) -> None:
    """An endless loop in Lab 11.2's code hangs every later lab of the learner's own run: one
    limit, then short ones (each of those labs then passes on its own: ``isolated.py``)."""
    workspace = solved_workspace(manifest, kit, make_workspace, "looping")
    sabotage(workspace, "groups", "split_interactions", HANGS)
    result = own_run(workspace, limits=Limits(test_seconds=4.0))
    firsts = {lab.lab.id: lab.tests[0] for lab in result.labs}
    assert firsts["11.1"].status == "passed"
    assert "still running after 4s" in firsts["11.2"].message
    for lab in ("11.3", "11.4", "11.5"):
        assert firsts[lab].status == "timeout"
        assert "still running after 1s" in firsts[lab].message, firsts[lab].message


def test_the_shorter_limit_is_a_tenth_and_at_least_a_second() -> None:
    assert after_a_hang(Limits(test_seconds=10.0)).test_seconds == 1.0
    assert after_a_hang(Limits(test_seconds=30.0)).test_seconds == 3.0
    assert after_a_hang(Limits(test_seconds=0.5)).test_seconds == 0.5
