"""LEARNING.md: the page a new workspace opens with, written from the manifest."""

from __future__ import annotations

import shlex
from collections.abc import Sequence

from .commands import BY_NAME, Commands, key_legend
from .kit import short
from .manifest import Manifest


def checkpoint_command(
    manifest: Manifest,
    *options: str,
    practice: str | None = None,
    commands: Commands = BY_NAME,
) -> str:
    """A checkpoint command line (in a workspace, or on ``practice``) with ``options``."""
    where = f" --practice {shlex.quote(practice)}" if practice else ""
    return " ".join([f"{commands.checkpoint} {manifest.chapter}{where}", *options])


def lab_command(
    manifest: Manifest, lab_id: str, practice: str | None = None, commands: Commands = BY_NAME
) -> str:
    """The checkpoint command that runs one lab (in a workspace, or on ``practice``)."""
    return checkpoint_command(manifest, "--lab", lab_id, practice=practice, commands=commands)


def render_learning(
    manifest: Manifest, parent: str, notebooks: Sequence[str], commands: Commands = BY_NAME
) -> str:
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
            f"- check it: `{lab_command(manifest, lab.id, commands=commands)}`",
            f"- or with plain pytest: `{commands.python} -m pytest {_tests_dir(manifest)} "
            f"-k {lab.select}`",
            "",
        ]
    checkpoint = checkpoint_command(manifest, commands=commands)
    lines += [
        "## Checking everything",
        "",
        f"`{checkpoint}` run anywhere inside this directory shows each lab's `passed/total` "
        "and the evidence line; it exits 0 only when all "
        f"{manifest.total_tests} pass. Expected at the end: {card.evidence}",
        "",
        f"`{checkpoint} --watch` stays open and re-runs the lab you are on each time you save a "
        f"file of your package, then moves on when that lab turns green (keys: {key_legend()}).",
        "",
        "The workspace's `pytest.ini` turns off pytest's plugin autoloading (the installed "
        "plugins cost seconds at every start and the focused tests need none), so plain pytest "
        "starts in well under a second.",
        "",
    ]
    if manifest.review is not None:
        lines += [
            "## After the last lab: the closing review",
            "",
            f"`{checkpoint_command(manifest, '--review', commands=commands)}` asks the "
            "chapter's closing questions with your code's own answers beside them, and checks "
            "the demonstrations the chapter asks for on your package.",
            "",
        ]
    lines += [
        f"Starting over? `{commands.practice} {manifest.chapter}` makes a new directory; do not "
        "reuse a modified scaffold.",
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
