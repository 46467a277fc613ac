"""Text a checkpoint prints: the card, one line per lab, the evidence line and the next step."""

from __future__ import annotations

import textwrap
from collections.abc import Sequence

from .commands import BY_NAME, Commands
from .kit import Fingerprints, short
from .learning import checkpoint_command, lab_command
from .manifest import Lab, Manifest
from .results import CheckpointResult, LabResult, TestOutcome, lab_to_work_on
from .status import Status
from .style import PLAIN, Style

WIDTH = 100
LABEL_WIDTH = 17
DETAIL_INDENT = 13
"""Where the text of a test's detail starts (after four spaces and the status column)."""


def _field(label: str, text: str) -> list[str]:
    indent = " " * (LABEL_WIDTH + 2)
    wrapped = textwrap.wrap(
        " ".join(text.split()),
        width=WIDTH,
        initial_indent=f"  {label:<{LABEL_WIDTH}}",
        subsequent_indent=indent,
        break_on_hyphens=False,
    )
    return wrapped or [f"  {label}"]


def _command(label: str, command: str) -> list[str]:
    """A command stays on one line however long, so it can be copied as printed."""
    return [f"  {label:<{LABEL_WIDTH}}{command}"]


def workspace_paths(manifest: Manifest, reference_paths: Sequence[str]) -> list[str]:
    """Where each reference file lives in a workspace (``course/context.py`` → ``pi_course/…``)."""
    by_target = {file.reference: file.path for file in manifest.files}
    return [by_target.get(path, path) for path in reference_paths]


def render_card(
    manifest: Manifest, fingerprints: Fingerprints, *, in_workspace: bool = False
) -> str:
    """The chapter's full checkpoint card (in a workspace it names the workspace's files)."""
    card = manifest.card
    teaching = card.teaching_files
    if in_workspace:
        teaching = tuple(workspace_paths(manifest, teaching))
    lines = [card.title]
    lines += _field("mode", card.mode)
    lines += _field("parent", f"{short(fingerprints.starter)} · {card.parent}")
    lines += _field("target", f"{short(fingerprints.reference)} · {card.target}")
    lines += _field("teaching files", ", ".join(teaching))
    lines += _field("scaffold", card.scaffold)
    lines += _field("know before", card.know_before)
    lines += _field("first step", card.first_step)
    lines += _field("first red light", card.first_red_light)
    lines += _field("focused tests", manifest.focused_tests)
    lines += _command("locate", card.locate)
    lines += _command("practice", card.practice)
    lines += _command("focused run", card.focused_run)
    lines += _field("evidence", card.evidence)
    return "\n".join(lines)


def expected_evidence(manifest: Manifest) -> str:
    """The evidence line of a run where every required lab passes."""
    return " → ".join(f"{lab.tests}/{lab.tests}" for lab in manifest.required_labs)


def render_short_card(manifest: Manifest, commands: Commands = BY_NAME) -> str:
    """The card a learner sees in a workspace: the title, their files, the goal, the full card."""
    files = [file.path for file in manifest.files_with_role("learner")]
    lines = [manifest.card.title]
    lines += _field("your code", ", ".join(files))
    lines += _field(
        "to reach", f"{expected_evidence(manifest)}: {manifest.total_tests} focused tests pass"
    )
    lines += _command("the full card", checkpoint_command(manifest, "--card", commands=commands))
    return "\n".join(lines)


def render_lab(result: LabResult, title_width: int = 24, style: Style = PLAIN) -> str:
    """``Lab 11.3  budget projection   3/3  passed`` and a line per test that did not pass."""
    lab = result.lab
    status = f"{result.status} (optional, not counted)" if lab.optional else result.status
    lines = [
        f"Lab {lab.id:<5} {lab.title:<{title_width}} "
        f"{result.passed}/{result.total:<3} {style.status(result.status, status)}".rstrip()
    ]
    lines += [f"    {line}" for line in _test_details(result)]
    lines += [f"    {line}" for line in _probe_details(result)]
    return "\n".join(lines)


def render_probes(result: CheckpointResult) -> list[str]:
    """How many probe cases of each lab agree with the reference, and the seed they came from."""
    labs = [lab for lab in result.labs if lab.probes is not None]
    if not labs:
        return []
    counts = " · ".join(
        f"{lab.lab.id} {lab.probes.agreed}/{lab.probes.cases}" for lab in labs if lab.probes
    )
    return [f"probes   {counts} agree with the reference (seed {result.seed})"]


def _probe_details(result: LabResult) -> list[str]:
    """Each disagreeing probe case the grader kept, named, as a failing case of the lab."""
    probes = result.probes
    if probes is None or probes.agree or probes.status == Status.PENDING:
        return []
    lines: list[str] = []
    for failure in probes.failures:
        lines += _detail(f"{'probe':<8}", failure)
    left = probes.cases - probes.agreed - len(probes.failures)
    if left > 0:
        lines.append(" " * (DETAIL_INDENT - 4) + f"and {left} more probe case(s) like these")
    return lines


def _detail(head: str, text: str) -> list[str]:
    """The message's first line wrapped after ``head``; later lines (code, diffs) kept as is."""
    first, *rest = text.splitlines() or [""]
    lines = textwrap.wrap(
        f"{head} {' '.join(first.split())}",
        width=WIDTH - 4,
        subsequent_indent=" " * (DETAIL_INDENT - 4),
        break_on_hyphens=False,
    )
    return lines + [" " * (DETAIL_INDENT - 4) + line for line in rest]


def _grouped(tests: Sequence[TestOutcome]) -> list[list[TestOutcome]]:
    """Tests with the same status and message together, in order of their first appearance."""
    groups: dict[tuple[str, str], list[TestOutcome]] = {}
    for test in tests:
        groups.setdefault((test.status, test.message), []).append(test)
    return list(groups.values())


