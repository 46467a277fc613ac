"""Command line for JSONL session logs: check one, set its torn tail aside, import one from Pi."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

from ..fields import escape_surrogates
from ..interop.pi_format import CHUNK_BYTES, MAX_LINE_BYTES, MAX_SESSION_BYTES
from ..jsonl import read_jsonl, repair_jsonl
from ..locale import gettext as _
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
        return 0
    moved = f"moved {result.removed_bytes} uncommitted bytes (line {result.line})"
    say(f"{path}: {moved} to {result.backup}; the log accepts appends again")
    return 0


def beyond_caps(path: Path) -> str:
    """Why the log is too large to read (its size, or a line's length), or "" if it is not: the
    caps of the Pi import that writes such logs, scanned in chunks, so a log beyond them is
    refused before anything holds it whole."""
    size = path.stat().st_size
    if size > MAX_SESSION_BYTES:
        return _("{size:,} bytes, more than the {limit} MiB a session log may hold").format(
            size=size, limit=MAX_SESSION_BYTES >> 20
        )
    line, since = 1, 0
    with path.open("rb") as handle:
        for chunk in iter(lambda: handle.read(CHUNK_BYTES), b""):
            first = chunk.find(b"\n")
            if since + (len(chunk) if first == -1 else first) > MAX_LINE_BYTES:
                return _("line {line} is longer than {limit} MiB").format(
                    line=line, limit=MAX_LINE_BYTES >> 20
                )
            if first != -1:
                line += chunk.count(b"\n")
                since = len(chunk) - chunk.rfind(b"\n") - 1
            else:
                since += len(chunk)
    return ""


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
        try:
            too_large = beyond_caps(args.log)
        except OSError:  # the store's own reading below says why, in its words
            too_large = ""
        if too_large:
            refused = _("session-log: {path}: {problem}; not read")
            say(refused.format(path=args.log, problem=too_large), error=True)
            return 2
        return check(args.log) if args.command == "check" else repair(args.log)
    except SessionStoreError as error:
        say(f"session-log: {error}", error=True)
        return 2
    except OSError as error:
        say(f"session-log: {args.log}: {error.strerror or error}", error=True)
        return 2


if __name__ == "__main__":
    raise SystemExit(main())
