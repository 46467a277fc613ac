"""The reference passes every lab; a fresh workspace is all pending; solving a lab greens it."""

from __future__ import annotations

from pathlib import Path

from harness_support import Check, MakeWorkspace
from solutions import solve_lab

from course.harness.manifest import Manifest
from course.harness.results import CheckpointResult


def statuses(result: CheckpointResult) -> dict[str, str]:
    return {lab.lab.id: lab.status for lab in result.labs}


def test_the_reference_passes_every_focused_test(manifest: Manifest, check: Check) -> None:
    result = check()
    assert result.ok and not result.problems
    assert [(lab.passed, lab.total) for lab in result.labs] == [
        (lab.tests, lab.tests) for lab in manifest.labs
    ]
    assert [lab.lab.id for lab in result.optional] == ["11.opt"], "reported, not counted"
    assert result.evidence == "3/3 → 3/3 → 3/3 → 2/2 → 3/3", "the chapter's evidence line"
    assert (result.passed, result.total) == (14, 14)


def stopping_lab(message: str) -> str:
    """``11.3`` from ``Lab 11.3 budget projection not implemented yet (…)``."""
    return message.split()[1]


def test_a_fresh_workspace_is_pending_everywhere_at_its_own_lab_or_an_earlier_one(
    manifest: Manifest, check: Check, make_workspace: MakeWorkspace
) -> None:
    result = check(make_workspace("fresh"))
    assert not result.ok and result.passed == 0 and result.total == manifest.total_tests
    assert len(result.tests) == sum(lab.tests for lab in manifest.labs)
    order = [lab.id for lab in manifest.labs]
    for test in result.tests:
        assert test.status == "pending", f"{test.name}: {test.status} {test.message}"
        lab = manifest.lab(stopping_lab(test.message))
        assert test.message.startswith(f"Lab {lab.id} {lab.title} not implemented yet")
        assert order.index(lab.id) <= order.index(str(test.lab)), (
            f"{test.name} (Lab {test.lab}) stops at a later lab's stub: {test.message!r}"
        )
    first = [t for t in result.tests if t.lab == manifest.labs[0].id]
    assert all(t.message.startswith(f"Lab {manifest.labs[0].id} ") for t in first)
    first_open = result.first_open_lab()
    assert first_open is not None and first_open.lab == manifest.labs[0]


def order_of(ids: list[str], lab_id: str) -> int:
    return ids.index(lab_id)


def test_solving_the_labs_in_order_turns_exactly_that_lab_green(
    manifest: Manifest, kit: Path, check: Check, make_workspace: MakeWorkspace
) -> None:
    workspace = make_workspace("in-order")
    ids = [lab.id for lab in manifest.labs]
    for solved, lab_id in enumerate(ids, start=1):
        solve_lab(manifest, kit, workspace, lab_id)
        result = check(workspace)
        expected = {i: "passed" if n < solved else "pending" for n, i in enumerate(ids)}
        assert statuses(result) == expected, f"after solving Lab {lab_id}"
        for test in result.tests:
            if test.status == "pending":
                assert order_of(ids, stopping_lab(test.message)) >= solved, test.message
    assert check(workspace).ok
