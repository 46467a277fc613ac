"""The verdict of a checkpoint run, per test, per lab and in total, and its JSON form.

Which tests a lab has comes from the kit's own files (``catalog.py``), never from the test
process, and a lab passes only if its tests and its probe cases do: a forged report earns nothing.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from ..locale import gettext as _
from ..sandboxed.frames import Frame
from ..sandboxed.status import Status, worst
from ..sandboxed.tables import TableReader
from ..sandboxed.verdicts import NOT_RUN
from .catalog import Catalog, CatalogTest
from .manifest import Lab, Manifest

LAB_DERIVED = (
    "title",
    "passed",
    "agreed",
    "cases",
    "earned",
    "points",
    "score",
    "status",
    "optional",
)
"""A lab's JSON keys that follow from the rest (read back, and checked by writing it again)."""


class ReportError(ValueError):
    """A JSON report cannot be read; the message names the field."""


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
    frames: tuple[Frame, ...] = ()  # the learner's where it failed, hung or exited, outermost first
    shown: tuple[str, ...] = ()  # what the test recorded for the reader (``record_property``)
    culprit: str | None = None  # the lab whose function was running there (``attribute``)
    culprit_frame: Frame | None = None  # that function's frame: learner code, never given code
    output: tuple[str, ...] = ()
    """The first lines a test that did not pass printed, made safe by ``records.RecordReader``."""
    output_more: int = 0  # further lines it printed, not kept

    @property
    def not_run(self) -> bool:
        """The test never reached its own code: something before it stopped the run."""
        return self.message.startswith(NOT_RUN)

    def to_json(self) -> dict[str, Any]:
        return {
            "lab": self.lab,
            "name": self.name,
            "nodeid": self.nodeid,
            "status": str(self.status),
            "message": self.message,
            "duration": self.duration,
        }

    @classmethod
    def from_json(cls, data: object, where: str) -> TestOutcome:
        f = TableReader(data, where, "report", ReportError)
        outcome = cls(
            nodeid=f.text("nodeid"),
            name=f.text("name"),
            lab=f.optional_text("lab"),
            status=f.status("status"),
            message=f.text("message", allow_empty=True),
            duration=f.number("duration"),
        )
        f.finish()
        return outcome


@dataclass(frozen=True)
class ProbeSummary:
    """How a lab's functions answered the grader's generated inputs, against the reference."""

    cases: int
    agreed: int
    status: Status  # passed when every case agreed; else the worst way a case disagreed
    failures: tuple[str, ...] = ()  # the first disagreeing cases, each named
    failing: tuple[str, ...] = ()  # every disagreeing case's id, in draw order (see FAILING_KEPT)

    @property
    def agree(self) -> bool:
        return self.status == Status.PASSED

    @property
    def difference(self) -> str:
        """The first disagreement ('' when there is none)."""
        return self.failures[0] if self.failures else ""

    def to_json(self) -> dict[str, Any]:
        return {
            "cases": self.cases,
            "agreed": self.agreed,
            "status": str(self.status),
            "failures": list(self.failures),
            "failing": list(self.failing),
        }

    @classmethod
    def from_json(cls, data: object, where: str) -> ProbeSummary:
        f = TableReader(data, where, "report", ReportError)
        summary = cls(
            f.count("cases"),
            f.count("agreed"),
            f.status("status"),
            f.texts("failures", allow_empty=True),
            f.texts("failing", allow_empty=True),
        )
        f.finish()
        return summary


@dataclass(frozen=True)
class Charge:
    """Another lab's failure charged to this lab's code: ``lab``'s ``test`` (a test's node id,
    or a probe case's id) fails with this lab's code and passes with the reference's."""

    lab: str
    test: str

    @property
    def name(self) -> str:
        """The test's name as a row shows it (a case's id as it is)."""
        return self.test.rpartition("::")[2]

    def to_json(self) -> dict[str, Any]:
        return {"lab": self.lab, "test": self.test}

    @classmethod
    def from_json(cls, data: object, where: str) -> Charge:
        f = TableReader(data, where, "report", ReportError)
        charge = cls(f.text("lab"), f.text("test"))
        f.finish()
        return charge


