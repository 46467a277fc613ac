"""What learners see of a run that held instructor tests: the kit's verdict text, nothing else.

Learner code can read the instructor tests while it runs and put their text, re-encoded, into
anything it makes: a test's message, what it prints, a frame's name, a probe answer. Where such a
run is shown to learners before the instructor chooses (Gradescope's visible output), each test
says its status in the kit's words, each disagreeing probe case its id, the input the grader drew
and its replay command, and each problem only that there was one. Counts and statuses stay.
"""

from __future__ import annotations

import re
from dataclasses import replace

from ...harness.results import CheckpointResult, LabResult, ProbeSummary, TestOutcome
from ...locale import gettext as _
from ...sandboxed.status import Status
from ...sandboxed.verdicts import NOT_RUN

CASE_ID = re.compile(r"\d+(?:\.\d+)*#[\w-]+")
"""A probe case's id (``11.3#007``), the first on a disagreement's first line: the kit's."""


def verdict_only(result: CheckpointResult) -> CheckpointResult:
    """``result`` with no text the learner's processes wrote (see the module's docstring)."""
    said = _("a problem stopped the run (its message is withheld: this run held instructor tests)")
    labs = tuple(_lab(lab) for lab in result.labs)
    return replace(result, labs=labs, problems=tuple(said for _problem in result.problems))


def _lab(lab: LabResult) -> LabResult:
    probes = lab.probes and _probes(lab.probes)
    return replace(lab, tests=tuple(_test(test, lab) for test in lab.tests), probes=probes)


def _test(test: TestOutcome, lab: LabResult) -> TestOutcome:
    """The test named by the catalog's function (the node id was admitted against it)."""
    name = test.nodeid.partition("::")[2].partition("[")[0] or test.name
    if test.status == Status.PASSED:
        message = ""
    elif test.not_run:
        message = NOT_RUN + _("what stopped it is withheld: this run held instructor tests")
    elif test.status == Status.PENDING:
        said = _("Lab {lab} {title} not implemented yet")
        message = said.format(lab=lab.lab.id, title=lab.lab.title)
    else:
        message = _("its message is withheld: this run held instructor tests")
    return replace(
        test,
        name=name,
        message=message,
        frames=(),
        shown=(),
        culprit=None,
        culprit_frame=None,
        output=(),
        output_more=0,
    )


def _probes(probes: ProbeSummary) -> ProbeSummary:
    """Each disagreement's first line (where the learner's answer is shown) in the kit's words;
    the lines after it (the drawn input, the replay command) are the grader's own."""
    failures = []
    for failure in probes.failures:
        first, *rest = failure.split("\n")
        found = CASE_ID.search(first)
        case = found.group() if found else "?"
        said = _(
            "probe case {case} disagrees with the reference (how is withheld: this run held "
            "instructor tests)"
        )
        failures.append("\n".join([said.format(case=case), *rest]))
    return replace(probes, failures=tuple(failures))
