"""``course-kit``: the maintainer's command — starters, nbrefresh and crashtest as subcommands."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from ..harness.kit import KitError, kit_root
from ..harness.manifest import ManifestError, available_chapters, load_manifest
from .starters import StarterError, stale_starters, write_starters


def starters(check: bool) -> int:
    """Write (or with ``check``, compare) every chapter's starters against generation."""
    kit = kit_root()
    status = 0
    for chapter in available_chapters():
        manifest = load_manifest(chapter)
        if check:
            for path in stale_starters(manifest, kit):
                print(
                    f"course-kit: {path} differs from what `course-kit starters` generates from "
                    "the reference; regenerate it instead of editing it by hand",
                    file=sys.stderr,
                )
                status = 1
        else:
            for path in write_starters(manifest, kit):
                print(f"wrote {path}")
    if check and status == 0:
        print("starters: up to date with the reference")
    return status


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="course-kit", description=__doc__)
    sub = p.add_subparsers(dest="command", required=True, metavar="COMMAND")
    s = sub.add_parser("starters", help="generate starters/ from the reference and the manifest")
    s.add_argument(
        "--check", action="store_true", help="exit 1 naming every starter that is out of date"
    )
    sub.add_parser(
        "nbrefresh", help="re-run the notebooks and store deterministic outputs", add_help=False
    )
    sub.add_parser(
        "crashtest", help="kill JSONL writers at random and count lost entries", add_help=False
    )
    return p


def main(argv: Sequence[str] | None = None) -> int:
    args_list = list(sys.argv[1:] if argv is None else argv)
    if args_list and args_list[0] in ("nbrefresh", "crashtest"):
        if args_list[0] == "nbrefresh":
            from . import nbrefresh

            return nbrefresh.main(args_list[1:])
        from . import crashtest

        return crashtest.main(args_list[1:])
    args = parser().parse_args(args_list)
    try:
        return starters(args.check)
    except (KitError, ManifestError, StarterError, OSError) as error:
        print(f"course-kit: {error}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
