"""``checkpoint CHAPTER``: print the card, run the focused tests lab by lab, report the evidence."""

from __future__ import annotations

import argparse
import json
import math
import os
import signal
import sys
from collections.abc import Callable, Sequence
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, TextIO, TypeVar

from ..grading.intake.door import Door, Found, speak_for
from ..grading.platforms.visibility import ROOT as GRADESCOPE_ROOT
from ..grading.platforms.visibility import VISIBILITIES, Visibility, visibility
from ..grading.verdict.hidden import HiddenTestError, read_hidden
from ..harness.gradeline import covers_chapter, grade_lines
from ..harness.hints import (
    NONE_OPENED,
    HintsError,
    Opened,
    labs_by_id,
    open_next_hint,
    read_hints,
    render_hint,
)
from ..harness.kit import KitError, kit_root
from ..harness.learning import checkpoint_command
from ..harness.manifest import Lab, Manifest, ManifestError, load_manifest
from ..harness.report import (
    render_card,
    render_lab,
    render_short_card,
    render_summary,
)
from ..harness.results import CheckpointResult, ReportError, lab_to_work_on
from ..harness.style import Style, style_for
from ..harness.supervisor import Limits
from ..locale import EDITIONS, EditionError, checked
from ..locale import gettext as _
from ..sandboxed.commands import BY_NAME, Commands, key_legend, shell_commands
from ..sandboxed.marker import WorkspaceError
from ..sandboxed.status import Status
from .exits import INTERRUPTED, quiet_on_closed_pipe
from .locate import Where, around, locate, print_edits, print_verdict, to_check
from .options import HelpFormatter, chapter_help, given

if TYPE_CHECKING:
    from ..grading.verdict.engine import GradingOptions, SandboxMode

# The grading machinery, the roster and Gradescope, --watch (watchfiles), --review and --replay
# are imported where a command line asks for them, after it is parsed: a bad command line, or a
# grading of one workspace, pays for no other door.

__all__ = ["main", "parser"]

USAGE_ERROR = 2
T = TypeVar("T")


def _parsed(convert: Callable[[str], T], text: str, refusal: str) -> T:
    """``convert(text)``, its ``ValueError`` an argparse error saying ``refusal``."""
    try:
        return convert(text)
    except ValueError as error:
        raise argparse.ArgumentTypeError(refusal.format(text=text, error=error)) from None


def positive_seconds(text: str) -> float:
    """An argparse type: a finite number of seconds greater than zero."""
    value = _parsed(float, text, _("not a number of seconds: {text!r}"))
    if not math.isfinite(value) or value <= 0:
        raise argparse.ArgumentTypeError(
            _("must be a positive number of seconds, got {text}").format(text=text)
        )
    return value


def positive_count(text: str) -> int:
    """An argparse type: a whole number greater than zero."""
    value = _parsed(int, text, _("not a whole number: {text!r}"))
    if value <= 0:
        raise argparse.ArgumentTypeError(_("must be at least 1, got {text}").format(text=text))
    return value


def canvas_header(text: str) -> str:
    """An argparse type: a Canvas assignment's column header, ``NAME (ID)``."""
    from ..grading.records.exports import canvas_column

    return _parsed(canvas_column, text, "{error}")


def gradescope_visibility(text: str) -> Visibility:
    """An argparse type: one of Gradescope's visibilities."""
    return _parsed(visibility, text, "{error}")


