"""Outcomes of a checkpoint run: per test, per lab and in total, and their JSON form."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Literal

from .frames import Frame
from .manifest import Lab, Manifest
from .verdicts import NOT_RUN

Status = Literal["passed", "pending", "failed", "timeout", "error"]
STATUSES: tuple[Status, ...] = ("passed", "pending", "failed", "timeout", "error")


@dataclass(frozen=True)
class TestOutcome:
    """How one focused test ended."""

    __test__ = False  # not a pytest test class, despite the name

    nodeid: str
    name: str
    lab: str | None
    status: Status
    message: str = ""
    duration: float = 0.0
    frames: tuple[Frame, ...] = ()
    """The learner's frames where the test failed, hung or exited (outermost first)."""
    shown: tuple[str, ...] = ()
    """What the test recorded for the reader (``record_property`` values)."""
    culprit: str | None = None
    """The lab whose function was running where it failed or hung (see ``attribute``)."""

    @property
    def not_run(self) -> bool:
        """The test never reached its own code: something before it stopped the run."""
        return self.message.startswith(NOT_RUN)

    def to_json(self) -> dict[str, Any]:
        return {
            "lab": self.lab,
            "name": self.name,
            "status": self.status,
            "message": self.message,
            "duration": self.duration,
        }


WORST_FIRST: tuple[Status, ...] = ("error", "timeout", "failed", "pending")
"""Statuses that are not a pass, the most serious first."""


def worst(statuses: Sequence[Status] | set[Status]) -> Status:
    """The most serious status of ``statuses``: passed only if every one passed (and some did)."""
    found = set(statuses)
    if found == {"passed"}:
        return "passed"
    return next((status for status in WORST_FIRST if status in found), "error")


@dataclass(frozen=True)
class ProbeSummary:
    """How a lab's functions answered the grader's generated inputs, against the reference."""

    cases: int
    agreed: int
    status: Status
    """passed when every case agreed; else the worst way a case disagreed."""
    difference: str = ""
    """The first disagreement, described for a person."""

    @property
    def agree(self) -> bool:
        return self.status == "passed"

    def to_json(self) -> dict[str, Any]:
        return {
            "cases": self.cases,
            "agreed": self.agreed,
            "status": self.status,
            "difference": self.difference,
        }


@dataclass(frozen=True)
class LabResult:
    """One lab's tests, counted against the number the curriculum promises.

    With ``probes`` (a graded workspace) the lab's tests count only when its probes agree
    with the reference: a test report alone, which learner code could forge, earns nothing.
    """

    lab: Lab
    tests: tuple[TestOutcome, ...]
    expected: int | None = None
    """How many tests the lab must have (default: the curriculum's count; hidden tests add)."""
    probes: ProbeSummary | None = None

    @property
    def passed(self) -> int:
        if self.probes is not None and not self.probes.agree:
            return 0
        return sum(test.status == "passed" for test in self.tests)

    @property
    def total(self) -> int:
        return self.lab.tests if self.expected is None else self.expected

    @property
    def tests_status(self) -> Status:
        """What the tests alone say: passed only if every promised test ran and passed."""
        statuses = {test.status for test in self.tests}
        if statuses == {"passed"} and len(self.tests) == self.total:
            return "passed"
        return worst(statuses - {"passed"})

    @property
    def status(self) -> Status:
        """The tests' status, made worse by probes that disagree with the reference."""
        if self.probes is None:
            return self.tests_status
        return worst({self.tests_status, self.probes.status})

    def to_json(self) -> dict[str, Any]:
        data = {
            "id": self.lab.id,
            "title": self.lab.title,
            "passed": self.passed,
            "total": self.total,
            "status": self.status,
            "optional": self.lab.optional,
        }
        if self.probes is not None:
            data["probes"] = self.probes.to_json()
        return data


