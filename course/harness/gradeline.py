"""The grade line every door ends a verdict with: the focused tests, then the grade, and why.

A lab earns its points only when its focused tests and its probe cases all pass (and per-lab
credit charges it with no other lab's test), so ``14/14`` can stand beside ``80/100``: wherever a
lab's tests and its points disagree, the grade line says why, in one sentence per lab. A run of
some labs only (``--lab``, ``check("11.2")``, a lab's job on GitHub) shows those labs' points,
never a total that reads as the chapter's grade.
"""

from __future__ import annotations

from collections.abc import Sequence

from ..locale import gettext as _
from ..locale import ngettext
from ..sandboxed.columns import columns, pad, terminal_width, wrap
from ..sandboxed.status import Status
from .manifest import Manifest
from .results import LabResult

WIDTH = 100


def grade_lines(labs: Sequence[LabResult], whole: bool, width: int | None = None) -> list[str]:
    """``focused tests  3/3 → … (14/14)`` and ``grade  80/100: <why>`` for the required labs of
    ``labs``; ``whole``: they are every required lab of the chapter (else each lab's points:
    ``points  Lab 11.1 20/20``). Lines wrap at ``width`` (the terminal's, at most 100) under
    their text; none when no required lab ran."""
    counted = [lab for lab in labs if not lab.lab.optional]
    if not counted:
        return []
    tests, grade = _("focused tests"), (_("grade") if whole else _("points"))
    column = max(columns(tests), columns(grade)) + 2
    width = width if width is not None else terminal_width(widest=WIDTH)
    return _labelled(tests, focused_tests(counted), column, width) + _labelled(
        grade, points(counted, whole), column, width
    )


def covers_chapter(manifest: Manifest, labs: Sequence[LabResult]) -> bool:
    """Whether ``labs`` hold every required lab of the chapter (their grade is the chapter's)."""
    ran = {lab.lab.id for lab in labs if not lab.lab.optional}
    return ran == {lab.id for lab in manifest.required_labs}


def focused_tests(labs: Sequence[LabResult]) -> str:
    """``3/3 → 3/3 → 3/3 → 2/2 → 3/3 (14/14)``; one lab's ``3/3`` alone."""
    evidence = " → ".join(f"{lab.passed}/{lab.total}" for lab in labs)
    if len(labs) == 1:
        return evidence
    passed, total = sum(lab.passed for lab in labs), sum(lab.total for lab in labs)
    return _("{counts} ({passed}/{total})").format(counts=evidence, passed=passed, total=total)


def points(labs: Sequence[LabResult], whole: bool) -> str:
    """``80/100`` (``whole``) or ``Lab 11.1 20/20``, then why, where a lab's tests and its
    points disagree (``points_reason``)."""
    if whole:
        said = f"{sum(lab.score for lab in labs)}/{sum(lab.points for lab in labs)}"
    else:
        said = _(", ").join(f"Lab {lab.lab.id} {lab.score}/{lab.points}" for lab in labs)
    reasons = [reason for reason in map(points_reason, labs) if reason]
    if not reasons:
        return said
    return _("{grade}: {reasons}").format(grade=said, reasons=_("; ").join(reasons))


def points_reason(lab: LabResult) -> str:
    """Why ``lab`` earns other than its focused tests say ('' where they agree): tests that
    pass in a lab that earns nothing (its probe cases, the instructor's tests, another lab's
    test its code fails), or tests that fail in a lab that keeps its points (per-lab credit)."""
    tests_pass, earns = lab.tests_status == Status.PASSED, lab.status == Status.PASSED
    if lab.lab.optional or tests_pass == earns:
        return ""
    credit = lab.credit
    if earns:
        labs = _(", ").join(f"Lab {other}" for other in credit.through) if credit else ""
        if credit is not None and credit.unwritten:
            said = _(
                "what fails in Lab {lab} passes with the reference's code for {labs} (not "
                "written yet), so Lab {lab} keeps its points"
            )
        else:
            said = _(
                "what fails in Lab {lab} passes with the reference's {labs} in place of yours, "
                "so Lab {lab} keeps its points"
            )
        return said.format(lab=lab.lab.id, labs=labs)
    probes = lab.probes
    if probes is not None and probes.status != Status.PASSED:
        wrong = probes.cases - probes.agreed
        said = ngettext(
            "Lab {lab}'s focused tests pass, but {count} of its {cases} probe cases disagrees "
            "with the reference, so Lab {lab} earns nothing",
            "Lab {lab}'s focused tests pass, but {count} of its {cases} probe cases disagree "
            "with the reference, so Lab {lab} earns nothing",
            wrong,
        )
        if not wrong:  # the counted cases agree; the assignment's own (uncounted) do not
            said = _(
                "Lab {lab}'s focused tests pass, but some of its probe cases disagree with the "
                "reference, so Lab {lab} earns nothing"
            )
        return said.format(lab=lab.lab.id, count=wrong, cases=probes.cases)
    if credit is not None and credit.charged:
        labs = _(", ").join(dict.fromkeys(f"Lab {charge.lab}" for charge in credit.charged))
        said = _(
            "Lab {lab}'s focused tests pass, but its code fails a test of {labs} that passes "
            "with the reference's, so Lab {lab} earns nothing"
        )
        return said.format(lab=lab.lab.id, labs=labs)
    said = _(
        "Lab {lab}'s focused tests pass, but the instructor's own tests of it did not all pass, "
        "so Lab {lab} earns nothing"
    )
    return said.format(lab=lab.lab.id)


def _labelled(label: str, text: str, column: int, width: int) -> list[str]:
    """``label`` padded to ``column``, then ``text`` wrapped to ``width`` under itself."""
    return wrap(text, width, pad(label, column), " " * column) or [label]