def _test_details(result: LabResult) -> list[str]:
    """Tests ending the same way are folded into one line; passed and not-run tests are left out.

    Tests that never ran are reported once for the whole run (``render_not_run``).
    """
    lines: list[str] = []
    shown = [t for t in result.tests if t.status != Status.PASSED and not t.not_run]
    for group in _grouped(shown):
        first, count = group[0], len(group)
        if first.status == Status.PENDING:
            noun = "test stops" if count == 1 else "tests stop"
            lines += _detail("pending ", f"{count} {noun} at: {first.message}")
            continue
        who = first.name if count == 1 else f"{count} tests"
        lines += _detail(f"{first.status:<8}", f"{who}: {first.message}")
        if first.culprit is not None and first.culprit != result.lab.id and first.frames:
            where = first.frames[-1]
            lines.append(
                " " * (DETAIL_INDENT - 4) + f"that is Lab {first.culprit}'s code "
                f"({where.function} in {where.path}): see Next below"
            )
    return lines


def _tests(count: int, kind: str = "") -> str:
    return f"{count} {kind}{'test' if count == 1 else 'tests'}"


def render_not_run(result: CheckpointResult) -> list[str]:
    """One line per cause for the tests that never ran, however many labs they span."""
    lines: list[str] = []
    optional = {test.nodeid for lab in result.optional for test in lab.tests}
    not_run = [test for test in result.tests if test.not_run]
    for group in _grouped(not_run):
        extra = sum(test.nodeid in optional for test in group)
        counted = len(group) - extra
        parts = [_tests(counted)] if counted else []
        parts += [_tests(extra, "optional ")] if extra else []
        who = " and ".join(parts)
        lines += _detail(f"{group[0].status}:", f"{who} {group[0].message}")
    return lines


def render_summary(
    manifest: Manifest,
    result: CheckpointResult,
    practice: str | None = None,
    commands: Commands = BY_NAME,
) -> str:
    """Evidence line, total, problems, and what to do next: the open lab, or the next step."""
    lines = [
        f"optional: Lab {extra.lab.id} {extra.lab.title} {extra.passed}/{extra.total} "
        f"{extra.status} (not counted)"
        for extra in result.optional
    ]
    lines += render_not_run(result)
    if result.required:
        lines.append(result.evidence)
    if len(result.required) > 1:
        lines.append(f"{result.passed}/{result.total}")
    lines += [f"problem: {problem}" for problem in result.problems]
    lines += ["", *_next_step(manifest, result, practice, commands)]
    return "\n".join(lines).rstrip()


def _next_step(
    manifest: Manifest, result: CheckpointResult, practice: str | None, commands: Commands
) -> list[str]:
    if result.tests and all(test.not_run for test in result.tests):
        again = checkpoint_command(manifest, practice=practice, commands=commands)
        return [f"Next: fix what stops the tests from running (above), then run {again}"]
    lab = lab_to_work_on(manifest, result)
    if lab is not None:
        return render_open_lab(manifest, lab, result, practice, commands)
    if result.problems or not result.ok:
        return []
    if len(result.required) == len(manifest.required_labs):
        return render_after_green(manifest, practice, commands)
    ran = [lab.lab for lab in result.labs]
    later = [
        lab for lab in manifest.required_labs if manifest.labs.index(lab) > _last(manifest, ran)
    ]
    if later:
        return [
            f"Lab {ran[-1].id} is done.",
            *render_lab_pointer(manifest, later[0], practice, commands),
        ]
    everything = checkpoint_command(manifest, practice=practice, commands=commands)
    return [f"Lab {ran[-1].id} is done. Next: every lab at once: {everything}"]


def _last(manifest: Manifest, labs: Sequence[Lab]) -> int:
    return max(manifest.labs.index(lab) for lab in labs)


def render_open_lab(
    manifest: Manifest,
    lab: Lab,
    result: CheckpointResult | None,
    practice: str | None = None,
    commands: Commands = BY_NAME,
) -> list[str]:
    """``Next: Lab …`` with its hint, files, notebook and the command that re-runs it."""
    counts = next((r for r in result.labs if r.lab == lab), None) if result else None
    state = f" ({counts.passed}/{counts.total}, {counts.status})" if counts is not None else ""
    lines = [f"Next: Lab {lab.id} {lab.title}{state}"]
    lines += _field("hint", lab.hint)
    lines += _field("your file", ", ".join(lab.files))
    lines += _field("notebook", f"notebooks/{lab.notebook} · {lab.heading}")
    lines += _command("re-run just it", lab_command(manifest, lab.id, practice, commands))
    return lines


def render_lab_pointer(
    manifest: Manifest, lab: Lab, practice: str | None = None, commands: Commands = BY_NAME
) -> list[str]:
    """Where a learner goes after a green lab: the next lab, its notebook and its command."""
    lines = [f"Next: Lab {lab.id} {lab.title}"]
    lines += _field("notebook", f"notebooks/{lab.notebook} · {lab.heading}")
    lines += _command("run it", lab_command(manifest, lab.id, practice, commands))
    return lines


def render_after_green(
    manifest: Manifest, practice: str | None = None, commands: Commands = BY_NAME
) -> list[str]:
    """What follows the last required lab: the closing review, when the chapter has one."""
    done = f"All {manifest.total_tests} focused tests pass."
    if manifest.review is None:
        return [done]
    review = checkpoint_command(manifest, "--review", practice=practice, commands=commands)
    return [f"{done} Next: the chapter's closing review", *_command("run it", review)]
