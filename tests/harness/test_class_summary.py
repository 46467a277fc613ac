"""The class summary: every failing case kept per lab, counted per lab, rule and case."""

from __future__ import annotations

import json
import re
from dataclasses import replace
from typing import Any

from course.grading.records.classsummary import class_summary, rule_of, summary_html
from course.grading.records.gradebook import Grade, gradebook_json, graded_row, ungraded_row
from course.grading.verdict import probes as probing
from course.harness.manifest import Manifest
from course.harness.results import CheckpointResult, LabResult, ProbeSummary, TestOutcome
from course.sandboxed.status import Status

BUILD = "context.build_context"


def _case(number: int, label: str, **label_args: Any) -> dict[str, Any]:
    return {
        "id": f"11.3#{number:03d}",
        "lab": "11.3",
        "function": BUILD,
        "label": label,
        "label_args": label_args,
        "args": {"n": number},
    }


CASES = (
    _case(1, "{count} interactions", count=2),
    _case(2, "{count} interactions", count=5),
    _case(3, "a repeated id"),
    _case(4, "a repeated id"),
    _case(5, "an empty path"),
)
PROBES = probing.ProbeSet(
    seed=7,
    module="course/curricula/ch11/probes.py",
    cases=CASES,
    expected={str(case["id"]): {"value": 1} for case in CASES},
    inputs={str(case["id"]): (f"path: {case['args']['n']} entries",) for case in CASES},
    chapter="11",
    home_seed=7,
)


def _result(manifest: Manifest, wrong: set[str]) -> CheckpointResult:
    """Every required lab's tests passed; Lab 11.3's cases answered, those in ``wrong`` wrongly."""
    answers = {str(c["id"]): {"value": 2 if c["id"] in wrong else 1} for c in CASES}
    summaries = probing.compare(PROBES, answers)
    labs = tuple(
        LabResult(
            lab,
            tuple(
                TestOutcome(f"t::{lab.id}-{n}", f"test_{n}", lab.id, Status.PASSED)
                for n in range(lab.tests)
            ),
            lab.tests,
            summaries.get(lab.id, ProbeSummary(1, 1, Status.PASSED)),
        )
        for lab in manifest.required_labs
    )
    return CheckpointResult(manifest.chapter, "practice", labs)


def test_every_failing_case_is_kept_though_a_verdict_names_three() -> None:
    answers = {str(c["id"]): {"value": 2} for c in CASES}
    [summary] = probing.compare(PROBES, answers).values()
    assert len(summary.failures) == probing.FAILURES_SHOWN == 3
    assert summary.failing == tuple(str(case["id"]) for case in CASES)
    assert summary.to_json()["failing"] == list(summary.failing)
    assert ProbeSummary.from_json(summary.to_json(), "probes") == summary


def test_a_gradebook_row_records_every_failing_case_of_a_lab(manifest: Manifest) -> None:
    wrong = {"11.3#001", "11.3#002", "11.3#004", "11.3#005"}
    row = graded_row("ada", "ada", _result(manifest, wrong), ())
    [lab] = [lab for lab in row.to_json()["labs"] if lab["id"] == "11.3"]
    assert lab["probes"]["failing"] == sorted(wrong)
    assert len(lab["probes"]["failures"]) == 3


def test_the_summary_counts_learners_per_lab_rule_and_case_most_failed_first(
    manifest: Manifest,
) -> None:
    rows = [
        graded_row("ada", "ada", _result(manifest, {"11.3#001", "11.3#002", "11.3#003"}), ()),
        graded_row("ben", "ben", _result(manifest, {"11.3#003"}), ()),
        graded_row("cy", "cy", _result(manifest, {"11.3#003", "11.3#005"}), ()),
        graded_row("dee", "dee", _result(manifest, set()), ()),
        ungraded_row("eve", "eve", manifest.required_labs, Status.SKIPPED, "empty submission"),
    ]
    summary = class_summary(manifest.required_labs, rows, PROBES)
    assert summary.learners == 4  # the skipped row counts nowhere
    by_lab = {lab.lab: (lab.passed, lab.graded) for lab in summary.labs}
    assert by_lab["11.3"] == (1, 4) and by_lab["11.1"] == (4, 4)
    cases = [(case.key, case.learners, case.example) for case in summary.cases]
    assert cases == [
        ("11.3#003", 3, "ada"),
        ("11.3#001", 1, "ada"),
        ("11.3#002", 1, "ada"),
        ("11.3#005", 1, "cy"),
    ]
    top = summary.cases[0]
    assert top.inputs == ("path: 3 entries",) and top.rule == "build_context: a repeated id"
    assert top.replay == "checkpoint 11 --replay 11.3#003"
    rules = [(rule.key, rule.learners) for rule in summary.rules]
    # ada failed two cases of one rule: one learner, counted once
    assert rules == [
        ("build_context: a repeated id", 3),
        ("build_context: an empty path", 1),
        ("build_context: … interactions", 1),
    ]
    data = json.loads(gradebook_json("11", rows, {"summary": summary.to_json()}))["summary"]
    assert data["cases"][0] | {"input": []} == {
        "case": "11.3#003",
        "lab": "11.3",
        "learners": 3,
        "example": "ada",
        "rule": "build_context: a repeated id",
        "input": [],
        "replay": "checkpoint 11 --replay 11.3#003",
    }
    assert data["labs"][2] == {
        "lab": "11.3",
        "passed": 1,
        "failed": 3,
        "not_started": 0,
        "graded": 4,
    }


