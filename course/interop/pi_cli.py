"""``session-log import``: a Pi session file in, a chapter JSONL log out, the report printed."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from pathlib import Path

from course.locale import gettext as _
from course.locale import ngettext
from course.session import SessionEntryError, SessionPathError, SessionStoreError

from .pi_format import PiFormatError
from .pi_import import (
    ImportedSession,
    OutputExistsError,
    import_pi_session,
    write_atomically,
    write_chapter_log,
)
from .pi_report import MAPPING_KINDS, POLICIES, SPLIT_TURNS, PiImportError

PROG = "session-log import"
EXIT_OK, EXIT_REJECTED, EXIT_ERROR = 0, 1, 2
"""0: written; 1: ``strict`` and the chapter's rules reject the session; 2: bad input or output."""


def parser() -> argparse.ArgumentParser:
    command = argparse.ArgumentParser(
        prog=PROG,
        description=_(
            "Import a Pi coding-agent session (format v1 to v3, plain or .gz) as a "
            "chapter session log."
        ),
        epilog=_(
            "exit status: 0 written; 1 the chapter's rules reject the session under "
            "--repair strict (the message names the line and id); 2 unreadable input or an "
            "output that exists."
        ),
    )
    command.add_argument("pi_file", type=Path, help=_("the Pi session file (.jsonl or .jsonl.gz)"))
    command.add_argument(
        "-o", "--output", type=Path, required=True, help=_("the chapter log to write (.jsonl)")
    )
    command.add_argument(
        "--repair",
        choices=POLICIES,
        default="strict",
        help=_(
            "what to do with a damaged line, an unknown entry type or what the chapter's "
            "rules reject: strict stops (the default), synthesize adds the missing results, drop "
            "removes unanswered calls; both read what a damaged line holds and keep unknown "
            "entries as data"
        ),
    )
    command.add_argument(
        "--split-turn",
        choices=SPLIT_TURNS,
        default="turn-start",
        help=_(
            "where the kept range of a compaction that splits a turn starts: the turn's user "
            "message (the default: everything Pi sends is sent) or the next user message (the "
            "turn is left to the summary)"
        ),
    )
    command.add_argument(
        "--keep-failed",
        action="store_true",
        help=_(
            "keep aborted and failed assistant messages as messages (Pi never sends them; "
            "by default they are kept as data)"
        ),
    )
    command.add_argument(
        "--force", action="store_true", help=_("replace OUTPUT (and REPORT) if they exist")
    )
    command.add_argument(
        "--report", type=Path, help=_("also write every report item as JSON to this file")
    )
    return command


def main(argv: Sequence[str] | None = None) -> int:
    """Run the import; every failure is one line on stderr and an exit status, no traceback."""
    args = parser().parse_args(argv)
    try:
        if args.output.resolve() == args.pi_file.resolve():
            raise FileExistsError(
                _("{path}: is the Pi session being imported").format(path=args.output)
            )
        imported = import_pi_session(
            args.pi_file,
            repair=args.repair,
            split_turn=args.split_turn,
            keep_failed=args.keep_failed,
        )
        if args.report is not None and args.report.exists() and not args.force:
            raise OutputExistsError(args.report)
        write_chapter_log(imported.entries, args.output, force=args.force)
        if args.report is not None:
            data = json.dumps(imported.report.to_json(), ensure_ascii=False, indent=1) + "\n"
            write_atomically(args.report, data.encode("utf-8"), force=args.force)
    except PiImportError as error:
        return _fail(error.explain("--repair"), EXIT_REJECTED)
    except FileExistsError as error:
        explained = error.explain("--force") if isinstance(error, OutputExistsError) else None
        return _fail(explained or str(error), EXIT_ERROR)
    except (PiFormatError, SessionEntryError, SessionStoreError, SessionPathError) as error:
        return _fail(f"{args.pi_file}: {error}", EXIT_ERROR)
    except OSError as error:
        return _fail(f"{error.filename or args.output}: {error.strerror or error}", EXIT_ERROR)
    print(summary(imported, args.pi_file, args.output))
    return EXIT_OK


def _fail(message: str, status: int) -> int:
    print(f"{PROG}: {message}", file=sys.stderr)
    return status


def summary(imported: ImportedSession, source: Path, output: Path) -> str:
    """What was written: counts, every repair in full, the mapping's losses counted by kind."""
    report = imported.report
    lines = [
        _(
            "{source} (Pi v{version}) -> {output}: {entries} entries, active path {path} "
            "entries ending at {leaf}"
        ).format(
            source=source,
            version=report.source_version,
            output=output,
            entries=f"{len(imported.entries):,}",
            path=f"{len(imported.path):,}",
            leaf=imported.leaf_id,
        ),
    ]
    repairs, split = report.repairs, report.of_kind("split_turn")
    lines.append(
        ngettext(
            "repair {policy}: {count} item", "repair {policy}: {count} items", len(repairs)
        ).format(policy=report.policy, count=len(repairs))
    )
    lines.extend(f"  {item}" for item in repairs)
    if split:
        lines.append(
            ngettext(
                "split turn {choice}: {count} item",
                "split turn {choice}: {count} items",
                len(split),
            ).format(choice=report.split_turn, count=len(split))
        )
    lines.extend(f"  {item}" for item in split)
    counts = report.counts()
    mapping = [f"{kind} {counts[kind]:,}" for kind in MAPPING_KINDS if kind in counts]
    lines.append(
        _("mapping: {counts}").format(counts=", ".join(mapping))
        if mapping
        else _("mapping: nothing lost")
    )
    return "\n".join(lines)
