"""The zero-install site's size, first kernel start and ``check()``: ``python3 bench/lite.py``.

Builds the site as ``docs/lite.md`` does (or reuses the cached build of the kit as it is; ``--site
DIR`` measures a site built elsewhere), prints its size in MB, whole and by part, then opens it
``--runs`` times in a fresh headless Chromium profile (nothing cached, every request outside
127.0.0.1 aborted) and prints the seconds from opening the page to the kernel's first answer.
Then, in one more fresh profile, it writes the reference's Lab 11.1 into the workspace and times
``--checks`` calls of ``check("11.1")`` in a row (the first, then the ones after it), as the
kernel's own clock sees them. The issue's targets: at most 35 MB, a start within 15 s, the first
check of a solved lab within 8 s and each later one within 3 s.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
for folder in (ROOT, ROOT / "tests" / "browser"):  # run as a script
    if str(folder) not in sys.path:
        sys.path.insert(0, str(folder))

from lite_site import built_site, offline_browser, served  # noqa: E402

from course.tools.lite import site_size  # noqa: E402

SIZE_TARGET_MB = 35.0
START_TARGET_S = 15.0
FIRST_CHECK_TARGET_S = 8.0
LATER_CHECK_TARGET_S = 3.0
NOTEBOOK = "ch11/en/notebooks/11-0-chapter.ipynb"
SOLVED_LAB = "11.1"
SOLVED_MODULE = "summary"
TIMED_CHECK = """
import time
from course.display.notebook import check
started = time.perf_counter()
verdict = check({lab!r})
print(f"{{time.perf_counter() - started:.3f}}", *[lab.status for lab in verdict.labs])
"""
"""One ``check()``, timed by the kernel's clock; prints its seconds and the labs' statuses."""
PARTS = {
    "Pyodide core": ("static/pyodide/pyodide*", "static/pyodide/python_stdlib.zip"),
    "wheels": ("static/pyodide/*.whl",),
    "the lab's scripts": ("build/*.js",),
    "the lab's other files": (
        "build/**/*",
        "extensions/**/*",
        "lab/**/*",
        "static/favicons/*",
        "*",
    ),
    "learner files": ("files/**/*", "api/**/*"),
}
"""The site's parts by the paths they match; a file counts in the first part that matches it."""


def part_sizes(site: Path) -> dict[str, int]:
    """The bytes of each of ``PARTS`` in ``site``; what no part matches is "other"."""
    sizes = dict.fromkeys([*PARTS, "other"], 0)
    counted: set[Path] = set()
    for part, patterns in PARTS.items():
        for pattern in patterns:
            for path in site.glob(pattern):
                if path.is_file() and path not in counted:
                    counted.add(path)
                    sizes[part] += path.stat().st_size
    sizes["other"] = site_size(site) - sum(sizes.values())
    return sizes


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=3, help="kernel starts to time (default 3)")
    parser.add_argument("--site", type=Path, help="a built site to measure (default: the kit's)")
    parser.add_argument("--checks", type=int, default=4, help="checks of a solved lab to time")
    args = parser.parse_args(argv)
    site = args.site or built_site()
    size = site_size(site) / 1e6
    print(f"site: {site}")
    print(f"size: {size:.2f} MB (target {SIZE_TARGET_MB:g} MB)")
    for part, part_size in part_sizes(site).items():
        print(f"  {part}: {part_size / 1e6:.2f} MB")
    if args.runs > 0:
        report_starts(site, args.runs)
    if args.checks > 0:
        with served(site) as base:
            report_checks(timed_checks(base, args.checks))
    return 0


def report_starts(site: Path, runs: int) -> None:
    """Open the site ``runs`` times in fresh profiles; print the first kernel start."""
    starts, outside = [], 0
    with served(site) as base:
        for _ in range(runs):
            with (
                tempfile.TemporaryDirectory() as profile,
                offline_browser(base, Path(profile)) as (lab, blocked),
            ):
                starts.append(lab.open_lab(NOTEBOOK))
                outside += len(blocked.urls)
    print(
        f"first kernel start: median {statistics.median(starts):.1f} s, worst {max(starts):.1f} s"
        f" over {len(starts)} fresh profiles (target {START_TARGET_S:g} s)"
    )
    print(f"requests outside 127.0.0.1: {outside}")


def timed_checks(base: str, count: int) -> list[float]:
    """The seconds of ``count`` checks in a row of the solved lab, in a fresh profile."""
    solution = (ROOT / "course" / f"{SOLVED_MODULE}.py").read_text(encoding="utf-8")
    seconds = []
    with tempfile.TemporaryDirectory() as profile, offline_browser(base, Path(profile)) as pair:
        lab, _outside = pair
        lab.open_lab(NOTEBOOK)
        path = f"../pi_course/{SOLVED_MODULE}.py"
        lab.execute(f"open({path!r}, 'w', encoding='utf-8').write({solution!r})")
        for _ in range(count):
            said = lab.execute(TIMED_CHECK.format(lab=SOLVED_LAB)).split()
            if said[1:] != ["passed"]:
                raise SystemExit(f"check({SOLVED_LAB!r}) of the solved lab said {said}")
            seconds.append(float(said[0]))
    return seconds


def report_checks(seconds: list[float]) -> None:
    first, later = seconds[0], seconds[1:]
    print(f"check({SOLVED_LAB!r}) of a solved lab: first {first:.1f} s", end="")
    print(f" (target {FIRST_CHECK_TARGET_S:g} s)", end="")
    if later:
        print(
            f", later median {statistics.median(later):.1f} s, worst {max(later):.1f} s over"
            f" {len(later)} (target {LATER_CHECK_TARGET_S:g} s)",
            end="",
        )
    print()


if __name__ == "__main__":
    sys.exit(main())