def test_the_page_is_self_contained_and_escapes_learner_names(manifest: Manifest) -> None:
    rows = [graded_row("<b>ada</b>", "ada", _result(manifest, {"11.3#003"}), ())]
    page = summary_html("11", class_summary(manifest.required_labs, rows, PROBES))
    assert "<b>ada</b>" not in page and "&lt;b&gt;ada&lt;/b&gt;" in page
    assert not re.search(r"(src|href)=|<script|@import|url\(", page)
    assert page.count('<svg id="pass-rates"') == page.count('<svg id="most-failed"') == 1


def test_the_page_speaks_the_instructors_edition(manifest: Manifest, zh: None) -> None:
    rows = [graded_row("ada", "ada", _result(manifest, {"11.3#003"}), ())]
    page = summary_html("11", class_summary(manifest.required_labs, rows, PROBES))
    assert '<html lang="zh">' in page and "第 11 章：全班概况" in page
    assert "各 Lab 通过率" in page and "Pass rate" not in page


def test_the_assignments_own_cases_count_in_their_rules_and_are_never_listed(
    manifest: Manifest,
) -> None:
    audit = replace(PROBES, seed=99)
    row = graded_row("ada", "ada", _result(manifest, {"11.3#001"}), ())
    labs = tuple(
        replace(
            lab, probes={**lab.probes, "failing": ["11.3#001", "11.3#003@audit", "11.3#003@99"]}
        )
        if lab.id == "11.3" and lab.probes
        else lab
        for lab in row.labs
    )
    summary = class_summary(manifest.required_labs, [replace(row, labs=labs)], PROBES, audit)
    assert [case.key for case in summary.cases] == ["11.3#001"]
    assert {rule.key for rule in summary.rules} == {
        "build_context: … interactions",
        "build_context: a repeated id",
    }
    page = summary_html("11", summary)
    assert "@99" not in page and "@audit" not in page and "path: 3 entries" not in page


def test_every_rule_is_filled_in_in_the_instructors_edition(
    manifest: Manifest, probe_set: probing.ProbeSet | None, zh: None
) -> None:
    """Before: rules read ``{count} interactions``, ``{key}={value}``, 188 raw placeholders in
    the Chinese page, whose rule templates stayed English, as did its input column."""
    assert probe_set is not None
    rules = {rule_of(case) for case in probe_set.cases}
    assert not [rule for rule in rules if "{" in rule or "}" in rule], rules
    assert "build_context：… 个 interaction" in rules, sorted(rules)[:10]
    failing = sorted(str(case["id"]) for case in probe_set.cases if case["lab"] == "11.3")
    labs = tuple(
        replace(lab, status=Status.FAILED, probes={**(lab.probes or {}), "failing": failing})
        if lab.id == "11.3"
        else lab
        for lab in graded_row("ada", "ada", _result(manifest, set()), ()).labs
    )
    row = replace(graded_row("ada", "ada", _result(manifest, set()), ()), labs=labs)
    page = summary_html("11", class_summary(manifest.required_labs, [row], probe_set))
    body = page.split("<body>")[1]
    assert not re.findall(r"\{\w+\}", body), "no placeholder left"
    assert "costs: the test estimator" not in page, "the input column in the edition too"


def _not_started(manifest: Manifest, row: Grade, lab_id: str) -> Grade:
    labs = tuple(
        replace(lab, status=Status.PENDING, score=0) if lab.id == lab_id else lab
        for lab in row.labs
    )
    return replace(row, labs=labs)