@dataclass(frozen=True)
class CheckpointResult:
    """A whole checkpoint run."""

    chapter: str
    target: str
    labs: tuple[LabResult, ...]
    problems: tuple[str, ...] = field(default=())
    """Findings that fail the run besides test outcomes (tests that could not run, say)."""
    notes: tuple[str, ...] = field(default=())
    """Findings reported without changing the grade (edited tests, an unsandboxed run)."""

    @property
    def required(self) -> tuple[LabResult, ...]:
        """The labs that count: every lab run that is not optional."""
        return tuple(lab for lab in self.labs if not lab.lab.optional)

    @property
    def optional(self) -> tuple[LabResult, ...]:
        """Optional labs run: reported, never counted."""
        return tuple(lab for lab in self.labs if lab.lab.optional)

    @property
    def passed(self) -> int:
        return sum(lab.passed for lab in self.required)

    @property
    def total(self) -> int:
        return sum(lab.total for lab in self.required)

    @property
    def tests(self) -> list[TestOutcome]:
        return [test for lab in self.labs for test in lab.tests]

    @property
    def ok(self) -> bool:
        labs = self.required or self.optional
        return bool(labs) and not self.problems and all(lab.status == "passed" for lab in labs)

    @property
    def evidence(self) -> str:
        """The chapter's evidence line, e.g. ``3/3 → 3/3 → 3/3 → 2/2 → 3/3``."""
        return " → ".join(f"{lab.passed}/{lab.total}" for lab in self.required)

    def first_open_lab(self) -> LabResult | None:
        """The first lab that is not green: a required one first, else an optional one."""
        return next((lab for lab in self.required if lab.status != "passed"), None)

    def to_json(self) -> dict[str, Any]:
        return {
            "chapter": self.chapter,
            "target": self.target,
            "labs": [lab.to_json() for lab in self.labs],
            "evidence": self.evidence,
            "tests": [test.to_json() for test in self.tests],
            "passed": self.passed,
            "total": self.total,
            "problems": list(self.problems),
            "notes": list(self.notes),
        }


def summarize(
    manifest: Manifest,
    labs: Sequence[Lab],
    outcomes: Sequence[TestOutcome],
    *,
    target: str,
    problems: Sequence[str] = (),
    notes: Sequence[str] = (),
    expected: Mapping[str, int] | None = None,
    probes: Mapping[str, ProbeSummary] | None = None,
) -> CheckpointResult:
    """Group outcomes by lab; a lab with fewer or more tests than promised gets an error.

    ``expected`` overrides a lab's promised count (instructor tests add to it); ``probes``
    attaches each lab's probe summary.
    """
    expected = expected or {}
    probes = probes or {}
    results = []
    for lab in labs:
        mine = [test for test in outcomes if test.lab == lab.id]
        count = expected.get(lab.id, lab.tests)
        if len(mine) != count:
            found = "no tests selected" if not mine else f"found {len(mine)}"
            promised = f"{lab.tests} focused tests in {lab.test_file}"
            if count != lab.tests:
                promised += f" and {count - lab.tests} instructor tests"
            mine.append(
                TestOutcome(
                    nodeid=f"{lab.test_file}::<Lab {lab.id}>",
                    name=f"<Lab {lab.id} test count>",
                    lab=lab.id,
                    status="error",
                    message=f"Lab {lab.id} promises {promised}; {found}",
                )
            )
        results.append(
            LabResult(
                lab,
                tuple(mine),
                expected=count if lab.id in expected else None,
                probes=probes.get(lab.id),
            )
        )
    known = {lab.id for lab in manifest.labs}
    strays = [test.name for test in outcomes if test.lab not in known]
    extra = [f"tests outside every lab of chapter {manifest.chapter}: {', '.join(strays)}"]
    return CheckpointResult(
        chapter=manifest.chapter,
        target=target,
        labs=tuple(results),
        problems=tuple(problems) + (tuple(extra) if strays else ()),
        notes=tuple(notes),
    )


def attribute(manifest: Manifest, outcome: TestOutcome) -> TestOutcome:
    """``outcome`` with its culprit: the lab of the innermost lab function among its frames."""
    for frame in reversed(outcome.frames):
        lab = manifest.lab_of_function(frame.module, frame.function)
        if lab is not None:
            return replace(outcome, culprit=lab.id)
    return outcome


def lab_to_work_on(manifest: Manifest, result: CheckpointResult) -> Lab | None:
    """The first lab that is not green, or the lab whose code made it fail or hang."""
    first = result.first_open_lab()
    if first is None:
        return None
    for test in first.tests:
        broken = test.status in ("failed", "timeout", "error")
        if broken and test.culprit is not None and test.culprit != first.lab.id:
            return manifest.lab(test.culprit)
    return first.lab
