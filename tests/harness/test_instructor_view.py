"""What learners see of a run that held instructor tests, and the grade on one scale beside it.

Learners see the chapter's own counts (``3/3 → 3/3 → 3/3 → 2/2 → 3/3``) and a lab's points,
earned only when its instructor tests pass too; the instructor's JSON keeps every test. On
Gradescope, what learners see at once of such a run is the kit's verdict text, never what the
learner's process wrote (which can carry the instructor test file, re-encoded).
"""

from __future__ import annotations

import base64
import json
from dataclasses import replace
from pathlib import PurePosixPath
from typing import Any

from course.grading.platforms.gradescope import results
from course.grading.records.gradebook import Grade, graded_row
from course.grading.verdict.engine import for_learners
from course.grading.verdict.hidden import HiddenTests
from course.harness.catalog import Catalog, CatalogTest
from course.harness.manifest import Manifest
from course.harness.report import render_lab, render_summary
from course.harness.results import CheckpointResult, LabResult, ProbeSummary, TestOutcome
from course.sandboxed.frames import Frame
from course.sandboxed.status import Status

SOURCE = (
    b"import pytest\n\n\n"
    b'@pytest.mark.lab("11.3")\n'
    b"def test_extra_exact_fit(impl):\n"
    b'    assert impl.context.build_context([], max_tokens=1) is not None, "SECRET-RULE"\n'
)
STOLEN = base64.b64encode(SOURCE).decode()
"""The instructor test file as learner code that read it would print it."""


def _hidden(manifest: Manifest) -> tuple[HiddenTests, str]:
    """One instructor test of Lab 11.3, and its node id."""
    file = (PurePosixPath(manifest.focused_tests).parent / "test_extra.py").as_posix()
    catalog = Catalog((CatalogTest(file, "test_extra_exact_fit", "11.3"),))
    return HiddenTests({"test_extra.py": SOURCE}, catalog), f"{file}::test_extra_exact_fit"


def _result(
    manifest: Manifest, instructor: Status, chapter_test: TestOutcome | None = None
) -> CheckpointResult:
    """Every required lab passes its tests and 10 agreeing cases; Lab 11.3 also ran the
    instructor test (ending ``instructor``) and, if given, ``chapter_test`` for its first."""
    _, nodeid = _hidden(manifest)
    labs = []
    for lab in manifest.required_labs:
        tests = [
            TestOutcome(
                f"{manifest.focused_tests}::test_{lab.select}_{n}", f"t{n}", lab.id, Status.PASSED
            )
            for n in range(lab.tests)
        ]
        probes = ProbeSummary(10, 10, Status.PASSED)
        if lab.id == "11.3":
            if chapter_test is not None:
                tests[0] = chapter_test
                probes = ProbeSummary(
                    10,
                    9,
                    Status.FAILED,
                    (
                        f"exact fit (11.3#007): expected 'x', got {STOLEN!r}\n"
                        "  budget 22, entries u1 a1\n"
                        "  replay: checkpoint 11 --replay 11.3#007",
                    ),
                )
            message = "" if instructor == Status.PASSED else "AssertionError: SECRET-RULE"
            tests.append(TestOutcome(nodeid, "test_extra_exact_fit", "11.3", instructor, message))
        labs.append(LabResult(lab, tuple(tests), len(tests), probes))
    return CheckpointResult(manifest.chapter, "practice", tuple(labs))


def test_learners_see_the_chapters_counts_and_the_instructor_keeps_every_test(
    manifest: Manifest,
) -> None:
    hidden, nodeid = _hidden(manifest)
    result = _result(manifest, Status.PASSED)
    assert result.evidence == "3/3 → 3/3 → 4/4 → 2/2 → 3/3", "the instructor's view"
    shown = for_learners(result, manifest, hidden)
    assert shown.evidence == "3/3 → 3/3 → 3/3 → 2/2 → 3/3"
    assert (shown.score, shown.max_score) == (result.score, result.max_score) == (100, 100)
    text = render_summary(manifest, shown) + "\n".join(render_lab(lab) for lab in shown.labs)
    assert "4/4" not in text and "test_extra" not in text and "instructor" not in text, text
    assert "\ngrade          100/100" in text
    assert nodeid in [test["nodeid"] for test in result.to_json()["tests"]]


