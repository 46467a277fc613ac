"""``course-kit``: the maintainer's command: starters, notebooks, catalogs, the chapter contract,
nbrefresh, crashtest, a chapter's Gradescope and Classroom 50 autograders, and the zero-install
site (lite)."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

from ..cli.options import chapter_help
from ..grading.platforms.visibility import VISIBILITIES
from ..grading.verdict.hidden import HiddenTestError, read_hidden
from ..harness.kit import KitError, kit_root, shown
from ..harness.manifest import ManifestError, available_chapters, load_manifest
from ..locale import EDITIONS
from .crashtest import add_options as add_crashtest_options
from .newchapter import NewChapterError
from .notebooks import NotebookSourceError, stale_notebooks, write_notebooks
from .starters import StarterError, stale_starters, write_starters

FAILURES = (
    *(KitError, ManifestError, StarterError, NotebookSourceError, HiddenTestError, OSError),
    NewChapterError,
)
"""What a command reports in one line, exiting 2."""


def _report(stale: list[str], remedy: str) -> int:
    for problem in stale:
        print(f"course-kit: {problem}; {remedy}", file=sys.stderr)
    return 1 if stale else 0


def starters(check: bool) -> int:
    """Write (or with ``check``, compare) every chapter's starters against generation."""
    kit = kit_root()
    status = 0
    for chapter in available_chapters():
        manifest = load_manifest(chapter)
        if check:
            differs = "differs from what `course-kit starters` generates from the reference"
            stale = [f"{path} {differs}" for path in stale_starters(manifest, kit)]
            status |= _report(stale, "regenerate it instead of editing it by hand")
        else:
            for path in write_starters(manifest, kit):
                print(f"wrote {path}")
    if check and status == 0:
        print("starters: up to date with the reference")
    return status


def notebooks(check: bool, run: bool) -> int:
    """Build every edition's notebooks from their sources, then run the ones that changed."""
    kit = kit_root()
    status = 0
    manifests = [load_manifest(chapter) for chapter in available_chapters()]
    if check:
        stale = stale_notebooks(kit, manifests)
        status |= _report(stale, "run `course-kit notebooks` to rebuild it from its source")
    for manifest in [] if check else manifests:
        written = write_notebooks(kit, manifest)
        for path in written:
            print(f"wrote {shown(path, kit)}")
        if run and written:
            from .nbrefresh import main as refresh

            status |= refresh([str(path) for path in written])
    if check and status == 0:
        print("notebooks: every edition matches its source")
    return status


def chapters() -> int:
    """Check every chapter found against the chapter contract (``contract.py``), naming every
    problem of every chapter at once."""
    from .contract import every_problem

    found, problems = every_problem(kit_root())
    for problem in problems:
        print(f"course-kit: {problem}", file=sys.stderr)
    if problems:
        print(f"chapters: {len(problems)} problem(s) to fix (docs/chapters.md)", file=sys.stderr)
        return 1
    named = ", ".join(f"{m.chapter} ({len(m.labs)} labs)" for m in found)
    print(f"chapters: {named} meet the contract (docs/chapters.md)")
    return 0


def gradescope(args: argparse.Namespace) -> int:
    """Write the chapter's Gradescope autograder zip (``grading/platforms/gradescope.py``)."""
    from ..grading.platforms.gradescope import autograder_files, write_zip  # the grading machinery

    manifest = load_manifest(args.chapter)
    hidden = read_hidden(Path(args.hidden), manifest) if args.hidden else None
    passed = ["--timeout", f"{args.timeout:g}", "--instructor-visibility", args.visibility]
    passed += ["--lang", args.lang] if args.lang else []
    passed += ["--unsandboxed"] if args.unsandboxed else []
    instructor = hidden.files if hidden else None
    files = autograder_files(manifest, kit_root(), passed, instructor, args.audit_seed)
    out = Path(args.out or f"autograder-{manifest.chapter}.zip")
    write_zip(out, files)
    print(f"wrote {out} ({len(files)} files): upload it as the assignment's autograder")
    return 0


