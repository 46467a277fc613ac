"""LEARNING.md: the page a new workspace opens with, written from the manifest."""

from __future__ import annotations

import shlex
from collections.abc import Sequence

from .kit import short
from .manifest import Manifest


def lab_command(manifest: Manifest, lab_id: str, practice: str | None = None) -> str:
    """The checkpoint command that runs one lab (in a workspace, or on ``practice``)."""
    where = f" --practice {shlex.quote(practice)}" if practice else ""
    return f"checkpoint {manifest.chapter}{where} --lab {lab_id}"


def render_learning(manifest: Manifest, parent: str, notebooks: Sequence[str]) -> str:
    """The workspace's LEARNING.md."""
    card = manifest.card
    learner_files = ", ".join(f"`{f.path}`" for f in manifest.files_with_role("learner"))
    lines = [
        f"# {card.title}",
        "",
        f"This is a practice workspace for chapter {manifest.chapter}, {manifest.title}. "
        f"Your code is the `{manifest.package}` package: you edit {learner_files}; the "
        "other modules are given. The focused tests in "
        f"`{manifest.focused_tests}` exercise your package, never the kit's reference.",
        "",
        f"Scaffold: parent `{short(parent)}` ({card.parent}).",
        "",
        "## What to know first",
        "",
        card.know_before,
        "",
        "## First step",
        "",
        card.first_step,
        "",
        "## First red light",
        "",
        card.first_red_light,
        "",
        "## Labs",
        "",
        "Work through the labs in order; each one turns exactly its own tests green.",
        "",
    ]
    for lab in manifest.labs:
        noun = "test" if lab.tests == 1 else "tests"
        extra = ", optional: not counted" if lab.optional else ""
        lines += [
            f"### Lab {lab.id} · {lab.title} ({lab.tests} {noun}{extra})",
            "",
            f"- edit: {', '.join(f'`{path}`' for path in lab.files)}",
            f"- notebook: `notebooks/{lab.notebook}` ({lab.heading})",
            f"- hint: {lab.hint}",
            f"- check it: `{lab_command(manifest, lab.id)}`",
            f"- or with plain pytest: `python3 -m pytest {_tests_dir(manifest)} -k {lab.select}`",
            "",
        ]
    lines += [
        "## Checking everything",
        "",
        f"`checkpoint {manifest.chapter}` run anywhere inside this directory prints the card, "
        "each lab's `passed/total` and the evidence line; it exits 0 only when all "
        f"{manifest.total_tests} pass. Expected at the end: {card.evidence}",
        "",
        f"Starting over? {card.practice} makes a new directory; do not reuse a modified scaffold.",
        "",
    ]
    if notebooks:
        lines += ["## Notebooks", ""]
        lines += [f"- `{path}`" for path in notebooks]
        lines += [""]
    lines += [
        "## Fingerprint",
        "",
        f"This workspace began from parent `{parent}`; `.course-workspace.toml` keeps it so an "
        "instructor can tell which scaffold you started from.",
        "",
    ]
    return "\n".join(lines)


def _tests_dir(manifest: Manifest) -> str:
    return manifest.focused_tests.rpartition("/")[0] or manifest.focused_tests
