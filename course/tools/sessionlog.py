"""Command line for JSONL session logs: check one, set its torn tail aside, import one from Pi."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

from ..fields import escape_surrogates
from ..jsonl import read_jsonl, repair_jsonl
from ..stores import SessionStoreError


def say(text: str, *, error: bool = False) -> None:
    """Print a line that may quote a path or an id: lone surrogates are escaped, never fatal."""
    print(escape_surrogates(text), file=sys.stderr if error else sys.stdout)


def check(path: Path) -> int:
    """Print what recovery finds; exit 1 if the log needs a repair."""
    recovered = read_jsonl(path)
    say(f"{path}: {len(recovered.entries)} committed entries")
    for warning in recovered.warnings:
        say(f"warning: {warning}")
    if recovered.has_uncommitted_tail:
        say(f"run: session-log repair {path}")
        return 1
    return 0


def repair(path: Path) -> int:
    """Set a torn tail aside into ``<log>.torn-N``; committed lines are never touched."""
    result = repair_jsonl(path)
    if result.backup is None:
        say(f"{path}: nothing to repair")
    else:
        say(
            f"{path}: moved {result.removed_bytes} uncommitted bytes (line {result.line}) "
            f"to {result.backup}; the log accepts appends again"
        )
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    """``session-log check LOG``, ``session-log repair LOG`` or ``session-log import …``."""
    arguments = list(sys.argv[1:] if argv is None else argv)
    if arguments[:1] == ["import"]:
        from ..interop.pi_cli import main as import_main

        return import_main(arguments[1:])
    parser = argparse.ArgumentParser(
        prog="session-log",
        description=__doc__,
        epilog="session-log import PI_FILE -o OUT.jsonl [--repair strict|synthesize|drop] "
        "[--split-turn turn-start|next-user] [--keep-failed]: see session-log import --help",
    )
    parser.add_argument("command", choices=("check", "repair"))
    parser.add_argument("log", type=Path)
    args = parser.parse_args(arguments)
    if not args.log.is_file():
        say(f"session-log: {args.log}: no such file", error=True)
        return 2
    try:
        return check(args.log) if args.command == "check" else repair(args.log)
    except SessionStoreError as error:
        say(f"session-log: {error}", error=True)
        return 2


if __name__ == "__main__":
    raise SystemExit(main())
