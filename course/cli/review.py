"""``checkpoint CHAPTER --review``: the closing questions beside the learner's own answers, and
the closing demonstrations (the manifest's ``[review]``) checked on the learner's code.

The chapter's review module runs on the graded copy, confined as the focused tests are, after
the labs' verdict, so a demonstration whose labs are not written says so, not "does not hold".
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from ..grading.intake.snapshot import Snapshot
from ..grading.verdict.engine import GradingOptions, grade, take_snapshot
from ..harness.catalog import Catalog, CatalogTest
from ..harness.hints import NONE_OPENED, Opened, hints_summary
from ..harness.manifest import Manifest, Review
from ..harness.results import CheckpointResult, LabResult, TestOutcome, admit
from ..harness.runner import Limits
from ..harness.style import PLAIN, Style, status_label
from ..locale import gettext as _
from ..locale import unquoted
from ..sandboxed.columns import terminal_width, wrap
from ..sandboxed.status import Status
from ..sandboxed.verdicts import readable

WIDTH = 100


@dataclass(frozen=True)
class ReviewResult:
    """What the review's tests said, by test name, and what kept them from running."""

    review: Review
    outcomes: Mapping[str, TestOutcome]
    verdict: CheckpointResult
    """Every lab's verdict on the same files."""
    problems: tuple[str, ...] = ()
    flags: tuple[str, ...] = ()
    """Reports left out as the grade leaves them out (a second report of a test, an unknown one)."""

    def passed(self, test: str) -> bool:
        outcome = self.outcomes.get(test)
        return outcome is not None and outcome.status == Status.PASSED

    @property
    def held(self) -> int:
        """How many demonstrations hold."""
        return sum(self.passed(check.test) for check in self.review.checks)

    @property
    def ok(self) -> bool:
        """Every required lab passes, nothing stopped the review, every demonstration holds."""
        return not self.problems and not self.open_labs and self.held == len(self.review.checks)

    @property
    def open_labs(self) -> list[LabResult]:
        """The required labs that do not pass yet: the review is for after all of them."""
        return [lab for lab in self.verdict.required if lab.status != Status.PASSED]


def run_review(
    manifest: Manifest,
    kit: Path,
    root: Path | None,
    limits: Limits,
    options: GradingOptions,
    snapshot: Snapshot | None = None,
) -> ReviewResult:
    """The labs' verdict, then the review module's tests, on one graded copy of ``root``."""
    review = manifest.review
    if review is None:
        raise ValueError(
            _("chapter {chapter} has no closing review").format(chapter=manifest.chapter)
        )
    snapshot = snapshot or take_snapshot(manifest, kit, root)
    uncounted = (review.test_file,)
    graded = grade(
        manifest, kit, snapshot, manifest.labs, limits, options, selected=False, uncounted=uncounted
    )
    # the grade's own selection: the first report of each of the review's tests counts
    catalog = Catalog(tuple(CatalogTest(review.test_file, name, "review") for name in review.tests))
    admitted, flags = admit(catalog, graded.extra)
    by_name = {test.function: o for o in admitted if (test := catalog.find(o.nodeid)) is not None}
    problems = list(graded.result.problems)
    missing = _("{file} has no test {name}; restore the file or start a new workspace")
    problems += [
        missing.format(file=review.test_file, name=name)
        for name in review.tests
        if name not in by_name and not problems
    ]
    flags = [*graded.result.flags, *flags]  # the grade's, records no reporter writes included
    return ReviewResult(review, by_name, graded.result, tuple(problems), tuple(flags))


def _wrap(text: str, indent: str, first: str | None = None) -> list[str]:
    return wrap(
        " ".join(text.split()),
        terminal_width(widest=WIDTH),
        indent if first is None else first,
        indent,
    )