def parser() -> argparse.ArgumentParser:
    """The command line, its help in this process's edition (see ``choose_edition``)."""
    p = argparse.ArgumentParser(
        prog="checkpoint",
        formatter_class=HelpFormatter,
        description=_(
            "Run a chapter's focused tests lab by lab: on the reference by default, on a "
            "practice workspace with --practice (the default inside one), or on every "
            "workspace of a class with --roster."
        ),
    )
    p.add_argument("chapter", help=chapter_help())
    target = p.add_mutually_exclusive_group()
    target.add_argument("--practice", metavar="DIR", help=_("check the practice workspace DIR"))
    target.add_argument(
        "--roster",
        metavar="DIR",
        help=_(
            "grade every submission in DIR: folders, archives (.zip, .tar.gz, .tgz), git "
            "repositories"
        ),
    )
    target.add_argument(
        "--gradescope",
        metavar="ROOT",
        help=_(
            "grade the submission in ROOT/submission as Gradescope's autograder does and write "
            "ROOT/results/results.json (ROOT is {root} on Gradescope; see course-kit gradescope)"
        ).format(root=GRADESCOPE_ROOT),
    )
    target.add_argument(
        "--report",
        metavar="FILE",
        help=_(
            "show the labs of a report saved with --json, and exit 0 only if every lab shown "
            "passed (with --lab: that lab; GitHub Classroom's autograding scores labs this way)"
        ),
    )
    mode = p.add_mutually_exclusive_group()
    mode.add_argument(
        "--watch",
        action="store_true",
        help=_(
            "stay open: re-run the lab at hand each time a file of the package is saved "
            "(keys: {keys})"
        ).format(keys=key_legend()),
    )
    mode.add_argument(
        "--review",
        action="store_true",
        help=_(
            "the chapter's closing review: its questions beside your code's answers, and its "
            "demonstrations checked on your code"
        ),
    )
    mode.add_argument(
        "--replay",
        metavar="CASE",
        help=_(
            "run one probe case (its id, as a failure names it: LAB#NUMBER) on the saved code, "
            "showing its input, the difference and your code's frames"
        ),
    )
    mode.add_argument(
        "--hint",
        action="store_true",
        help=_(
            "show the next level of help for the lab at hand (the first lab not passed; with "
            "--lab, that lab): 1 the idea and a section to read, 2 a strategy, 3 the steps"
        ),
    )
    p.add_argument(
        "--lab", action="append", default=[], metavar="ID", help=_("run only this lab (repeatable)")
    )
    p.add_argument("--json", metavar="FILE", help=_("also write machine-readable results to FILE"))
    p.add_argument(
        "--lang",
        metavar="EDITION",
        help=_(
            "the language to speak: {editions} (default: the workspace's edition, else LANG)"
        ).format(editions=_(", ").join(EDITIONS)),
    )
    p.add_argument(
        "--timeout",
        type=positive_seconds,
        default=Limits.test_seconds,
        metavar="SECONDS",
        help=_("wall-clock limit per test, above 0 (default {seconds:g})").format(
            seconds=Limits.test_seconds
        ),
    )
    card = p.add_mutually_exclusive_group()
    card.add_argument(
        "--card",
        action="store_true",
        help=_("print the full checkpoint card (in a workspace the default is a short one)"),
    )
    card.add_argument("--no-card", action="store_true", help=_("do not print the card"))
    p.add_argument(
        "--gradebook", metavar="DIR", help=_("with --roster: where gradebook.csv/.json go (DIR)")
    )
    p.add_argument(
        "--jobs",
        type=positive_count,
        default=2,
        metavar="N",
        help=_("with --roster: workspaces at a time"),
    )
    p.add_argument(
        "--workspace-timeout",
        type=positive_seconds,
        metavar="SECONDS",
        help=_("with --roster: limit per workspace (default: every test at its limit, plus 60)"),
    )
    p.add_argument(
        "--seed",
        type=int,
        metavar="N",
        help=_(
            "draw the probe cases with seed N instead of the chapter's own (every door uses "
            "the chapter's seed, so learners see the verdict you see unless you pass this)"
        ),
    )
    p.add_argument(
        "--audit-seed",
        type=int,
        metavar="N",
        help=_(
            "with --roster: also draw probe cases with seed N, which no workspace holds (default: "
            "the assignment file's, recorded in gradebook.json); they can fail a lab, never count"
        ),
    )
    p.add_argument(
        "--assignment",
        metavar="FILE",
        help=_(
            "with --roster or --gradescope: the assignment file keeping the audit seed "
            "(default for --roster: assignment-CHAPTER.toml beside the gradebook, made on "
            "first use; keep it to regrade)"
        ),
    )
    p.add_argument(
        "--names",
        metavar="PATTERN",
        help=_(
            "with --roster: take each learner's name from an entry's name with this regular "
            "expression's {group} group, matched from the start (Canvas: {example})"
        ).format(group="(?P<learner>...)", example="'(?P<learner>[^_]+)_'"),
    )
    p.add_argument(
        "--class-list",
        metavar="FILE",
        help=_(
            "with --roster: the class list, a CSV with the columns id, name and email: each row "
            "joined to its student, a row for each who submitted nothing, and the gradebook "
            "exported for Canvas and Moodle"
        ),
    )
    p.add_argument(
        "--zero-missing",
        action="store_true",
        help=_(
            "with --class-list: export 0 for a student who handed in nothing to grade (nothing "
            "at all, an empty submission, no lab file); without it their cell is blank, so the "
            "LMS keeps what it has. A submission that could not be read is always blank"
        ),
    )
    p.add_argument(
        "--canvas-column",
        metavar="HEADER",
        type=canvas_header,
        help=_(
            "with --class-list: the Canvas assignment to fill, as Canvas's own export names "
            "its column, NAME (ID), e.g. 'Week 3 lab (12345)' (default: a column Chapter N, "
            "which Canvas imports as a new assignment)"
        ),
    )
    p.add_argument(
        "--only",
        metavar="LEARNER",
        help=_(
            "with --roster: grade only LEARNER's submissions (a row's name in the gradebook; "
            "with --class-list, also a student's name or id) and put their rows in place of the "
            "old ones in the gradebook a whole run wrote"
        ),
    )
    p.add_argument(
        "--hidden",
        metavar="DIR",
        help=_("add the instructor tests DIR/test_*.py to the grade (learners never see them)"),
    )
    p.add_argument(
        "--instructor-visibility",
        type=gradescope_visibility,
        default="after_due_date",
        metavar="WHEN",
        help=_(
            "with --gradescope: when learners see the instructor tests' results: {choices} "
            "(default: %(default)s)"
        ).format(choices=_(", ").join(f"`{v}`" for v in VISIBILITIES)),
    )
    p.add_argument(
        "--unsandboxed",
        action="store_true",
        help=_(
            "grade without the bubblewrap sandbox (learner code then runs with your "
            "permissions; --roster refuses to run without the sandbox otherwise)"
        ),
    )
    return p


