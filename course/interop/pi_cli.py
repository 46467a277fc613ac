"""``session-log import``: a Pi session file in, a chapter JSONL log out, the report printed."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from pathlib import Path

from .chapter import SessionEntryError, SessionPathError, SessionStoreError
from .pi_format import PiFormatError
from .pi_import import ImportedSession, import_pi_session, write_atomically, write_chapter_log
from .pi_report import MAPPING_KINDS, POLICIES, SPLIT_TURNS, PiImportError

PROG = "session-log import"
EXIT_OK, EXIT_REJECTED, EXIT_ERROR = 0, 1, 2
"""0: written; 1: ``strict`` and the chapter's rules reject the session; 2: bad input or output."""


def parser() -> argparse.ArgumentParser:
    command = argparse.ArgumentParser(
        prog=PROG,
        description="Import a Pi coding-agent session (format v1 to v3, plain or .gz) as a "
        "chapter session log.",
        epilog="exit status: 0 written; 1 the chapter's rules reject the session under "
        "--repair strict (the message names the line and id); 2 unreadable input or an "
        "output that exists.",
    )
    command.add_argument("pi_file", type=Path, help="the Pi session file (.jsonl or .jsonl.gz)")
    command.add_argument(
        "-o", "--output", type=Path, required=True, help="the chapter log to write (.jsonl)"
    )
    command.add_argument(
        "--repair",
        choices=POLICIES,
        default="strict",
        help="what to do with a damaged line, an unknown entry type or what the chapter's "
        "rules reject: strict stops (the default), synthesize adds the missing results, drop "
        "removes unanswered calls; both read what a damaged line holds and keep unknown entries "
        "as data",
    )
    command.add_argument(
        "--split-turn",
        choices=SPLIT_TURNS,
        default="turn-start",
        help="where the kept range of a compaction that splits a turn starts: the turn's user "
        "message (the default: everything Pi sends is sent) or the next user message (the "
        "turn is left to the summary)",
    )
    command.add_argument(
        "--keep-failed",
        action="store_true",
        help="keep aborted and failed assistant messages as messages (Pi never sends them; "
        "by default they are kept as data)",
    )
    command.add_argument(
        "--force", action="store_true", help="replace OUTPUT (and REPORT) if they exist"
    )
    command.add_argument(
        "--report", type=Path, help="also write every report item as JSON to this file"
    )
    return command


def main(argv: Sequence[str] | None = None) -> int:
    """Run the import; every failure is one line on stderr and an exit status, no traceback."""
    args = parser().parse_args(argv)
    try:
        if args.output.resolve() == args.pi_file.resolve():
            raise FileExistsError(f"{args.output}: is the Pi session being imported")
        imported = import_pi_session(
            args.pi_file,
            repair=args.repair,
            split_turn=args.split_turn,
            keep_failed=args.keep_failed,
        )
        if args.report is not None and args.report.exists() and not args.force:
            raise FileExistsError(f"{args.report}: already exists (pass --force to replace it)")
        write_chapter_log(imported.entries, args.output, force=args.force)
        if args.report is not None:
            data = json.dumps(imported.report.to_json(), ensure_ascii=False, indent=1) + "\n"
            write_atomically(args.report, data.encode("utf-8"), force=args.force)
    except PiImportError as error:
        return _fail(error.explain("--repair"), EXIT_REJECTED)
    except FileExistsError as error:
        return _fail(str(error).replace("pass force", "pass --force"), EXIT_ERROR)
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
        f"{source} (Pi v{report.source_version}) -> {output}: {len(imported.entries):,} entries, "
        f"active path {len(imported.path):,} entries ending at {imported.leaf_id}",
    ]
    repairs = report.repairs
    lines.append(f"repair {report.policy}: {_items(len(repairs))}")
    lines.extend(f"  {item}" for item in repairs)
    split = report.of_kind("split_turn")
    if split:
        lines.append(f"split turn {report.split_turn}: {_items(len(split))}")
        lines.extend(f"  {item}" for item in split)
    counts = report.counts()
    mapping = [f"{kind} {counts[kind]:,}" for kind in MAPPING_KINDS if kind in counts]
    lines.append(f"mapping: {', '.join(mapping) if mapping else 'nothing lost'}")
    return "\n".join(lines)


def _items(count: int) -> str:
    return f"{count} item{'s' * (count != 1)}"
