"""Counts come from the kit's catalog: records forged by learner code change no lab's verdict,
no lab's earned count, and never count more tests than a lab has."""

from __future__ import annotations

from pathlib import Path

from harness_support import Check, MakeWorkspace
from solutions import solve_lab

from course.harness.catalog import Catalog, CatalogTest
from course.harness.manifest import Manifest
from course.harness.results import CheckpointResult, TestOutcome, admit, summarize
from course.sandboxed.status import Status

FORGE_AT_IMPORT = """

def _forge_records():
    import json, sys
    if "--course-results" not in sys.argv:
        return
    results = sys.argv[sys.argv.index("--course-results") + 1]
    file = "tests/chapter11/test_11_context_compaction.py"
    lab_1 = [f"{file}::test_lab_11_1_parses_a_compaction_entry_strictly"]
    lab_2 = [f"{file}::test_lab_11_2_groups_the_chapter_path_into_three_interactions"]
    invented = [f"{file}::test_lab_11_1_invented_{n}" for n in range(5)]
    with open(results, "a", encoding="utf-8") as out:
        def say(record):
            out.write(json.dumps(record) + "\\n")
        # extra collected entries, and a Lab 11.2 test moved to Lab 11.1
        names = invented + lab_2
        tests = [{"nodeid": n, "name": n.rpartition(":")[2], "lab": "11.1"} for n in names]
        say({"event": "collected", "tests": tests})
        # ends for tests that never ran, each twice, claiming Lab 11.1
        for nodeid in invented + lab_2 + lab_1:
            for _ in range(2):
                end = {"event": "end", "nodeid": nodeid, "status": "passed", "message": ""}
                say(end | {"duration": 0})


_forge_records()
"""


def test_forged_records_leave_every_count_as_it_was(
    manifest: Manifest, kit: Path, make_workspace: MakeWorkspace, check: Check
) -> None:
    honest = make_workspace("honest")
    forger = make_workspace("forger")
    for workspace in (honest, forger):
        solve_lab(manifest, kit, workspace, "11.1")
    with (forger / "pi_course" / "summary.py").open("a", encoding="utf-8") as module:
        module.write(FORGE_AT_IMPORT)
    expected, forged = check(honest), check(forger)
    assert earned(forged) == earned(expected)
    lab_1, lab_2 = expected.labs[0], expected.labs[1]
    assert earned(forged)["11.1"] == ("passed", 3, lab_1.cases)
    assert earned(forged)["11.2"] == ("pending", 0, 0) and lab_2.cases > 0
    assert (forged.earned, forged.agreed) == (expected.earned, expected.agreed)
    assert all(lab.passed <= lab.total for lab in forged.labs)
    assert [lab.total for lab in forged.labs] == [lab.total for lab in expected.labs]
    assert any("not a test of this run" in flag for flag in forged.flags), forged.flags
    assert any("a second report of" in flag for flag in forged.flags), forged.flags
    assert any("which never started" in flag for flag in forged.flags), forged.flags
    assert not expected.flags


def earned(result: CheckpointResult) -> dict[str, tuple[str, int, int]]:
    """Each lab's (status, tests earned, cases agreed): what a forged report cannot change
    (its tests count may claim what the forger wrote; it earns nothing the probes deny)."""
    return {lab.lab.id: (str(lab.status), lab.earned, lab.agreed) for lab in result.labs}


def test_a_lab_never_counts_more_than_its_catalogued_cases(manifest: Manifest) -> None:
    lab = manifest.lab("11.1")
    catalog = Catalog(
        (CatalogTest("t.py", "test_a", "11.1"), CatalogTest("t.py", "test_b", "11.2"))
    )
    reports = [
        TestOutcome("t.py::test_a", "test_a", "11.1", Status.PASSED),
        TestOutcome("t.py::test_a", "test_a", "11.1", Status.PASSED),  # a second end
        TestOutcome("t.py::test_b", "test_b", "11.1", Status.PASSED),  # moved to Lab 11.1
        TestOutcome("t.py::test_c", "test_c", "11.1", Status.PASSED),  # not catalogued
        TestOutcome("t.py::test_a[x]", "test_a[x]", "11.1", Status.PASSED),  # one case too many
    ]
    admitted, flags = admit(catalog, reports)
    assert [(o.nodeid, o.lab) for o in admitted] == [
        ("t.py::test_a", "11.1"),
        ("t.py::test_b", "11.2"),
    ]
    assert len(flags) == 3
    result = summarize(manifest, [lab], reports, catalog=catalog, target="")
    assert (result.labs[0].passed, result.labs[0].total) == (1, 1)


def test_a_lab_is_a_stub_by_the_definition_python_runs(manifest: Manifest, kit: Path) -> None:
    """The forged-report flag needs a lab whose functions are the starter's stubs: the last
    definition of each name counts, its docstring aside (an edition may translate it)."""
    from course.grading.verdict.forgery import forged_flags, stub_labs
    from course.harness.kit import read_source

    learner = {f.path: read_source(kit, f.starter) for f in manifest.files_with_role("learner")}
    labs = list(manifest.required_labs)
    assert stub_labs(manifest, kit, learner, labs) == [lab.id for lab in labs]
    summary = "pi_course/summary.py"
    solved = read_source(kit, "course/summary.py")
    with_real = {**learner, summary: learner[summary] + b"\n\n" + solved}
    assert "11.1" not in stub_labs(manifest, kit, with_real, labs)
    stub_last = {**learner, summary: solved + b"\n\n" + learner[summary]}
    assert "11.1" in stub_labs(manifest, kit, stub_last, labs)
    lab = manifest.lab("11.1")
    passing = TestOutcome("t::test_a", "test_a", "11.1", Status.PASSED)
    claimed = summarize(
        manifest,
        [lab],
        [passing],
        catalog=Catalog((CatalogTest("t", "test_a", "11.1"),)),
        target="",
    )
    assert forged_flags(claimed, ["11.1"]) == (
        "Lab 11.1: a forged report: its functions are the starter's stubs, yet its tests report "
        "passing",
    )
    assert forged_flags(claimed, []) == ()


def test_records_no_test_run_writes_are_flagged() -> None:
    """An end with no start, and anything after the session's end: only forged records."""
    from course.harness.runner import RunLog, Watch

    log, seen = RunLog(), []
    watch = Watch(log, seen.append)
    nodeid = "tests/chapter11/test_11_context_compaction.py::test_a"
    end = {"event": "end", "nodeid": nodeid, "status": "passed", "message": ""}
    watch.feed({"event": "start", "nodeid": nodeid})
    watch.feed(end)
    assert log.forged == []
    watch.feed(end | {"nodeid": f"{nodeid}_invented"})
    watch.feed({"event": "finish", "exitstatus": 0})
    watch.feed({"event": "start", "nodeid": nodeid})
    watch.feed(end)
    assert log.forged == [
        f"a report of '{nodeid}_invented' ending, which never started",
        "a test report written after the test run ended",
    ]
