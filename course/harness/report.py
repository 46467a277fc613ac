"""Text a checkpoint prints: the card, one line per lab, the evidence line and the next step."""

from __future__ import annotations

import textwrap
from collections.abc import Sequence

from .kit import Fingerprints, short
from .learning import lab_command
from .manifest import Manifest
from .results import CheckpointResult, LabResult, TestOutcome

WIDTH = 100
LABEL_WIDTH = 17


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


def render_card(manifest: Manifest, fingerprints: Fingerprints) -> str:
    """The chapter's checkpoint card."""
    card = manifest.card
    lines = [card.title]
    lines += _field("mode", card.mode)
    lines += _field("parent", f"{short(fingerprints.parent)} · {card.parent}")
    lines += _field("target", f"{short(fingerprints.target)} · {card.target}")
    lines += _field("teaching files", ", ".join(card.teaching_files))
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


def render_lab(result: LabResult, title_width: int = 24) -> str:
    """``Lab 11.3  budget projection   3/3  passed`` and a line per test that did not pass."""
    lab = result.lab
    status = f"{result.status} (optional, not counted)" if lab.optional else result.status
    lines = [
        f"Lab {lab.id:<5} {lab.title:<{title_width}} "
        f"{result.passed}/{result.total:<3} {status}".rstrip()
    ]
    lines += [f"    {line}" for line in _test_details(result.tests)]
    return "\n".join(lines)


def _detail(head: str, text: str) -> list[str]:
    return textwrap.wrap(
        f"{head} {' '.join(text.split())}",
        width=WIDTH - 4,
        subsequent_indent=" " * 9,
        break_on_hyphens=False,
    )


def _test_details(tests: Sequence[TestOutcome]) -> list[str]:
    """Pending tests with one message are folded into a line; others get a line each."""
    lines: list[str] = []
    pending: dict[str, int] = {}
    for test in tests:
        if test.status == "pending":
            pending[test.message] = pending.get(test.message, 0) + 1
    for message, count in pending.items():
        noun = "test stops" if count == 1 else "tests stop"
        lines += _detail("pending ", f"{count} {noun} at: {message}")
    for test in tests:
        if test.status not in ("passed", "pending"):
            lines += _detail(f"{test.status:<8}", f"{test.name}: {test.message}")
    return lines


def render_summary(
    manifest: Manifest, result: CheckpointResult, practice: str | None = None
) -> str:
    """Evidence line, total, problems, and the first open lab's hint and re-run command."""
    lines = [
        f"optional: Lab {extra.lab.id} {extra.lab.title} {extra.passed}/{extra.total} "
        f"{extra.status} (not counted)"
        for extra in result.optional
    ]
    if result.required:
        lines.append(result.evidence)
    if len(result.required) > 1:
        lines.append(f"{result.passed}/{result.total}")
    lines += [f"problem: {problem}" for problem in result.problems]
    lab = result.first_open_lab()
    if lab is not None:
        lines += [
            "",
            f"Next: Lab {lab.lab.id} {lab.lab.title} ({lab.passed}/{lab.total}, {lab.status})",
        ]
        lines += _field("hint", lab.lab.hint)
        lines += _field("notebook", f"notebooks/{lab.lab.notebook} · {lab.lab.heading}")
        lines += _command("re-run just it", lab_command(manifest, lab.lab.id, practice))
    return "\n".join(lines)
