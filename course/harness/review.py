"""``checkpoint CHAPTER --review``: the closing questions beside the learner's own answers, and
the chapter's closing demonstrations checked on the learner's code.

The questions, demonstrations and hints are the manifest's ``[review]``; the code that computes
the answers and makes the demonstrations is the chapter's review module, run like the focused
tests in a child process under the same limits.
"""

from __future__ import annotations

import textwrap
from collections.abc import Mapping
from dataclasses import dataclass

from .manifest import Review
from .results import TestOutcome
from .runner import Limits, RunTarget, run_focused_tests
from .style import PLAIN, Style

WIDTH = 100


@dataclass(frozen=True)
class ReviewResult:
    """What the review's tests said, by test name, and what kept them from running."""

    review: Review
    outcomes: Mapping[str, TestOutcome]
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

    def _passed(self, test: str) -> bool:
        outcome = self.outcome(test)
        return outcome is not None and outcome.status == "passed"


def run_review(review: Review, target: RunTarget, limits: Limits) -> ReviewResult:
    """Run the review module's tests against the target's package."""
    outcomes, log = run_focused_tests(target, limits=limits)
    by_name = {outcome.name: outcome for outcome in outcomes}
    problems = list(log.collect_errors) if not outcomes else []
    problems += [
        f"{review.test_file} has no test {name}; restore the file or start a new workspace"
        for name in review.tests
        if name not in by_name and not problems
    ]
    return ReviewResult(review, by_name, tuple(problems))


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
    lines += ["", "Explain:"]
    for number, question in enumerate(review.questions, start=1):
        lines += _wrap(question.text, "     ", f"  {number}. ")
        outcome = result.outcome(question.show)
        if outcome is not None and outcome.status == "passed":
            lines += [f"     {line}" for line in outcome.shown]
        else:
            said = _said(outcome, seen)
            lines += [f"     your code cannot show this yet: {said[0]}"]
            lines += [f"       {line}" for line in said[1:]]
    lines += ["", "Check:"]
    for check in review.checks:
        outcome = result.outcome(check.test)
        status = outcome.status if outcome is not None else "error"
        mark = style.status(status, "holds" if status == "passed" else "does not hold")
        lines += _wrap(check.title, "     ", f"  {mark}: ")
        lines += [f"     {line}" for line in (outcome.shown if outcome is not None else ())]
        if status != "passed":
            lines += [f"     {line}" for line in _said(outcome, seen)]
            lines += _wrap(f"hint: {check.hint}", "       ", "     ")
    lines += ["", *[f"problem: {problem}" for problem in result.problems]]
    questions = len(review.questions)
    lines.append(
        f"Review: {result.held}/{len(review.checks)} demonstrations hold; "
        f"{questions} questions to explain in your own words."
    )
    return "\n".join(lines)


def review_target(review: Review, target: RunTarget) -> RunTarget:
    """The run target of the review: the same package, the review module instead of the labs."""
    return RunTarget(target.root, (review.test_file,), target.package, target.python_path)