@dataclass(frozen=True)
class Credit:
    """What per-lab credit decided of a lab beyond what its tests and cases showed in the
    learner's own run (``grading/verdict/isolated.py``), which stay the lab's counts at every door.

    ``through``: the lab failed with the learner's other labs and passed with the reference's
    code for these labs alone in place of the learner's: it keeps its points, and they are
    charged with its failing test (``unwritten``: they are labs not written yet, the starter's
    stubs, which lose nothing more). ``charged``: tests of other labs that fail with this lab's
    code and pass with the reference's in its place: the lab loses its points, whatever its
    own tests and cases showed."""

    through: tuple[str, ...] = ()
    charged: tuple[Charge, ...] = ()
    unwritten: bool = False

    def to_json(self) -> dict[str, Any]:
        return {
            "through": list(self.through),
            "unwritten": self.unwritten,
            "charged": [charge.to_json() for charge in self.charged],
        }

    @classmethod
    def from_json(cls, data: object, where: str) -> Credit:
        f = TableReader(data, where, "report", ReportError)
        through = f.texts("through", allow_empty=True)
        unwritten = f.raw("unwritten")
        if not isinstance(unwritten, bool):
            raise f.error("unwritten", f"must be true or false, got {unwritten!r}")
        charged = tuple(
            Charge.from_json(item, f"{where}.charged[{i}]")
            for i, item in enumerate(f.tables("charged", allow_empty=True))
        )
        f.finish()
        return cls(through, charged, unwritten)


@dataclass(frozen=True)
class LabResult:
    """One lab's verdict: its tests, counted against the kit's catalog, and its probes (it
    passes, and ``earned`` counts its tests, only when they agree too; ``passed`` regardless),
    unless per-lab credit decided it (``credit``)."""

    lab: Lab
    tests: tuple[TestOutcome, ...]
    total: int  # its test cases (the kit's test files; instructor tests add)
    probes: ProbeSummary | None = None
    withheld: Status | None = None
    """How the lab's instructor tests ended where this view leaves them out (``for_learners``:
    learners see the chapter's counts); None when it leaves none out. It decides the status."""
    credit: Credit | None = None
    """What per-lab credit decided (None: the learner's own run decides, as its tests say)."""

    @property
    def passed(self) -> int:
        """How many of the lab's admitted tests passed (never more than ``total``)."""
        return min(self.total, sum(test.status == Status.PASSED for test in self.tests))

    @property
    def agreed(self) -> int:
        """How many probe cases agreed with the reference (0 without probes)."""
        return self.probes.agreed if self.probes is not None else 0

    @property
    def cases(self) -> int:
        """How many probe cases were drawn (0 without probes)."""
        return self.probes.cases if self.probes is not None else 0

    @property
    def earned(self) -> int:
        """What the lab earns: its tests when the lab passes (tests and cases), else nothing."""
        return self.passed if self.status == Status.PASSED else 0

    @property
    def points(self) -> int:
        """What the lab is worth: the manifest's ``points`` (an optional lab counts for none)."""
        return 0 if self.lab.optional else self.lab.points

    @property
    def score(self) -> int:
        """The grade: the lab's points when it passes whole (tests, instructor tests and probe
        cases alike), else 0. Every door shows this number."""
        return self.points if self.status == Status.PASSED else 0

    @property
    def tests_status(self) -> Status:
        """What the tests alone say: passed only if every test of the lab ran and passed."""
        statuses = {test.status for test in self.tests}
        if statuses == {Status.PASSED} and len(self.tests) == self.total:
            return Status.PASSED
        return worst(statuses - {Status.PASSED})

    @property
    def shown_status(self) -> Status:
        """What the learner's own run showed: the tests' status, made worse by probes that
        disagree with the reference (and by instructor tests this view withholds)."""
        probes = Status.PASSED if self.probes is None else self.probes.status
        return worst({self.tests_status, probes, self.withheld or Status.PASSED})

    @property
    def status(self) -> Status:
        """The lab's verdict: what its own run showed, unless per-lab credit decided it (a lab
        charged with another lab's failing test fails; one whose failure is charged to another
        lab passes)."""
        shown = self.shown_status
        if self.credit is None:
            return shown
        if self.credit.charged:
            return shown if shown != Status.PASSED else Status.FAILED
        return Status.PASSED if self.credit.through else shown

    @property
    def written(self) -> bool:
        """Whether any of its code is written: some test or probe got past a lab stub."""
        if self.probes is not None and self.probes.status != Status.PENDING:
            return True
        return any(test.status != Status.PENDING for test in self.tests if not test.not_run)

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {
            "id": self.lab.id,
            "title": self.lab.title,
            "passed": self.passed,
            "total": self.total,
            "agreed": self.agreed,
            "cases": self.cases,
            "earned": self.earned,
            "points": self.points,
            "score": self.score,
            "status": str(self.status),
            "optional": self.lab.optional,
        }
        if self.probes is not None:
            data["probes"] = self.probes.to_json()
        if self.withheld is not None:
            data["withheld"] = str(self.withheld)
        if self.credit is not None:
            data["credit"] = self.credit.to_json()
        return data


