"""Promises a lab's contract makes that its focused tests leave to the probe cases (issue 55).

One workspace holds three honest-looking mistakes, each in a lab of its own, each passing every
focused test: ``group_interactions`` copies with the given ``copy_entry`` where its contract
promises a checked copy; ``create_compaction_entry`` keeps a ``CompactionSummary`` it is handed
without Lab 11.1's parser, so a record whose ``completed`` is ``5`` is created, which no store
appends and no later ``build_context`` renders; ``budget_report`` refuses a bad ``available``
under another name. Graded as ``checkpoint`` grades it, each costs its own lab and only that
(Lab 11.4, not Lab 11.5, for the record that breaks the session), and each failure says what
differs, as every probe failure does.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from harness_support import (
    DEFAULT_LIMITS,
    MakeWorkspace,
    failure_ids,
    replace_in,
    solved_workspace,
)

from course.grading.verdict import probes
from course.grading.verdict.engine import GradingOptions, evaluate
from course.harness.manifest import Manifest
from course.harness.results import CheckpointResult

UNCHECKED_COPY = (
    "groups.py",
    "InteractionGroup([parse_message_entry(entry) for entry in group])",
    "InteractionGroup([copy_entry(entry) for entry in group])",
)
SUMMARY_OBJECT_KEPT = (
    "compaction.py",
    "    if isinstance(summary, CompactionSummary):\n        summary = summary_to_json(summary)\n",
    "    if isinstance(summary, CompactionSummary):  # taken as it is: Lab 11.1 made it\n"
    "        return CompactionEntry(\n"
    "            id, path[-1].id, timestamp, summary, first_kept_entry_id, tokens_before\n"
    "        )\n",
)
AVAILABLE_MISNAMED = (
    "context.py",
    'available = check_amount(available, "available")',
    'available = check_amount(available, "the budget")',
)


@pytest.fixture(scope="module")
def graded(
    manifest: Manifest,
    kit: Path,
    make_workspace: MakeWorkspace,
    probe_set: probes.ProbeSet | None,
) -> CheckpointResult:
    """The workspace with the three mistakes, graded as ``checkpoint --practice`` grades it."""
    workspace = solved_workspace(manifest, kit, make_workspace, "promises")
    groups = workspace / "pi_course" / "groups.py"
    replace_in(groups, "    parse_message_entry,\n", "    copy_entry,\n    parse_message_entry,\n")
    for module, old, new in (UNCHECKED_COPY, SUMMARY_OBJECT_KEPT, AVAILABLE_MISNAMED):
        replace_in(workspace / "pi_course" / module, old, new)
    options = GradingOptions(probes=probe_set)
    return evaluate(manifest, kit, workspace.resolve(), (), DEFAULT_LIMITS, options)


def test_each_promise_broken_costs_its_own_lab_and_only_it(graded: CheckpointResult) -> None:
    statuses = {lab.lab.id: str(lab.status) for lab in graded.labs}
    assert statuses == {
        "11.1": "passed",
        "11.2": "failed",
        "11.3": "passed",
        "11.4": "failed",
        "11.5": "passed",
        "11.opt": "failed",
    }
    assert {t.status for t in graded.tests} == {"passed"}, "the focused tests pass: cases decide"


def failures(graded: CheckpointResult, lab: str) -> str:
    found = next(result for result in graded.labs if result.lab.id == lab)
    assert found.probes is not None
    assert failure_ids(found.probes), f"Lab {lab}: no case named"
    return "\n".join(found.probes.failures)


def test_an_unchecked_copy_fails_the_case_of_an_entry_never_parsed(
    graded: CheckpointResult,
) -> None:
    said = failures(graded, "11.2")
    assert "group_interactions: the chapter's path with 'calls' never parsed" in said, said
    assert "expected ValueError, got a result" in said, said
    assert "replay: " in said


def test_a_record_no_store_appends_fails_the_lab_that_made_it(graded: CheckpointResult) -> None:
    said = failures(graded, "11.4")
    assert "create_compaction_entry: a CompactionSummary object" in said, said
    broken = "whose completed is 5 (11.4#" in said and "expected ValueError, got a result" in said
    assert broken or "shares_lists: expected false, got true" in said, said


def test_a_refusal_under_another_name_fails_naming_what_it_should_name(
    graded: CheckpointResult,
) -> None:
    said = failures(graded, "11.opt")
    assert "the budget: must be a non-negative finite number" in said, said
    assert "(a refusal that should name available)" in said, said
