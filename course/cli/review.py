"""``checkpoint CHAPTER --review``: the closing questions beside the learner's own answers, and
the chapter's closing demonstrations checked on the learner's code.

The questions, demonstrations and hints are the manifest's ``[review]``; the code that computes
the answers and makes the demonstrations is the chapter's review module, run on the same
graded copy and in the same confinement as the focused tests. The review first shows the labs'
verdict (``grading.evaluate``), so a demonstration whose labs are not written yet says so
instead of "does not hold".
"""

from __future__ import annotations

import textwrap
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from ..grading.engine import GradingOptions, grade, take_snapshot
from ..harness.manifest import Manifest, Review
from ..harness.results import CheckpointResult, TestOutcome
from ..harness.runner import Limits
from ..harness.status import Status
from ..harness.style import PLAIN, Style

WIDTH = 100


@dataclass(frozen=True)
class ReviewResult:
    """What the review's tests said, by test name, and what kept them from running."""

    review: Review
    outcomes: Mapping[str, TestOutcome]
    verdict: CheckpointResult
    """Every lab's verdict on the same files."""
    problems: tuple[str, ...] = ()

    def outcome(self, test: str) -> TestOutcome | None:
        return self.outcomes.get(test)

    @property
    def held(self) -> int:
        """How many demonstrations hold."""
        return sum(self._passed(check.test) for check in self.review.checks)

    @property
    def ok(self) -> bool:
        return not self.problems and self.held == len(self.review.checks)

    @property
    def unwritten(self) -> list[str]:
        """The required labs that are not written yet (every case stops at a lab stub)."""
        return [lab.lab.id for lab in self.verdict.required if not lab.written]

    def _passed(self, test: str) -> bool:
        outcome = self.outcome(test)
        return outcome is not None and outcome.status == Status.PASSED


def run_review(
    manifest: Manifest, kit: Path, root: Path | None, limits: Limits, options: GradingOptions
) -> ReviewResult:
    """The labs' verdict, then the review module's tests, on one graded copy of ``root``."""
    review = manifest.review
    if review is None:
        raise ValueError(f"chapter {manifest.chapter} has no closing review")
    snapshot = take_snapshot(manifest, kit, root)
    graded = grade(
        manifest,
        kit,
        snapshot,
        manifest.labs,
        limits,
        options,
        selected=False,
        uncounted=(review.test_file,),
    )
    by_name = {outcome.name: outcome for outcome in graded.extra}
    problems = list(graded.result.problems)
    problems += [
        f"{review.test_file} has no test {name}; restore the file or start a new workspace"
        for name in review.tests
        if name not in by_name and not problems
    ]
    return ReviewResult(review, by_name, graded.result, tuple(problems))


def _wrap(text: str, indent: str, first: str | None = None) -> list[str]:
    return textwrap.wrap(
        " ".join(text.split()),
        width=WIDTH,
        initial_indent=indent if first is None else first,
        subsequent_indent=indent,
        break_on_hyphens=False,
    )


def _said(outcome: TestOutcome | None, seen: set[str]) -> list[str]:
    """What a test that did not pass said, once: a repeated cause is only referred to."""
    if outcome is None:
        return ["(not run)"]
    if outcome.message in seen:
        return [f"{outcome.status}: the same as above"]
    seen.add(outcome.message)
    first, *rest = outcome.message.splitlines() or [""]
    return [f"{outcome.status}: {first}", *rest]


def render_review(result: ReviewResult, style: Style = PLAIN) -> str:
    """The review as printed: the questions with the learner's answers, then the checks."""
    review = result.review
    seen: set[str] = set()
    lines = [style.bold(review.title), *_wrap(review.intro, "")]
    verdict = result.verdict
    lines += ["", f"Labs: {verdict.evidence}   {verdict.passed}/{verdict.total}"]
    if result.unwritten:
        lines += _wrap(
            f"not written yet: Lab {', Lab '.join(result.unwritten)}. The questions and checks "
            "that need those labs wait for them.",
            "  ",
        )
    lines += ["", "Explain:"]
    for number, question in enumerate(review.questions, start=1):
        lines += _wrap(question.text, "     ", f"  {number}. ")
        outcome = result.outcome(question.show)
        if outcome is not None and outcome.status == Status.PASSED:
            lines += [f"     {line}" for line in outcome.shown]
        else:
            said = _said(outcome, seen)
            lines += [f"     your code cannot show this yet: {said[0]}"]
            lines += [f"       {line}" for line in said[1:]]
    lines += ["", "Check:"]
    for check in review.checks:
        outcome = result.outcome(check.test)
        status = outcome.status if outcome is not None else Status.ERROR
        words = {Status.PASSED: "holds", Status.PENDING: "not written yet"}
        mark = style.status(status, words.get(Status.read(status), "does not hold"))
        lines += _wrap(check.title, "     ", f"  {mark}: ")
        lines += [f"     {line}" for line in (outcome.shown if outcome is not None else ())]
        if status == Status.PENDING:
            lines += [f"     {line}" for line in _said(outcome, seen)]
        elif status != Status.PASSED:
            lines += [f"     {line}" for line in _said(outcome, seen)]
            lines += _wrap(f"hint: {check.hint}", "       ", "     ")
    lines += ["", *[f"problem: {problem}" for problem in result.problems]]
    questions = len(review.questions)
    lines.append(
        f"Review: {result.held}/{len(review.checks)} demonstrations hold; "
        f"{questions} questions to explain in your own words."
    )
    return "\n".join(lines)
