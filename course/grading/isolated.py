"""Each lab earns its own credit: which labs need a run of their own, that run's files, and how
its statuses join the learner's own run.

The learner's own run (every lab on the learner's code) is what every door shows. A lab that
does not pass there, and whose functions are written, is graded again in an isolated run: its
functions are the learner's and every other lab's are the reference's
(``sandboxed/isolation.py``). The isolated run decides the lab's status and counts; it holds
the reference's code, so nothing it says reaches a learner but statuses: no message, output or
answer of it is shown (the messages shown are the learner's own run's).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import replace
from pathlib import Path

from ..harness.kit import read_source
from ..harness.manifest import Lab, Manifest
from ..harness.results import CheckpointResult, LabResult, ProbeSummary, TestOutcome
from ..locale import gettext as _
from ..sandboxed.isolation import SPEC_VARIABLE
from ..sandboxed.status import Status

SPEC = ".isolation.json"  # in the isolated graded copy
REFERENCE = ".reference"  # the folder of the reference's lab modules there


def labs_to_isolate(result: CheckpointResult, stubs: Sequence[str]) -> list[Lab]:
    """The labs ``result`` did not pass whose functions the learner has written (``stubs``: the
    labs still the starter's, ``forgery.stub_labs``: a run of their own shows nothing new)."""
    return [
        lab.lab for lab in result.labs if lab.status != Status.PASSED and lab.lab.id not in stubs
    ]


def isolation_files(manifest: Manifest, kit: Path) -> dict[str, bytes]:
    """The isolated copy's extra files: the reference's lab modules and the spec naming them."""
    modules = {f.module for lab in manifest.labs for f in lab.functions}
    files = {
        f"{REFERENCE}/{Path(file.path).name}": read_source(kit, file.reference)
        for file in manifest.files_with_role("learner")
        if file.reference is not None and Path(file.path).stem in modules
    }
    spec = {
        "package": manifest.package,
        "reference": REFERENCE,
        "labs": {lab.id: [f.name for f in lab.functions] for lab in manifest.labs},
    }
    files[SPEC] = json.dumps(spec, sort_keys=True).encode("utf-8")
    return files


def isolation_environment() -> dict[str, str]:
    """What an isolated run's children are told (the spec, relative to the graded copy)."""
    return {SPEC_VARIABLE: SPEC}


def _test_joined(own: TestOutcome, isolated: TestOutcome | None) -> TestOutcome:
    """A test's outcome: the isolated run's status; the words of the learner's own run."""
    if isolated is None or isolated.status == own.status:
        return own
    if isolated.status == Status.PASSED:
        return replace(
            own, status=Status.PASSED, message="", frames=(), output=(), output_more=0, shown=()
        )
    said = _(
        "passes with your other labs, fails with the reference's: this lab relies on "
        "something your other labs do differently"
    )
    if own.status != Status.PASSED:
        return replace(own, status=isolated.status)
    return replace(own, status=isolated.status, message=said, frames=(), output=(), shown=())


def _probes_joined(own: ProbeSummary | None, isolated: ProbeSummary | None) -> ProbeSummary | None:
    """A lab's probe summary: the isolated run's counts; failures named from the learner's own
    run (the isolated run's answers are never shown)."""
    if own is None or isolated is None:
        return own
    if isolated.agree:
        return isolated
    if own.agree:
        said = _(
            "{count} of {cases} cases disagree when this lab runs with the reference's other "
            "labs; with your own labs every case agrees"
        )
        failure = said.format(count=isolated.cases - isolated.agreed, cases=isolated.cases)
        return replace(isolated, failures=(failure,))
    return replace(isolated, failures=own.failures)


def joined(own: CheckpointResult, isolated: CheckpointResult) -> CheckpointResult:
    """``own`` with each lab ``isolated`` ran decided by it, and a note for each lab that fails
    only with the learner's other labs."""
    decided = {lab.lab.id: lab for lab in isolated.labs}
    labs: list[LabResult] = []
    for lab in own.labs:
        other = decided.get(lab.lab.id)
        if other is None:
            labs.append(lab)
            continue
        by_node: dict[str, list[TestOutcome]] = {}
        for test in other.tests:
            by_node.setdefault(test.nodeid, []).append(test)
        tests = tuple(_test_joined(test, _first(by_node.get(test.nodeid))) for test in lab.tests)
        labs.append(replace(lab, tests=tests, probes=_probes_joined(lab.probes, other.probes)))
    failing = [lab.lab.id for lab in labs if lab.status != Status.PASSED and not lab.lab.optional]
    owners = {name: lab.lab.id for lab in own.labs for name in lab.lab.solution}
    notes = [
        _breaks_note(before, failing, owners)
        for before, after in zip(own.labs, labs, strict=True)
        if after.status == Status.PASSED and before.status != Status.PASSED
    ]
    forged = _(
        "the run that grades each lab on its own reported tests the kit does not hold, or "
        "one test twice (its records are not shown: that run holds the reference's code)"
    )
    flags = own.flags + ((forged,) if isolated.flags else ())
    return replace(own, labs=tuple(labs), notes=own.notes + tuple(notes), flags=flags)


def _first(tests: list[TestOutcome] | None) -> TestOutcome | None:
    """The next outcome of one test id (a parametrized test reports several)."""
    return tests.pop(0) if tests else None


def _breaks_note(lab: LabResult, failing: list[str], owners: Mapping[str, str]) -> str:
    """What the learner's own run showed of a lab that passes with the reference's other labs:
    the labs whose functions were running where it failed (green ones too: here the lab fails
    only through them), else the labs that still fail."""
    culprits = {t.culprit for t in lab.tests if t.culprit and t.culprit != lab.lab.id}
    running = {owners.get(f"{f.module}.{f.function}") for t in lab.tests for f in t.frames}
    culprits = culprits or {other for other in running if other and other != lab.lab.id}
    culprits = culprits or {other for other in failing if other != lab.lab.id}
    broken = [t for t in lab.tests if t.status != Status.PASSED]
    first = broken[0].name if broken else (lab.probes.difference if lab.probes else "")
    first = first.splitlines()[0] if first else ""
    if culprits:
        said = _(
            "Lab {lab} passes with the reference's other labs and earns its points; with your "
            "own {culprits} it does not pass (first: {first})"
        )
        named = _(", ").join(f"Lab {culprit}" for culprit in sorted(culprits))
        return said.format(lab=lab.lab.id, culprits=named, first=first)
    said = _(
        "Lab {lab} passes with the reference's other labs and earns its points; with your own "
        "other labs it does not pass (first: {first})"
    )
    return said.format(lab=lab.lab.id, first=first)