def test_labs_not_started_are_counted_apart_and_fail_no_case(manifest: Manifest) -> None:
    """Before: a lab nobody started failed every one of its cases, so the 'most failed' ranked
    who had not started, not what was misunderstood."""
    wrong = graded_row("ada", "ada", _result(manifest, {"11.3#003"}), ())
    idle = _not_started(
        manifest, graded_row("ben", "ben", _result(manifest, {"11.3#001", "11.3#002"}), ()), "11.3"
    )
    summary = class_summary(manifest.required_labs, [wrong, idle], PROBES)
    [lab] = [lab for lab in summary.labs if lab.lab == "11.3"]
    assert (lab.passed, lab.failed, lab.not_started, lab.graded) == (0, 1, 1, 2)
    assert [(case.key, case.learners) for case in summary.cases] == [("11.3#003", 1)]
    page = summary_html("11", summary)
    assert "<th>not started</th>" in page


def test_a_lab_credit_passed_through_the_labs_it_builds_on_fails_no_case(
    manifest: Manifest,
) -> None:
    """Before: a learner who wrote Lab 11.3 alone (11.1 and 11.2 still the starter's) was
    ranked among those who failed its rules: its cases failed in the stubs it calls."""
    wrong = graded_row("ada", "ada", _result(manifest, {"11.3#003"}), ())
    row = graded_row("fay", "fay", _result(manifest, {"11.3#001", "11.3#002"}), ())
    credited = tuple(
        replace(lab, credit={"through": ["11.2"], "unwritten": True, "charged": []})
        if lab.id == "11.3"
        else lab
        for lab in row.labs
    )
    summary = class_summary(manifest.required_labs, [wrong, replace(row, labs=credited)], PROBES)
    assert [(case.key, case.learners) for case in summary.cases] == [("11.3#003", 1)]
    assert [(rule.key, rule.learners) for rule in summary.rules] == [
        ("build_context: a repeated id", 1)
    ]


def test_the_page_is_short_its_plot_named_by_rule_and_a_version_has_no_names(
    manifest: Manifest,
) -> None:
    rows = [
        graded_row("ada", "ada", _result(manifest, {"11.3#001", "11.3#003"}), ()),
        graded_row("ben", "ben", _result(manifest, {"11.3#003"}), ()),
    ]
    summary = class_summary(manifest.required_labs, rows, PROBES)
    page = summary_html("11", summary)
    plot = page.split('<svg id="most-failed"', 1)[1].split("</svg>", 1)[0]
    keys = re.findall(r'data-key="([^"]*)"', plot)
    assert keys == ["build_context: a repeated id", "build_context: … interactions"], keys
    folded = page.split("<details>")[1:]
    assert len(folded) == 2 and 'id="rules"' in folded[0] and 'id="cases"' in folded[1]
    anonymous = summary_html("11", summary, names=False)
    assert "ada" not in anonymous and "ben" not in anonymous
    assert "ada" in page and "(without names, to project in class)" in anonymous
    assert "11.3#003" in anonymous and "build_context: a repeated id" in anonymous


def test_a_rule_two_labs_share_counts_each_learner_once_in_each_lab(manifest: Manifest) -> None:
    """Before: a rule that two labs' cases share (``build_context: … interactions``, drawn for
    Lab 11.3 and Lab 11.5) counted a learner failing it in both labs twice, one row on the
    lab last seen: ``2/1`` in a class of one, and the plot's bar past its track."""
    resumed = {**_case(9, "{count} interactions", count=4), "id": "11.5#009", "lab": "11.5"}
    probes = replace(
        PROBES,
        cases=(*CASES, resumed),
        expected={**PROBES.expected, "11.5#009": {"value": 1}},
        inputs={**PROBES.inputs, "11.5#009": ("path: 9 entries",)},
    )
    row = graded_row("ada", "ada", _result(manifest, {"11.3#001"}), ())
    labs = tuple(
        replace(lab, status=Status.FAILED, probes={**(lab.probes or {}), "failing": ["11.5#009"]})
        if lab.id == "11.5"
        else lab
        for lab in row.labs
    )
    summary = class_summary(manifest.required_labs, [replace(row, labs=labs)], probes)
    rules = [(rule.key, rule.lab, rule.learners) for rule in summary.rules]
    assert rules == [
        ("build_context: … interactions", "11.3", 1),
        ("build_context: … interactions", "11.5", 1),
    ]
    page = summary_html("11", summary)
    assert not re.search(r'data-value="([2-9]|\d\d)"', page), "no bar counts ada twice"
