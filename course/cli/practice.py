"""``practice CHAPTER [DIR]``: lay out a fresh practice workspace and say what to run next."""

from __future__ import annotations

import argparse
import shlex
import sys
from collections.abc import Sequence
from pathlib import Path

from ..grading.platforms.github import WORKFLOW, workflow
from ..harness.carry import carry
from ..harness.editions import in_edition
from ..harness.kit import KitError, chapter_fingerprints, kit_root, short
from ..harness.learning import checkpoint_command, lab_command
from ..harness.manifest import Manifest, ManifestError, load_manifest
from ..harness.workspace import create_workspace, default_directory
from ..locale import EDITIONS, EditionError, unquoted
from ..locale import gettext as _
from ..sandboxed.commands import shell_commands
from ..sandboxed.marker import WorkspaceError, read_workspace, speak
from .exits import quiet_on_closed_pipe
from .options import HelpFormatter, chapter_help, given

USAGE_ERROR = 2


def parser() -> argparse.ArgumentParser:
    """The command line, its help in this process's edition (see ``main``)."""
    p = argparse.ArgumentParser(
        prog="practice",
        formatter_class=HelpFormatter,
        description=_(
            "Create a practice workspace: your own copy of the chapter's starters, its focused "
            "tests wired to that copy, and {learning}."
        ).format(learning="LEARNING.md"),
    )
    p.add_argument("chapter", help=chapter_help())
    p.add_argument(
        "directory",
        nargs="?",
        help=_(
            "where to create it (must be new or empty; default: a fresh {folder} directory here)"
        ).format(folder="practice-CHAPTER"),
    )
    p.add_argument(
        "--lang",
        metavar="EDITION",
        help=_(
            "the workspace's language edition: {editions}; its notebooks, {learning} and every "
            "message (default: the edition of the workspace it is run in, else from LANG, else "
            "English)"
        ).format(editions=_(", ").join(EDITIONS), learning="LEARNING.md"),
    )
    p.add_argument(
        "--from",
        dest="source",
        metavar="OLD",
        help=_(
            "move the lab code of the workspace OLD (begun from an older scaffold) into the new "
            "one: each lab function you wrote, and your own helpers, in place of the new stubs; "
            "what the kit gives stays the kit's"
        ),
    )
    p.add_argument(
        "--actions",
        action="store_true",
        help=_(
            "also write {workflow}: GitHub Actions grading each lab on every push, a check run "
            "and a summary per lab (for a template repository)"
        ).format(workflow=WORKFLOW),
    )
    p.add_argument(
        "--classroom",
        action="store_true",
        help=_("GitHub Classroom is sunset: writes the workflow of --actions instead"),
    )
    # written out: ``parse_intermixed_args`` would cut ``len("usage: ")`` characters off the
    # translated usage line
    p.usage = p.format_usage().removeprefix(_("usage: ")).strip()
    return p


def move_lab_code(manifest: Manifest, old: Path, new: Path) -> list[str]:
    """Each learner file of the workspace ``old`` carried into the fresh ``new`` (``carry``);
    a file that does not parse is copied whole. What was done, a line per file."""
    read_workspace(old.resolve(), manifest)  # a workspace of this chapter, or WorkspaceError
    lines = []
    for file in manifest.files_with_role("learner"):
        source = old / file.path
        if not source.is_file():
            lines.append(_("{path}: not in {old}; the starter's").format(path=file.path, old=old))
            continue
        module = Path(file.path).stem
        labs = {f.function for lab in manifest.labs for f in lab.functions if f.module == module}
        theirs = source.read_text(encoding="utf-8")
        target = new / file.path
        carried = carry(theirs, target.read_text(encoding="utf-8"), labs, file.path)
        if carried is None:
            target.write_text(theirs, encoding="utf-8")
            said = _("{path}: not valid Python, copied whole (the kit's given code is not added)")
            lines.append(said.format(path=file.path))
            continue
        target.write_text(carried.text, encoding="utf-8")
        said = _("{path}: your {labs} moved in; your own {added} kept; the rest is the kit's")
        lines.append(
            said.format(
                path=file.path,
                labs=_(", ").join(carried.labs) or _("(none written)"),
                added=_(", ").join(carried.added) or _("(nothing else)"),
            )
        )
    return lines


def main(argv: Sequence[str] | None = None) -> int:
    return quiet_on_closed_pipe(lambda: _run(argv))


def _run(argv: Sequence[str] | None) -> int:
    words = sys.argv[1:] if argv is None else list(argv)
    requested = given(words, "--lang")
    source = given(words, "--from")
    try:  # before parsing, so that even --help speaks it: the workspace moved, else the one here
        edition = speak(requested, Path(source) if source else Path.cwd())
    except EditionError as error:
        parser().error(str(error))
    args = parser().parse_intermixed_args(words)  # options before or after the directory
    commands = shell_commands()
    try:
        if args.lang != requested or args.source != source:  # an option was abbreviated
            edition = speak(args.lang, Path(args.source) if args.source else Path.cwd())
        source_manifest = load_manifest(args.chapter)
        if edition not in source_manifest.notebooks:
            edition = source_manifest.default_edition
        manifest = in_edition(source_manifest)
        kit = kit_root()
        target = Path(args.directory) if args.directory else default_directory(manifest, Path.cwd())
        create_workspace(source_manifest, kit, target, edition, commands)
        moved = move_lab_code(source_manifest, Path(args.source), target) if args.source else []
        if args.classroom:
            sunset = _(
                "practice: GitHub Classroom is sunset (discontinued 28 August 2026); writing "
                "{workflow} for plain GitHub Actions instead (see docs/grading.md, or "
                "course-kit classroom50 for Classroom 50)"
            )
            print(unquoted(sunset.format(workflow=WORKFLOW)), file=sys.stderr)
        if args.actions or args.classroom:
            path = target / WORKFLOW
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(workflow(manifest), encoding="utf-8")
        parent = short(chapter_fingerprints(manifest, kit).starter)
    except (ManifestError, KitError, WorkspaceError, EditionError) as error:
        print(_("{tool}: {error}").format(tool="practice", error=error), file=sys.stderr)
        return USAGE_ERROR
    root = target.resolve()
    created = _("Created a chapter {chapter} practice workspace in {root}")
    print(created.format(chapter=manifest.chapter, root=root))
    parent_line = _("  parent {fingerprint}: {parent}")
    print(unquoted(parent_line.format(fingerprint=parent, parent=manifest.card.parent)))
    for file in manifest.files_with_role("learner"):
        labs = _(", ").join(lab.id for lab in manifest.labs if file.path in lab.files)
        print(_("  yours to edit: {path} (Lab {labs})").format(path=file.path, labs=labs))
    print(_("  focused tests: {path}").format(path=manifest.focused_tests))
    for line in moved:
        print(f"  {line}")
    print(_("  start with:    {path}").format(path="LEARNING.md"))
    if args.actions or args.classroom:
        print(unquoted(_("  autograding:   {path} (GitHub Actions)").format(path=WORKFLOW)))
    print()
    print(_("Next, run:"))
    first = lab_command(manifest, manifest.labs[0].id, commands=commands)
    print(f"  cd {shlex.quote(str(root))} && {first}")
    watching = checkpoint_command(manifest, "--watch", commands=commands)
    print(_("or, to re-run the lab at hand on every save: {command}").format(command=watching))
    return 0


if __name__ == "__main__":
    sys.exit(main())