def choose_edition(requested: str | None, found: Found) -> str:
    """Speak ``requested`` (``--lang``), else the edition of the workspace ``found`` (the one
    checked), so that even ``--help`` speaks it. Raises ``EditionError``."""
    try:
        return speak_for(requested, found)
    except EditionError:
        speak_for(None, found)  # say which editions there are in the workspace's edition
        checked(requested or "")
        raise


def _check_combinations(p: argparse.ArgumentParser, args: argparse.Namespace) -> None:
    """Refuse options that do not go together (argparse exits with the usage and the error)."""
    if args.report and (args.json or args.watch or args.review or args.replay):
        p.error(
            _("--report shows a saved report; it takes no --json, --watch, --review or --replay")
        )
    if args.replay and (args.roster or args.lab or args.json):
        p.error(_("--replay runs one probe case; it takes no --roster, --lab or --json"))
    if (args.roster or args.gradescope) and (args.watch or args.review or args.replay):
        p.error(
            _("--roster and --gradescope grade; --watch, --review and --replay are for a workspace")
        )
    if args.review and (args.lab or args.json):
        p.error(_("--review runs the whole closing review; it takes no --lab or --json"))
    if args.hint and (args.roster or args.gradescope or args.report or args.json):
        p.error(
            _("--hint helps in a workspace; it takes no --roster, --gradescope, --report or --json")
        )
    if args.watch and args.json:
        p.error(_("--watch keeps running; it writes no --json"))
    if not args.roster and (args.gradebook or args.names):
        p.error(_("--gradebook and --names go with --roster"))
    if not args.roster and (args.class_list or args.only):
        p.error(_("--class-list and --only go with --roster"))
    if not args.class_list and (args.zero_missing or args.canvas_column):
        p.error(_("--zero-missing and --canvas-column go with --class-list"))
    if not (args.roster or args.gradescope) and (
        args.workspace_timeout is not None or args.audit_seed is not None or args.assignment
    ):
        p.error(
            _("--workspace-timeout, --audit-seed and --assignment go with --roster or --gradescope")
        )


def show_report(manifest: Manifest, path: Path, lab_ids: Sequence[str], out: TextIO) -> int:
    """Each lab of a saved report (those of ``lab_ids``, else the required ones); 0 only if
    every one passed. ``ReportError`` when the file is not such a report."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as error:
        raise ReportError(f"{path}: {error}") from None
    result = CheckpointResult.from_json(data, manifest)
    labs = [result.lab(lab_id) for lab_id in lab_ids] if lab_ids else list(result.required)
    missing = [lab_id for lab_id, lab in zip(lab_ids, labs, strict=False) if lab is None]
    if missing:
        raise ReportError(
            _("{path}: no lab {labs} in the report").format(path=path, labs=", ".join(missing))
        )
    shown = [lab for lab in labs if lab is not None]
    for lab in shown:
        print(render_lab(lab), file=out)
    for line in grade_lines(shown, covers_chapter(manifest, shown)):
        print(line, file=out)
    return 0 if shown and all(lab.status == Status.PASSED for lab in shown) else 1


def _refused(error: Exception) -> None:
    print(_("{tool}: {error}").format(tool="checkpoint", error=error), file=sys.stderr)


def _print_card(door: Door, whole: bool, commands: Commands) -> None:
    """The chapter's card: the short one in a workspace unless ``whole`` (``--card``)."""
    in_workspace = door.workspace is not None
    if in_workspace and not whole:
        print(render_short_card(door.manifest, commands))
    else:
        card = render_card(
            door.manifest, door.fingerprints, in_workspace=in_workspace, commands=commands
        )
        print(card)
    print()


