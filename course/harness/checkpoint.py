"""``checkpoint CHAPTER``: print the card, run the focused tests lab by lab, report the evidence."""

from __future__ import annotations

import argparse
import json
import os
import signal
import sys
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import FrameType
from typing import TextIO

from .grading import GradingOptions, SandboxMode, SandboxUnavailable, check_graded
from .hidden import HiddenTestError, read_hidden
from .kit import KitError, chapter_fingerprints, kit_root
from .manifest import Lab, Manifest, ManifestError, load_manifest
from .report import render_card, render_lab, render_summary
from .results import CheckpointResult, TestOutcome, summarize
from .roster import EmptyRoster, RosterOptions, grade_roster
from .runner import Limits, RunTarget, run_focused_tests
from .workspace import MARKER, WorkspaceError, find_workspace

USAGE_ERROR = 2


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="checkpoint",
        description="Run a chapter's focused tests lab by lab: on the reference by default, "
        "on a practice workspace with --practice (the default inside one), or on every "
        "workspace of a class with --roster.",
    )
    p.add_argument("chapter", help="chapter id, e.g. 11")
    target = p.add_mutually_exclusive_group()
    target.add_argument("--practice", metavar="DIR", help="check the practice workspace DIR")
    target.add_argument("--roster", metavar="DIR", help="grade every practice workspace under DIR")
    p.add_argument(
        "--lab", action="append", default=[], metavar="ID", help="run only this lab (repeatable)"
    )
    p.add_argument("--json", metavar="FILE", help="also write machine-readable results to FILE")
    p.add_argument(
        "--timeout",
        type=float,
        default=Limits.test_seconds,
        metavar="SECONDS",
        help=f"wall-clock limit per test (default {Limits.test_seconds:g})",
    )
    p.add_argument("--no-card", action="store_true", help="do not print the card")
    p.add_argument(
        "--gradebook", metavar="DIR", help="with --roster: where gradebook.csv/.json go (DIR)"
    )
    p.add_argument(
        "--jobs", type=int, default=2, metavar="N", help="with --roster: workspaces at a time"
    )
    p.add_argument(
        "--workspace-timeout",
        type=float,
        default=None,
        metavar="SECONDS",
        help="with --roster: limit per workspace (default: every test at its limit, plus 60)",
    )
    p.add_argument(
        "--hidden",
        metavar="DIR",
        help="add the instructor tests DIR/test_*.py to the grade (learners never see them)",
    )
    p.add_argument(
        "--unsandboxed",
        action="store_true",
        help="grade without the bubblewrap sandbox (learner code then runs with your "
        "permissions; --roster refuses to run without the sandbox otherwise)",
    )
    return p


@dataclass
class _LabPrinter:
    """Prints each lab's line as soon as its tests (and every earlier lab's) are done."""

    manifest: Manifest
    labs: Sequence[Lab]
    out: TextIO
    expected: dict[str, int] = field(default_factory=dict)
    done: dict[str, list[TestOutcome]] = field(default_factory=dict)
    printed: int = 0
    collected: bool = False

    def on_collected(self, tests: list[tuple[str, str, str | None]]) -> None:
        self.collected = True
        for _, _, lab in tests:
            if lab is not None:
                self.expected[lab] = self.expected.get(lab, 0) + 1
        self.flush()

    def on_result(self, outcome: TestOutcome) -> None:
        if outcome.lab is not None:
            self.done.setdefault(outcome.lab, []).append(outcome)
        self.flush()

    def _finished(self, lab: Lab) -> list[TestOutcome] | None:
        """The lab's outcomes once every collected test of it has ended, else None."""
        done = self.done.get(lab.id, [])
        if not self.collected or len(done) < self.expected.get(lab.id, 0):
            return None
        return done

    def flush(self, final: Sequence[TestOutcome] | None = None) -> None:
        """Print the next labs in order while they are finished (all of them with ``final``)."""
        while self.printed < len(self.labs):
            lab = self.labs[self.printed]
            if final is not None:
                mine: list[TestOutcome] | None = [t for t in final if t.lab == lab.id]
            else:
                mine = self._finished(lab)
            if mine is None:
                return
            result = summarize(self.manifest, [lab], mine, target="").labs[0]
            print(render_lab(result), file=self.out, flush=True)
            self.printed += 1


