"""LEARNING.md: the page a new workspace opens with, written from the manifest."""

from __future__ import annotations

import shlex
from collections.abc import Sequence

from ..locale import current_edition, translations
from ..sandboxed.commands import BY_NAME, Commands, key_legend
from .hints import HINTS_FILE
from .kit import short
from .manifest import Manifest, translated


def checkpoint_command(
    manifest: Manifest, *options: str, practice: str | None = None, commands: Commands = BY_NAME
) -> str:
    """A checkpoint command line (in a workspace, or on ``practice``) with ``options``."""
    where = f" --practice {shlex.quote(practice)}" if practice else ""
    return " ".join([f"{commands.checkpoint} {manifest.chapter}{where}", *options])


def lab_command(
    manifest: Manifest, lab_id: str, practice: str | None = None, commands: Commands = BY_NAME
) -> str:
    """The checkpoint command that runs one lab (in a workspace, or on ``practice``)."""
    return checkpoint_command(manifest, "--lab", lab_id, practice=practice, commands=commands)


def practice_command(manifest: Manifest, edition: str, commands: Commands = BY_NAME) -> str:
    """The practice command that makes a new workspace like this one: same chapter, edition."""
    return f"{commands.practice} {manifest.chapter} --lang {edition}"


def render_learning(
    manifest: Manifest,
    parent: str,
    notebooks: Sequence[str],
    commands: Commands = BY_NAME,
    edition: str | None = None,
) -> str:
    """The workspace's LEARNING.md, manifest's text included, in ``edition`` (else the current)."""
    edition = edition or current_edition()
    catalog = translations(edition)
    _, ngettext = catalog.gettext, catalog.ngettext
    manifest = translated(manifest, _)
    card = manifest.card
    learner_files = _(", ").join(f"`{f.path}`" for f in manifest.files_with_role("learner"))
    checkpoint = checkpoint_command(manifest, commands=commands)
    blocks = [
        f"# {card.title}",
        _(
            "This is a practice workspace for chapter {chapter}, {title}. Your code is the "
            "`{package}` package: you edit {files}; the other modules are given. The focused "
            "tests in `{tests}` exercise your package, never the kit's reference."
        ).format(
            chapter=manifest.chapter,
            title=manifest.title,
            package=manifest.package,
            files=learner_files,
            tests=manifest.focused_tests,
        ),
        _("Scaffold: parent `{fingerprint}` ({parent}).").format(
            fingerprint=short(parent), parent=card.parent
        ),
        _("## What to know first"),
        card.know_before,
        _("## First step"),
        card.first_step,
        _("## First red light"),
        card.first_red_light,
        _("## Labs"),
        _("Work through the labs in order; each one turns exactly its own tests green."),
    ]
    tests = manifest.focused_tests.rpartition("/")[0] or manifest.focused_tests
    for lab in manifest.labs:
        if lab.optional:
            head = ngettext(
                "### Lab {lab} · {title} ({count} test, optional: not counted)",
                "### Lab {lab} · {title} ({count} tests, optional: not counted)",
                lab.tests,
            )
        else:
            head = ngettext(
                "### Lab {lab} · {title} ({count} test)",
                "### Lab {lab} · {title} ({count} tests)",
                lab.tests,
            )
        files = _(", ").join(f"`{path}`" for path in lab.files)
        notebook = _("- notebook: `{notebook}` ({heading})")
        check = lab_command(manifest, lab.id, commands=commands)
        plain = f"{commands.python} -m pytest {tests} -k {lab.select}"
        ask = checkpoint_command(manifest, "--lab", lab.id, "--hint", commands=commands)
        bullets = [
            _("- goal: {goal}").format(goal=lab.goal),
            _("- in the chapter: the section “{section}”").format(
                section=lab.in_edition(edition).section
            ),
            _("- edit: {files}").format(files=files),
            notebook.format(notebook=f"notebooks/{lab.notebook}", heading=lab.heading),
            _("- check it: `{command}`").format(command=check),
            _("- or with plain pytest: `{command}`").format(command=plain),
            _("- stuck? `{command}` opens its hints one level at a time").format(command=ask),
        ]
        blocks += [head.format(lab=lab.id, title=lab.title, count=lab.tests), "\n".join(bullets)]
    blocks += [
        _("## Checking everything"),
        _(
            "`{checkpoint}` run anywhere inside this directory shows each lab's `passed/total` "
            "and the evidence line; it exits 0 only when all {total} pass. Expected at the "
            "end: {evidence}"
        ).format(checkpoint=checkpoint, total=manifest.total_tests, evidence=card.evidence),
        _(
            "`{checkpoint} --watch` stays open and re-runs the lab you are on each time you "
            "save a file of your package, then moves on when that lab turns green (keys: "
            "{keys})."
        ).format(checkpoint=checkpoint, keys=key_legend(_)),
        _(
            "Help waits until you ask for it, one level at a time: 1 the idea and the "
            "chapter's section, 2 a strategy in words, 3 the steps. `{checkpoint} --hint` "
            'opens the next level for the lab at hand (`h` in the watch, `hint("{lab}")` in a '
            "notebook). `{file}` records the levels you opened: your instructor sees them as "
            "information, never as a penalty."
        ).format(checkpoint=checkpoint, file=HINTS_FILE, lab=manifest.required_labs[0].id),
        _(
            "The workspace's `pytest.ini` turns off pytest's plugin autoloading (the installed "
            "plugins cost seconds at every start and the focused tests need none), so plain "
            "pytest starts in well under a second."
        ),
    ]
    if manifest.probes is not None:
        example = manifest.required_labs[0]
        case = f"{example.id}#001"
        blocks.append(
            _(
                "Plain pytest also runs each lab's probe cases (`{test}`): the chapter's "
                "generated inputs with the reference's answers, the ones `{checkpoint}` checks, "
                "so both name the same failing cases. They count in no lab's `passed/total`. A "
                "failing case shows its input, where your answer parts from the reference's, and "
                "a command that replays it on your saved code, with your code's frames when it "
                "raises: `{checkpoint} --replay {case}`."
            ).format(checkpoint=checkpoint, test=f"test_{example.select}_probe[{case}]", case=case)
        )
    if manifest.review is not None:
        blocks += [
            _("## After the last lab: the closing review"),
            _(
                "`{command}` asks the chapter's closing questions with your code's own answers "
                "beside them, and checks the demonstrations the chapter asks for on your "
                "package."
            ).format(command=checkpoint_command(manifest, "--review", commands=commands)),
        ]
    blocks.append(
        _(
            "Starting over? `{command}` makes a new directory; do not reuse a modified scaffold."
        ).format(command=practice_command(manifest, edition or current_edition(), commands))
    )
    if notebooks:
        blocks += [_("## Notebooks"), "\n".join(f"- `{path}`" for path in notebooks)]
    blocks += [
        _("## Fingerprint"),
        _(
            "This workspace began from parent `{fingerprint}`; `.course-workspace.toml` keeps "
            "it so an instructor can tell which scaffold you started from."
        ).format(fingerprint=parent),
    ]
    return "\n\n".join(blocks) + "\n"