@dataclass(frozen=True)
class CheckpointResult:
    """A whole checkpoint run: every door shows this same thing."""

    chapter: str
    target: str
    labs: tuple[LabResult, ...]
    problems: tuple[str, ...] = ()  # what fails the run besides test outcomes
    notes: tuple[str, ...] = ()  # reported without changing the grade (edited tests, say)
    flags: tuple[str, ...] = ()  # for an instructor (a forged test report, say); never graded
    seed: int | None = None  # the probes' (None: no probes ran)

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
    def agreed(self) -> int:
        return sum(lab.agreed for lab in self.required)

    @property
    def cases(self) -> int:
        return sum(lab.cases for lab in self.required)

    @property
    def earned(self) -> int:
        """The tests of the required labs that passed whole (tests and cases)."""
        return sum(lab.earned for lab in self.required)

    @property
    def score(self) -> int:
        """The grade: the points of the required labs that passed whole."""
        return sum(lab.score for lab in self.required)

    @property
    def max_score(self) -> int:
        """What the required labs run are worth together (100 for chapter 11's five)."""
        return sum(lab.points for lab in self.required)

    @property
    def tests(self) -> list[TestOutcome]:
        return [test for lab in self.labs for test in lab.tests]

    @property
    def ok(self) -> bool:
        labs = self.required or self.optional
        return bool(labs) and not self.problems and all(lab.status == Status.PASSED for lab in labs)

    @property
    def evidence(self) -> str:
        """The chapter's evidence line, e.g. ``3/3 → 3/3 → 3/3 → 2/2 → 3/3``."""
        return " → ".join(f"{lab.passed}/{lab.total}" for lab in self.required)

    def lab(self, lab_id: str) -> LabResult | None:
        return next((lab for lab in self.labs if lab.lab.id == lab_id), None)

    def first_open_lab(self) -> LabResult | None:
        return next((lab for lab in self.required if lab.status != Status.PASSED), None)

    def to_json(self) -> dict[str, Any]:
        return {
            "chapter": self.chapter,
            "target": self.target,
            "labs": [lab.to_json() for lab in self.labs],
            "evidence": self.evidence,
            "tests": [test.to_json() for test in self.tests],
            "passed": self.passed,
            "total": self.total,
            "agreed": self.agreed,
            "cases": self.cases,
            "earned": self.earned,
            "score": self.score,
            "max_score": self.max_score,
            "problems": list(self.problems),
            "notes": list(self.notes),
            "flags": list(self.flags),
            "seed": self.seed,
        }

    @classmethod
    def from_json(cls, data: object, manifest: Manifest) -> CheckpointResult:
        """Read ``to_json``'s form back; a ``ReportError`` names the field that is wrong."""
        f = TableReader(data, "", "report", ReportError)
        tests = [
            TestOutcome.from_json(item, f"tests[{i}]")
            for i, item in enumerate(f.tables("tests", allow_empty=True))
        ]
        labs = []
        for index, item in enumerate(f.tables("labs", allow_empty=True)):
            where = f"labs[{index}]"
            g = TableReader(item, where, "report", ReportError)
            lab_id = g.text("id")
            lab = next((lab for lab in manifest.labs if lab.id == lab_id), None)
            if lab is None:
                said = _("chapter {chapter} has no lab {lab_id}")
                raise g.error("id", said.format(chapter=manifest.chapter, lab_id=lab_id))
            probes, total = g.raw("probes", None), g.count("total")
            if probes is not None:
                probes = ProbeSummary.from_json(probes, f"{where}.probes")
            withheld = g.status("withheld") if "withheld" in g.table else None
            credit = g.raw("credit", None)
            if credit is not None:
                credit = Credit.from_json(credit, f"{where}.credit")
            mine = tuple(t for t in tests if t.lab == lab_id)
            labs.append(LabResult(lab, mine, total, probes, withheld, credit))
            for key in LAB_DERIVED:
                g.raw(key)  # derived from the rest: read, and checked again below
            g.finish()
        seed = f.raw("seed", None)
        result = cls(
            chapter=f.text("chapter"),
            target=f.text("target", allow_empty=True),
            labs=tuple(labs),
            problems=f.texts("problems", allow_empty=True),
            notes=f.texts("notes", allow_empty=True),
            flags=f.texts("flags", allow_empty=True),
            seed=seed if isinstance(seed, int) and not isinstance(seed, bool) else None,
        )
        derived = ("evidence", "passed", "total", "agreed", "cases", "earned", "score", "max_score")
        for key in derived:
            f.raw(key)
        f.finish()
        if result.to_json() != data:
            raise ReportError("report: its counts do not follow from its tests and probes")
        return result


