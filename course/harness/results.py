"""Outcomes of a checkpoint run: per test, per lab and in total, and their JSON form."""

from __future__ import annotations

from collections.abc import Sequence
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


@dataclass(frozen=True)
class LabResult:
    """One lab's tests, counted against the number the curriculum promises."""

    lab: Lab
    tests: tuple[TestOutcome, ...]

    @property
    def passed(self) -> int:
        return sum(test.status == "passed" for test in self.tests)

    @property
    def total(self) -> int:
        return self.lab.tests

    @property
    def status(self) -> Status:
        """passed only if every promised test ran and passed; else the worst test status."""
        statuses = {test.status for test in self.tests}
        if statuses == {"passed"} and len(self.tests) == self.total:
            return "passed"
        worst: tuple[Status, ...] = ("error", "timeout", "failed", "pending")
        return next((status for status in worst if status in statuses), "error")

    def to_json(self) -> dict[str, Any]:
        return {
            "id": self.lab.id,
            "title": self.lab.title,
            "passed": self.passed,
            "total": self.total,
            "status": self.status,
            "optional": self.lab.optional,
        }


@dataclass(frozen=True)
class CheckpointResult:
    """A whole checkpoint run."""

    chapter: str
    target: str
    labs: tuple[LabResult, ...]
    problems: tuple[str, ...] = field(default=())
    """Findings that fail the run besides test outcomes (modified focused tests, say)."""

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
        }


def summarize(
    manifest: Manifest,
    labs: Sequence[Lab],
    outcomes: Sequence[TestOutcome],
    *,
    target: str,
    problems: Sequence[str] = (),
) -> CheckpointResult:
    """Group outcomes by lab; a lab with fewer or more tests than promised gets an error."""
    results = []
    for lab in labs:
        mine = [test for test in outcomes if test.lab == lab.id]
        if len(mine) != lab.tests:
            found = "no tests selected" if not mine else f"found {len(mine)}"
            mine.append(
                TestOutcome(
                    nodeid=f"{lab.test_file}::<Lab {lab.id}>",
                    name=f"<Lab {lab.id} test count>",
                    lab=lab.id,
                    status="error",
                    message=(
                        f"Lab {lab.id} promises {lab.tests} focused tests in "
                        f"{lab.test_file}; {found}"
                    ),
                )
            )
        results.append(LabResult(lab, tuple(mine)))
    known = {lab.id for lab in manifest.labs}
    strays = [test.name for test in outcomes if test.lab not in known]
    extra = [f"tests outside every lab of chapter {manifest.chapter}: {', '.join(strays)}"]
    return CheckpointResult(
        chapter=manifest.chapter,
        target=target,
        labs=tuple(results),
        problems=tuple(problems) + (tuple(extra) if strays else ()),
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