def _said(outcome: TestOutcome | None, seen: set[str]) -> list[str]:
    """What a test that did not pass said, once: a repeated cause is only referred to."""
    if outcome is None:
        return [_("(not run)")]
    if outcome.message in seen:
        return [_("{status}: the same as above").format(status=status_label(outcome.status))]
    seen.add(outcome.message)
    first, *rest = readable(outcome.message).splitlines() or [""]
    return [_("{status}: {said}").format(status=status_label(outcome.status), said=first), *rest]


def render_review(result: ReviewResult, style: Style = PLAIN, opened: Opened = NONE_OPENED) -> str:
    """The review as printed: the questions with the learner's answers, then the checks;
    ``opened``: the hint levels the workspace opened, shown as information."""
    review, verdict = result.review, result.verdict
    seen: set[str] = set()
    still_open = _(", ").join(  # ``Lab 11.4 (0/2), Lab 11.5 (2/3)``
        _("Lab {id} ({passed}/{total})").format(id=lab.lab.id, passed=lab.passed, total=lab.total)
        for lab in result.open_labs
    )
    lines = [style.bold(review.title)]
    if still_open:  # below every lab passing, the review says so first
        not_ready = _(
            "Not ready: {passed}/{total}; still open: {labs}. The review is for after every lab "
            "passes; below is what your code can show so far."
        )
        lines += _wrap(
            not_ready.format(passed=verdict.passed, total=verdict.total, labs=still_open), ""
        )
    lines += _wrap(review.intro, "")
    labs = _("Labs: {labs}   {passed}/{total}")
    lines += ["", labs.format(labs=verdict.evidence, passed=verdict.passed, total=verdict.total)]
    lines += _wrap(hints_summary([lab.lab for lab in verdict.labs], opened), "")
    if unwritten := [lab.lab.id for lab in verdict.required if not lab.written]:
        labs = _(", ").join(_("Lab {id}").format(id=lab) for lab in unwritten)
        lines += _wrap(
            _(
                "not written yet: {labs}. The questions and checks that need those labs wait "
                "for them."
            ).format(labs=labs),
            "  ",
        )
    lines += ["", _("Explain:")]
    for number, question in enumerate(review.questions, start=1):
        lines += _wrap(question.text, "     ", f"  {number}. ")
        outcome = result.outcomes.get(question.show)
        if outcome is not None and result.passed(question.show):
            lines += [f"     {line}" for line in outcome.shown]
        else:
            said = _said(outcome, seen)
            cannot = _("your code cannot show this yet: {said}").format(said=said[0])
            lines += ["     " + unquoted(cannot)]
            lines += [f"       {unquoted(line)}" for line in said[1:]]
    lines += ["", _("Check:")]
    words = {Status.PASSED: _("holds"), Status.PENDING: _("not written yet")}
    for check in review.checks:
        outcome = result.outcomes.get(check.test)
        status = outcome.status if outcome is not None else Status.ERROR
        mark = style.status(status, words.get(Status.read(status), _("does not hold")))
        lines += _wrap(_("{mark}: {title}").format(mark=mark, title=check.title), "     ", "  ")
        lines += [f"     {line}" for line in (outcome.shown if outcome is not None else ())]
        if status != Status.PASSED:
            lines += [f"     {line}" for line in _said(outcome, seen)]
        if status not in (Status.PASSED, Status.PENDING):
            lines += _wrap(_("hint: {hint}").format(hint=check.hint), "       ", "     ")
    lines += ["", *[_("problem: {problem}").format(problem=problem) for problem in result.problems]]
    lines += [_("flag: {flag}").format(flag=flag) for flag in dict.fromkeys(result.flags)]
    lines.append(
        _(
            "Review: {held}/{checks} demonstrations hold; {questions} questions to explain in "
            "your own words."
        ).format(held=result.held, checks=len(review.checks), questions=len(review.questions))
    )
    if still_open:
        still = _("Still open: {labs}: finish them, then run the review again.")
        lines += _wrap(still.format(labs=still_open), "")
    return "\n".join(lines)