def classroom50(args: argparse.Namespace) -> int:
    """Write the chapter's Classroom 50 ``autograder.py`` (``grading/platforms/github.py``)."""
    from ..grading.platforms.github import autograder

    manifest = load_manifest(args.chapter)
    out = Path(args.out or "autograder.py")
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(autograder(manifest, args.kit or "", args.kit_ref), encoding="utf-8")
    print(
        f"wrote {out}: put it at CLASSROOM/autograders/ASSIGNMENT/autograder.py in the "
        "classroom50 repository (docs/grading.md, Classroom 50)"
    )
    return 0


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="course-kit", description=__doc__)
    sub = p.add_subparsers(dest="command", required=True, metavar="COMMAND")
    s = sub.add_parser("starters", help="generate starters/ from the reference and the manifest")
    s.add_argument("--check", action="store_true", help="exit 1 naming every stale starter")
    n = sub.add_parser(
        "notebooks", help="build every edition's notebooks from each chapter's sources"
    )
    n.add_argument("--check", action="store_true", help="exit 1 naming every stale notebook")
    n.add_argument("--no-run", action="store_true", help="write the cells, do not execute")
    r = sub.add_parser("nbrefresh", help="re-run notebooks and store deterministic outputs")
    r.add_argument("paths", nargs="*", type=Path, help="notebooks (default: every edition's)")
    g = sub.add_parser("catalogs", help="build the editions' .mo files from their .po catalogs")
    g.add_argument("--update", action="store_true", help="add newly marked messages to each .po")
    g.add_argument("--check", action="store_true", help="exit 1 naming every untranslated message")
    g.add_argument(
        "--from",
        dest="sources",
        action="append",
        default=[],
        type=Path,
        metavar="PO",
        help="with --update: take a new message's translation from this .po too (the other side "
        "of a merge)",
    )
    sub.add_parser("chapters", help="check every chapter's files against the chapter contract")
    w = sub.add_parser("new-chapter", help="write a new chapter's folder to fill in")
    w.add_argument("chapter", metavar="N", help="the new chapter's id")
    w.add_argument("folder", metavar="DIR", type=Path, help="its folder (new, or empty)")
    w.add_argument("--parent", metavar="CHAPTER", help="the chapter it builds on (default: none)")
    w.add_argument("--module", help="its module's name (default: chapterN)")
    z = sub.add_parser("gradescope", help="write a chapter's Gradescope autograder zip")
    z.add_argument("chapter", help=chapter_help())
    z.add_argument("-o", "--out", metavar="FILE", help="default: autograder-CHAPTER.zip here")
    z.add_argument("--hidden", metavar="DIR", help="instructor tests DIR/test_*.py to bundle")
    z.add_argument("--timeout", type=float, default=10.0, metavar="SECONDS", help="per test")
    z.add_argument(
        "--visibility",
        choices=VISIBILITIES,
        default="after_due_date",
        help="when learners see the instructor tests' results (default: %(default)s)",
    )
    z.add_argument("--lang", metavar="EDITION", help="the edition learners read (default: en)")
    z.add_argument(
        "--audit-seed",
        type=int,
        metavar="N",
        help="the assignment's audit seed the zip keeps (default: a new secret one)",
    )
    z.add_argument(
        "--unsandboxed",
        action="store_true",
        help="grade without bubblewrap where the platform's container cannot start it",
    )
    a = sub.add_parser("classroom50", help="write a chapter's Classroom 50 autograder.py")
    a.add_argument("chapter", help=chapter_help())
    a.add_argument("-o", "--out", metavar="FILE", help="default: autograder.py here")
    a.add_argument("--kit", metavar="URL", help="the kit's git URL the runner clones")
    a.add_argument("--kit-ref", default="main", metavar="REF", help="its tag or branch")
    c = sub.add_parser("crashtest", help="kill JSONL writers at random and count lost entries")
    add_crashtest_options(c)
    lite = sub.add_parser("lite", help="build the zero-install site (JupyterLite + Pyodide)")
    lite.add_argument("out", type=Path, help="the folder to build the site into")
    lite.add_argument("--edition", choices=(*EDITIONS, "both"), default="both")
    lite.add_argument("--cache", type=Path, help="where downloads are kept between builds")
    lite.add_argument(
        "--chapter",
        action="append",
        dest="chapters",
        metavar="CHAPTER",
        help="a chapter the site holds (repeat it; default: every chapter the kit has)",
    )
    return p


def main(argv: Sequence[str] | None = None) -> int:
    arguments = list(sys.argv[1:] if argv is None else argv)
    args = parser().parse_args(arguments)
    try:
        if args.command == "starters":
            return starters(args.check)
        if args.command == "notebooks":
            return notebooks(args.check, not args.no_run)
        if args.command == "catalogs":
            from .catalogs import main as catalogs

            return catalogs(args.check, args.update, args.sources)
        if args.command == "chapters":
            return chapters()
        if args.command == "new-chapter":
            from .newchapter import main as new_chapter

            return new_chapter(args.chapter, args.folder, args.module, args.parent)
        if args.command == "gradescope":
            return gradescope(args)
        if args.command == "classroom50":
            return classroom50(args)
        if args.command == "nbrefresh":
            from .nbrefresh import main as refresh

            return refresh([str(path) for path in args.paths])
        if args.command == "lite":
            from .lite import LiteError
            from .lite import main as lite

            try:
                return lite(args.out, args.edition, args.cache, args.chapters)
            except LiteError as error:
                print(f"course-kit: {error}", file=sys.stderr)
                return 1
        from .crashtest import main as crashtest

        return crashtest(arguments[arguments.index("crashtest") + 1 :], prog="course-kit crashtest")
    except FAILURES as error:
        print(f"course-kit: {error}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
