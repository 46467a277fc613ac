"""The reference passes every lab; a fresh workspace is all pending; solving a lab greens it."""

from __future__ import annotations

from pathlib import Path

from harness_support import Check, MakeWorkspace

from course.harness.manifest import Manifest
from course.harness.results import CheckpointResult
from course.harness.solutions import solve_lab


def statuses(result: CheckpointResult) -> dict[str, str]:
    return {lab.lab.id: lab.status for lab in result.labs}


def test_the_reference_passes_every_focused_test(manifest: Manifest, check: Check) -> None:
    result = check()
    assert result.ok and not result.problems
    assert [(lab.passed, lab.total) for lab in result.labs] == [
        (lab.tests, lab.tests) for lab in manifest.labs
    ]
    assert result.evidence == "3/3 → 3/3 → 3/3 → 2/2 → 3/3", "the chapter's evidence line"
    assert (result.passed, result.total) == (14, 14)


def test_a_fresh_workspace_is_pending_everywhere_with_each_labs_own_message(
    manifest: Manifest, check: Check, make_workspace: MakeWorkspace
) -> None:
    result = check(make_workspace("fresh"))
    assert not result.ok and result.passed == 0 and result.total == manifest.total_tests
    assert len(result.tests) == manifest.total_tests
    for test in result.tests:
        assert test.status == "pending", f"{test.name}: {test.status} {test.message}"
        title = manifest.lab(str(test.lab)).title
        assert test.message.startswith(f"Lab {test.lab} {title} not implemented yet"), (
            f"{test.name} should stop at its own lab's stub, not at {test.message!r}"
        )
    first_open = result.first_open_lab()
    assert first_open is not None and first_open.lab == manifest.labs[0]


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
                assert test.message.startswith(f"Lab {test.lab} "), test.message
    assert check(workspace).ok