def _watch(
    door: Door, where: Where, args: argparse.Namespace, style: Style, grading: GradingOptions
) -> int:
    from ..grading.verdict.engine import evaluate, for_learners
    from .watch import WatchLoop, watch

    manifest, limits = door.manifest, Limits(test_seconds=args.timeout)
    taken = [door.snapshot]  # the first run grades what print_edits looked at; a save, anew

    def run_all() -> CheckpointResult:
        snapshot = taken.pop() if taken else door.take_snapshot()
        result = evaluate(manifest, door.kit, door.root, [], limits, grading, snapshot)
        return for_learners(result, manifest, grading.hidden)

    loop = WatchLoop(manifest, run_all, sys.stdout, args.practice, grading.commands, style)
    loop.root = door.workspace.root if door.workspace is not None else None
    if args.lab:
        loop.current = manifest.lab(args.lab[0])
    return watch(loop, where.package_dir, beside=door.root)


def _review(door: Door, label: str, limits: Limits, style: Style, grading: GradingOptions) -> int:
    from .review import render_review, run_review

    if door.manifest.review is None:
        raise ManifestError(
            _("chapter {chapter} has no closing review").format(chapter=door.manifest.chapter)
        )
    print(_("Reviewing {where}").format(where=label), flush=True)
    result = run_review(door.manifest, door.kit, door.root, limits, grading, door.snapshot)
    print(render_review(result, style, opened_hints(door)))
    return 0 if result.ok else 1


def opened_hints(door: Door) -> Opened:
    """The hint levels the workspace has opened (none outside one, or where the record is
    unreadable: ``--hint`` names what is wrong with it)."""
    if door.workspace is None:
        return NONE_OPENED
    try:
        return read_hints(door.workspace.root, labs_by_id(door.manifest.labs))
    except (HintsError, OSError):
        return NONE_OPENED


def _hint(
    door: Door, args: argparse.Namespace, limits: Limits, grading: GradingOptions, out: TextIO
) -> int:
    """The next hint level for ``--lab``'s lab, else for the first lab not passed; recorded."""
    from ..grading.verdict.engine import evaluate, for_learners

    manifest, workspace = door.manifest, door.workspace
    if workspace is None:
        raise WorkspaceError(
            _(
                "--hint records the levels you open in your practice workspace: run it inside "
                "one, or pass --practice DIR"
            )
        )
    options = ["--lab", args.lab[0], "--hint"] if args.lab else ["--hint"]
    again = checkpoint_command(
        manifest, *options, practice=args.practice, commands=grading.commands
    )
    if args.lab:
        lab: Lab | None = manifest.lab(args.lab[0])
    else:
        result = evaluate(manifest, door.kit, door.root, [], limits, grading, door.snapshot)
        lab = lab_to_work_on(manifest, for_learners(result, manifest, grading.hidden))
    if lab is None:
        print(_("Every lab passes: no hint is needed."), file=out)
        return 0
    try:
        hint = open_next_hint(workspace.root, labs_by_id(manifest.labs), lab)
    except OSError as error:
        raise WorkspaceError(
            _("cannot record the hint in {root}: {error}").format(root=workspace.root, error=error)
        ) from None
    print("\n".join(render_hint(hint, again)), file=out)
    return 0