def _workspace(practice: str | None) -> Path | None:
    """The workspace to check: ``--practice DIR``, else the one holding the current directory."""
    root = Path(practice).resolve() if practice else find_workspace(Path.cwd())
    if root is not None and not os.path.lexists(root / MARKER):
        raise WorkspaceError(
            f"{root}: not a practice workspace ({MARKER} is missing); create one with practice"
        )
    return root


def run_checkpoint(
    manifest: Manifest,
    kit: Path,
    *,
    practice: str | None,
    lab_ids: Sequence[str],
    limits: Limits,
    out: TextIO,
    grading: GradingOptions | None = None,
) -> CheckpointResult:
    """Run and print the labs; returns the result (also for ``--json``).

    A workspace (or the reference with instructor tests) is graded from a pristine copy,
    confined, and decided by its probes; the reference alone runs in place.
    """
    labs = [manifest.lab(lab_id) for lab_id in lab_ids] or list(manifest.labs)
    printer = _LabPrinter(manifest, labs, out)
    root = _workspace(practice)
    grading = grading or GradingOptions()
    if root is not None or grading.hidden is not None:
        return check_graded(manifest, kit, root, labs, bool(lab_ids), limits, grading, out, printer)
    target = RunTarget(kit, manifest.test_files, manifest.reference)
    label = f"the reference ({manifest.reference}) in {kit}"
    print(f"Checking {label}", file=out, flush=True)
    outcomes, log = run_focused_tests(
        target,
        labs=[lab.id for lab in labs] if lab_ids else [],
        limits=limits,
        on_collected=printer.on_collected,
        on_result=printer.on_result,
    )
    printer.flush(final=outcomes)
    problems = log.collect_errors if not outcomes else []
    return summarize(manifest, labs, outcomes, target=label, problems=problems)


def _stop_on_sigterm() -> None:
    """Turn SIGTERM into SystemExit so the runner's cleanup kills the test process group."""

    def stop(signum: int, frame: FrameType | None) -> None:
        raise SystemExit(128 + signum)

    signal.signal(signal.SIGTERM, stop)


def main(argv: Sequence[str] | None = None) -> int:
    args = parser().parse_args(argv)
    _stop_on_sigterm()
    out = sys.stdout
    try:
        manifest = load_manifest(args.chapter)
        kit = kit_root()
        for lab_id in args.lab:
            manifest.lab(lab_id)
        hidden = read_hidden(Path(args.hidden), manifest) if args.hidden else None
        sandbox: SandboxMode = "off" if args.unsandboxed else "required" if args.roster else "auto"
        grading = GradingOptions(sandbox=sandbox, hidden=hidden)
        if args.roster:
            options = RosterOptions(
                lab_ids=tuple(args.lab),
                test_seconds=args.timeout,
                workspace_seconds=args.workspace_timeout,
                jobs=max(1, args.jobs),
                grading=grading,
            )
            gradebook = Path(args.gradebook or args.roster)
            grade_roster(manifest, kit, Path(args.roster), gradebook, options, sys.stderr, out)
            return 0
        if not args.no_card:
            print(render_card(manifest, chapter_fingerprints(manifest, kit)), file=out)
            print(file=out)
        result = run_checkpoint(
            manifest,
            kit,
            practice=args.practice,
            lab_ids=args.lab,
            limits=Limits(test_seconds=args.timeout),
            out=out,
            grading=grading,
        )
    except EmptyRoster as error:
        print(f"checkpoint: {error}", file=sys.stderr)
        return 1
    except SandboxUnavailable as error:
        print(
            f"checkpoint: the sandbox cannot start ({error}); grading would run learners' code "
            "with your permissions. Install or fix bubblewrap, or pass --unsandboxed to grade "
            "without it.",
            file=sys.stderr,
        )
        return USAGE_ERROR
    except (ManifestError, KitError, WorkspaceError, HiddenTestError) as error:
        print(f"checkpoint: {error}", file=sys.stderr)
        return USAGE_ERROR
    print(file=out)
    print(render_summary(manifest, result, args.practice), file=out)
    if args.json:
        path = Path(args.json)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(result.to_json(), indent=2, ensure_ascii=False) + "\n")
    return 0 if result.ok else 1


if __name__ == "__main__":
    sys.exit(main())
