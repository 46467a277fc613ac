"""``checkpoint CHAPTER --review``: the closing questions with the learner's answers, and checks."""

from __future__ import annotations

from pathlib import Path

from harness_support import MakeWorkspace, cli, replace_in, solved_workspace
from mutants import MUTANTS

from course.harness.manifest import Manifest


def flat(text: str) -> str:
    return " ".join(text.split())


def test_the_reference_passes_the_review_and_shows_its_answers(manifest: Manifest) -> None:
    review = manifest.review
    assert review is not None
    run = cli("checkpoint", "11", "--review")
    assert run.returncode == 0, run.stdout + run.stderr
    out = flat(run.stdout)
    assert flat(review.title) in out
    for number, question in enumerate(review.questions, start=1):
        assert f"{number}. {flat(question.text)}" in out
    assert "your group_interactions: [u1, a1] [u2, a2] [u3, calls, r-test, r-read, a3]" in out
    assert "31 − system 3 − reserved_output 4 − safety_margin 2 = 22 for messages" in out
    assert "parentId a3, firstKeptEntryId u2, tokensBefore 29; the nine entries unchanged" in out
    assert "1 summary message(s), then u2, a2, u3, calls, r-test, r-read, a3, u4, a4" in out
    for check in review.checks:
        assert f"holds: {flat(check.title)}" in out
    resumed = "u3, calls, r-test, r-read, a3, u4, a4"
    assert f"your next build: 1 summary message(s), then {resumed}" in out
    assert run.stdout.rstrip().endswith(
        f"Review: 2/2 demonstrations hold; {len(review.questions)} questions to explain in your "
        "own words."
    )


def test_shared_returned_messages_fail_the_isolation_check_with_its_hint(
    manifest: Manifest, kit: Path, make_workspace: MakeWorkspace
) -> None:
    review = manifest.review
    assert review is not None
    workspace = solved_workspace(manifest, kit, make_workspace, "shares")
    replace_in(  # hand back the path's own message objects instead of copies
        workspace / "pi_course" / "context.py",
        "        messages=opening.messages + [entry.message for entry in chosen.entries],",
        "        messages=opening.messages + [next(e.message for e in path if e.id == entry.id) "
        "for entry in chosen.entries],",
    )
    run = cli("checkpoint", "11", "--review", cwd=workspace)
    assert run.returncode == 1
    out = flat(run.stdout)
    isolation, second = review.checks
    assert f"does not hold: {flat(isolation.title)}" in out
    assert "changing a returned tool argument changed the active path" in out
    assert f"hint: {flat(isolation.hint)}" in out
    assert f"holds: {flat(second.title)}" in out
    assert "Review: 1/2 demonstrations hold" in out


def test_a_fresh_workspace_cannot_show_its_answers_yet(
    manifest: Manifest, make_workspace: MakeWorkspace
) -> None:
    workspace = make_workspace("early")
    run = cli("checkpoint", "11", "--review", "--practice", str(workspace))
    assert run.returncode == 1
    out = flat(run.stdout)
    pending = "pending: Lab 11.2 interaction groups not implemented"
    assert f"your code cannot show this yet: {pending}" in out
    assert "Review: 0/2 demonstrations hold" in out
    assert out.count("the same as above") >= 1, "a repeated cause is printed once"


def test_below_every_lab_passing_the_review_names_the_open_labs_and_fails(
    manifest: Manifest, kit: Path, make_workspace: MakeWorkspace
) -> None:
    """11/14 (Lab 11.4 appends to the caller's path, and one of Lab 11.5's tests fails through
    it: Lab 11.5 keeps its points, the test counted as it ran): the review says which labs are
    open."""
    mutant = next(m for m in MUTANTS if m.name == "appends_the_record_to_the_path")
    workspace = solved_workspace(manifest, kit, make_workspace, "eleven")
    replace_in(workspace / "pi_course" / mutant.module, mutant.old, mutant.new)
    run = cli("checkpoint", "11", "--review", cwd=workspace)
    out = flat(run.stdout)
    assert run.returncode == 1, run.stdout + run.stderr
    assert "Labs: 3/3 → 3/3 → 3/3 → 0/2 → 2/3 11/14" in out, out
    assert "Not ready: 11/14; still open: Lab 11.4 (0/2)." in out, out
    review = manifest.review
    assert review is not None
    assert out.index("Not ready") < out.index(flat(review.intro)), "said before the intro"
    last = [line for line in run.stdout.splitlines() if line.strip()][-1]
    still = "Still open: Lab 11.4 (0/2): finish them, then run the review again."
    assert last == still, run.stdout