def _run(argv: Sequence[str] | None) -> int:
    words = sys.argv[1:] if argv is None else list(argv)
    practice, requested = given(words, "--practice"), given(words, "--lang")
    found = around(practice)
    try:
        edition = choose_edition(requested, found)
    except EditionError as error:
        parser().error(str(error))
    p = parser()
    args = p.parse_args(words)
    _check_combinations(p, args)
    from ..grading.verdict.engine import GradingOptions, SandboxUnavailable, evaluate, for_learners

    # SIGTERM becomes SystemExit, so the runner's cleanup kills the test process group
    signal.signal(signal.SIGTERM, lambda signum, frame: sys.exit(128 + signum))
    out, commands = sys.stdout, shell_commands()
    style = style_for(out, os.environ)
    if (args.practice, args.lang) != (practice, requested):  # an option was abbreviated
        found = around(args.practice)
        try:
            edition = speak_for(args.lang, found)
        except EditionError as error:
            p.error(str(error))
    try:
        door = Door(
            load_manifest(args.chapter), kit_root(), edition, to_check(args.practice, found)
        )
        manifest = door.manifest
        for lab_id in args.lab:
            manifest.lab(lab_id)
        hidden = read_hidden(Path(args.hidden), manifest) if args.hidden else None
        limits = Limits(test_seconds=args.timeout)
        # Someone else's work (--roster, --practice DIR) never runs unconfined unless asked;
        # a learner's own workspace may, saying so, where the sandbox cannot start.
        others = bool(args.roster or args.practice or args.gradescope)
        sandbox: SandboxMode = "off" if args.unsandboxed else "required" if others else "auto"
        grading = GradingOptions(sandbox=sandbox, hidden=hidden, seed=args.seed, commands=commands)
        if args.roster or args.gradescope:
            from ..grading.intake.folder import names_pattern
            from ..grading.records.classlist import read_class_list
            from ..grading.records.exports import Exports
            from ..grading.records.outputs import OutputsFailed
            from ..grading.roster import EmptyRoster, RosterOptions, grade_roster

            options = RosterOptions(
                lab_ids=tuple(args.lab),
                test_seconds=args.timeout,
                workspace_seconds=args.workspace_timeout,
                jobs=args.jobs,
                # what it writes is the learners' to read and run in their own workspaces: the
                # commands by their plain names, never the instructor's path to the kit
                grading=replace(grading, commands=BY_NAME),
                names=names_pattern(args.names) if args.names else None,
                audit_seed=args.audit_seed,
                assignment=Path(args.assignment).resolve() if args.assignment else None,
                class_list=read_class_list(Path(args.class_list)) if args.class_list else (),
                only=args.only or "",
                exports=Exports(args.zero_missing, args.canvas_column or ""),
            )
            if args.gradescope:
                from ..grading.platforms.gradescope import run_autograder

                # learners read it on the platform: commands by their plain names, in the chosen
                # edition; stdout is the instructor's
                # and in a container where bubblewrap cannot start, the fallback (engine.py)
                mode: SandboxMode = "off" if args.unsandboxed else "container"
                there = replace(grading, commands=BY_NAME, sandbox=mode)
                options = replace(options, grading=there)
                root, when = Path(args.gradescope), args.instructor_visibility
                written = run_autograder(manifest, door.kit, root, options, when, out)
                return 0 if written is not None else 1
            # the gradebook keeps the curriculum's own words; only the terminal is translated
            gradebook, roster = Path(args.gradebook or args.roster), Path(args.roster)
            try:
                grade_roster(door.source, door.kit, roster, gradebook, options, sys.stderr, out)
            except (EmptyRoster, OutputsFailed) as error:
                _refused(error)
                return 1
            return 0
        if args.report:
            return show_report(manifest, Path(args.report), args.lab, out)
        where = locate(door)
        if args.replay:
            from .replay import replay

            return replay(door, where, args.replay, out, commands, grading, limits)
        if args.hint:
            return _hint(door, args, limits, grading, out)
        said = print_edits(door, out)
        if args.review:
            return _review(door, where.label, limits, style, grading)
        if args.watch:
            return _watch(door, where, args, style, grading)
        if not args.no_card:
            _print_card(door, args.card, commands)
        print(_("Checking {where}").format(where=where.label), file=out, flush=True)
        result = evaluate(manifest, door.kit, door.root, args.lab, limits, grading, door.snapshot)
        shown = for_learners(result, manifest, hidden)
        print_verdict(shown, out, style, said)
    except SandboxUnavailable as error:
        print(
            _(
                "checkpoint: the sandbox cannot start ({error}); grading would run learners' "
                "code with your permissions. Install or fix bubblewrap, or pass --unsandboxed "
                "to grade without it."
            ).format(error=error),
            file=sys.stderr,
        )
        return USAGE_ERROR
    except (
        ManifestError,
        KitError,
        WorkspaceError,
        HiddenTestError,
        ReportError,
        HintsError,
    ) as error:
        _refused(error)
        return USAGE_ERROR
    print(file=out)
    print(render_summary(manifest, shown, args.practice, commands, opened_hints(door)), file=out)
    if args.json:
        path = Path(args.json)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(result.to_json(), indent=2, ensure_ascii=False) + "\n")
    return 0 if result.ok else 1


def main(argv: Sequence[str] | None = None) -> int:
    try:
        return quiet_on_closed_pipe(lambda: _run(argv))
    except KeyboardInterrupt:
        print(_("checkpoint: stopped"), file=sys.stderr)
        return INTERRUPTED


if __name__ == "__main__":
    sys.exit(main())
