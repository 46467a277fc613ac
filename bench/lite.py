"""The zero-install site's size and first kernel start: ``python3 bench/lite.py [--runs N]``.

Builds the site as ``docs/lite.md`` does (or reuses the cached build of the kit as it is; ``--site
DIR`` measures a site built elsewhere), prints its size in MB, whole and by part, then opens it N
times in a fresh headless Chromium profile (nothing cached,
every request outside 127.0.0.1 aborted) and prints the seconds from opening the page to the
kernel's first answer. The issue's targets: at most 35 MB, at most 15 s.
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
NOTEBOOK = "en/notebooks/11-0-chapter.ipynb"
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
    args = parser.parse_args(argv)
    site = args.site or built_site()
    size = site_size(site) / 1e6
    print(f"site: {site}")
    print(f"size: {size:.2f} MB (target {SIZE_TARGET_MB:g} MB)")
    for part, part_size in part_sizes(site).items():
        print(f"  {part}: {part_size / 1e6:.2f} MB")
    if args.runs < 1:
        return 0
    starts, outside = [], 0
    with served(site) as base:
        for _ in range(args.runs):
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
    return 0


if __name__ == "__main__":
    sys.exit(main())