def test_a_failing_instructor_test_fails_its_lab_at_every_view(manifest: Manifest) -> None:
    hidden, _ = _hidden(manifest)
    result = _result(manifest, Status.FAILED)
    shown = for_learners(result, manifest, hidden)
    lab = shown.lab("11.3")
    assert lab is not None and (lab.passed, lab.total, lab.status) == (3, 3, Status.FAILED)
    assert (shown.score, result.score) == (80, 80)
    said = render_lab(lab)
    assert "did not all pass" in said and "SECRET-RULE" not in said, said
    row = graded_row("ada", "ada", result, (), public=shown)
    graded = row.labs[2]
    assert (graded.passed, graded.total, graded.score, row.score) == (3, 4, 0, 80)
    assert graded.reason.startswith("an instructor test failed"), graded.reason


def _visible(data: dict[str, Any]) -> str:
    """Every field of ``results.json`` a learner sees when the submission is graded."""
    shown = [data["output"]]
    for test in data["tests"]:
        if test.get("visibility", "visible") == "visible":
            shown += [test["name"], test.get("output", "")]
    return "\n".join(shown)


def _gradescope_row(manifest: Manifest, hidden: HiddenTests | None) -> Grade:
    """A row whose Lab 11.3 learner code put the stolen file in a message, its printed output,
    a frame and a probe answer."""
    stolen = TestOutcome(
        f"{manifest.focused_tests}::test_lab_11_3_exact_fit[{STOLEN[:20]}]",
        f"test_{STOLEN[:30]}",
        "11.3",
        Status.FAILED,
        f"AssertionError: {STOLEN}",
        frames=(Frame("pi_course/context.py", 7, f"f_{STOLEN[:12]}", STOLEN[:40]),),
        output=(STOLEN,),
    )
    result = _result(manifest, Status.FAILED, stolen)
    result = replace(result, problems=(f"collecting failed: {STOLEN}",))
    shown = for_learners(result, manifest, hidden) if hidden is not None else result
    instructor = [
        test.nodeid for test in result.tests if hidden and hidden.holds(manifest, test.nodeid)
    ]
    row = graded_row("ada", "ada", result, (), instructor, public=shown)
    return replace(row, shown=shown)


def test_gradescope_shows_learners_only_the_kits_verdict_when_instructor_tests_ran(
    manifest: Manifest,
) -> None:
    hidden, _ = _hidden(manifest)
    data = results(manifest, _gradescope_row(manifest, hidden), "visible", instructor=True)
    seen = _visible(data)
    for start in range(0, len(STOLEN) - 16, 8):
        assert STOLEN[start : start + 16] not in seen, seen
    assert "SECRET-RULE" not in json.dumps(data), "not even in an instructor test's output"
    lab = next(test for test in data["tests"] if test.get("extra_data", {}).get("lab") == "11.3")
    assert "11.3#007" in lab["output"] and "checkpoint 11 --replay 11.3#007" in lab["output"]
    assert "test_lab_11_3_exact_fit" in lab["output"], lab["output"]
    assert (data["score"], lab["score"], lab["max_score"]) == (80, 0, 20)
    evidence = "focused tests  3/3 → 3/3 → 2/3 → 2/2 → 3/3 (13/14)"
    assert seen.startswith(f"{evidence}\ngrade          80/100"), seen
    assert "a problem stopped the run (its message is withheld" in seen, seen
    # without instructor tests nothing is withheld: the learner's own message is theirs to see
    plain = results(manifest, _gradescope_row(manifest, None), "visible")
    assert STOLEN in _visible(plain)


def test_results_json_names_both_scaffolds(manifest: Manifest) -> None:
    row = replace(_gradescope_row(manifest, None), scaffold=("0123456789ab", "ba9876543210"))
    data = results(manifest, row, "after_due_date")
    assert data["extra_data"]["scaffold"] == {"began": "0123456789ab", "kit": "ba9876543210"}
    assert "scaffold" not in results(manifest, replace(row, scaffold=None), "hidden")["extra_data"]