def admit(catalog: Catalog, outcomes: Sequence[TestOutcome]) -> tuple[list[TestOutcome], list[str]]:
    """The outcomes of tests the catalog has, each once, in its catalogued lab; and a flag for
    each report left out (of a test the kit lacks, a second one, a case too many)."""
    admitted: list[TestOutcome] = []
    flags: list[str] = []
    seen: set[str] = set()
    cases: Counter[CatalogTest] = Counter()
    for outcome in outcomes:
        test = catalog.find(outcome.nodeid)
        if test is None:
            said = _("a report of {nodeid}, which is not a test of this run")
            flags.append(said.format(nodeid=repr(outcome.nodeid)))
            continue
        if outcome.nodeid in seen:
            said = _("a second report of {nodeid} (the first one counts)")
            flags.append(said.format(nodeid=repr(outcome.nodeid)))
            continue
        if cases[test] >= test.cases:
            said = _("more reports of {test} than its {count} case(s)")
            flags.append(said.format(test=test.function, count=test.cases))
            continue
        seen.add(outcome.nodeid)
        cases[test] += 1
        admitted.append(replace(outcome, lab=test.lab))
    return admitted, flags


def summarize(
    manifest: Manifest,
    labs: Sequence[Lab],
    outcomes: Sequence[TestOutcome],
    *,
    catalog: Catalog,
    target: str,
    problems: Sequence[str] = (),
    notes: Sequence[str] = (),
    flags: Sequence[str] = (),
    probes: Mapping[str, ProbeSummary] | None = None,
    seed: int | None = None,
) -> CheckpointResult:
    """Each lab's verdict from the admitted outcomes; a catalogued test never reported is an
    error of its own, so a lab always has exactly its catalogued number of cases."""
    admitted, forged = admit(catalog, outcomes)
    probes = probes or {}
    results = []
    for lab in labs:
        mine = [test for test in admitted if test.lab == lab.id]
        reported = Counter(catalog.find(test.nodeid) for test in mine)
        for test in catalog.of_lab(lab.id):
            never = _("the test process never reported this test")
            nodeid = f"{test.file}::{test.function}"
            missing = TestOutcome(nodeid, test.function, lab.id, Status.ERROR, never)
            mine += [missing] * (test.cases - reported[test])
        results.append(LabResult(lab, tuple(mine), catalog.count(lab.id), probes.get(lab.id)))
    return CheckpointResult(
        chapter=manifest.chapter,
        target=target,
        labs=tuple(results),
        problems=tuple(problems),
        notes=tuple(notes),
        flags=tuple(flags) + tuple(dict.fromkeys(forged)),
        seed=seed,
    )


def attribute(manifest: Manifest, outcome: TestOutcome, green: Collection[str] = ()) -> TestOutcome:
    """``outcome`` with its culprit: the lab of the innermost lab function among its frames
    (a given function that raised is passed over), and its frame: the learner's code.

    A lab of ``green`` (its own tests all pass) is passed over as well: its function raised on
    a value another lab's code produced, so the culprit is the innermost caller of a lab that
    is not green; when every lab in the frames is green the test's own lab is at fault (a value
    that lab's code returned earlier, no longer running), and the outcome names no culprit."""
    for frame in reversed(outcome.frames):
        lab = manifest.lab_of_function(frame.module, frame.function)
        if lab is not None and lab.id not in green:
            return replace(outcome, culprit=lab.id, culprit_frame=frame)
    return replace(outcome, culprit=None, culprit_frame=None)


def green_labs(outcomes: Sequence[TestOutcome]) -> frozenset[str]:
    """The labs whose tests ran in ``outcomes`` and all passed."""
    ran = {o.lab for o in outcomes if o.lab is not None}
    broken = {o.lab for o in outcomes if o.status != Status.PASSED}
    return frozenset(lab for lab in ran if lab not in broken)


def lab_to_work_on(manifest: Manifest, result: CheckpointResult) -> Lab | None:
    """The first lab that is not green, or the lab whose code made it fail or hang."""
    first = result.first_open_lab()
    if first is None:
        return None
    for test in first.tests:
        if test.status.broken and test.culprit is not None and test.culprit != first.lab.id:
            return manifest.lab(test.culprit)
    return first.lab
