"""Suite-wide options and fixtures: ``--no-browser`` leaves out the tests that drive JupyterLab
in Chromium; ``zh`` speaks the Chinese edition for one test; hypothesis's profile."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from cpu_ledger import CpuLedger
from hypothesis import settings
from schedule import COSTLY, costly_first

from course.locale import set_edition

settings.register_profile("kit", deadline=None, derandomize=True, database=None)
settings.register_profile("explore", deadline=None)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "kit"))
"""The suite passes or fails the same way every run: each property test draws the same examples
(``derandomize``) and no example fails for taking long (``deadline``; time is the benchmarks'
business). ``HYPOTHESIS_PROFILE=explore`` draws new examples each run, to look for new bugs."""

BROWSER_MARKER = "browser"
BROWSER_TESTS = Path(__file__).parent / "browser"
OPT_OUT_NOTE = "browser tests (JupyterLab in headless Chromium) left out by --no-browser"


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--no-browser",
        action="store_true",
        default=False,
        help="leave out the tests that drive JupyterLab in headless Chromium (they run by "
        "default and fail when Chromium or Playwright is missing)",
    )
    parser.addoption(
        "--lite-site",
        action="store_true",
        default=False,
        help="also build the zero-install site from npm and PyPI and drive it offline in "
        "Chromium (tests/browser/test_lite_site.py; minutes, see docs/lite.md)",
    )
    parser.addoption(
        "--cpu-ledger",
        metavar="DIR",
        default=None,
        help="write each test's CPU seconds (its process tree's, through a cgroup) to DIR "
        "(give it as --cpu-ledger=DIR: a DIR standing alone is taken for a test path before "
        "this option is known); python tests/cpu_ledger.py DIR sums them (docs/performance.md)",
    )


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers",
        f"{BROWSER_MARKER}: drives JupyterLab in headless Chromium; left out by --no-browser",
    )
    config.addinivalue_line(
        "markers",
        f"{COSTLY}: the scope's tests take far longer than most; xdist hands it out first "
        "(tests/schedule.py)",
    )
    ledger = config.getoption("cpu_ledger")
    if ledger:
        config.pluginmanager.register(CpuLedger(Path(ledger).resolve()), "cpu_ledger")


def pytest_ignore_collect(collection_path: Path, config: pytest.Config) -> bool | None:
    """With --no-browser the browser folder is not even imported (no Playwright needed)."""
    if config.getoption("no_browser") and collection_path == BROWSER_TESTS:
        return True
    return None


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """With --no-browser, deselect browser tests named explicitly on the command line. Then
    the costly scopes go first (``schedule.costly_first``)."""
    if config.getoption("no_browser"):
        deselected = [item for item in items if item.get_closest_marker(BROWSER_MARKER)]
        if deselected:
            items[:] = [item for item in items if not item.get_closest_marker(BROWSER_MARKER)]
            config.hook.pytest_deselected(items=deselected)
    items[:] = costly_first(
        items, lambda item: item.nodeid, lambda item: bool(item.get_closest_marker(COSTLY))
    )


def pytest_xdist_auto_num_workers(config: pytest.Config) -> int | None:
    """``-n auto``: one worker more than there are cores. A test that grades waits for its
    children (a time limit running out, a hang that sleeps): with a worker per core, a core
    sits idle while it waits. More than one spare worker gained nothing here (2 cores: 3
    workers 4 min 41 s, 4 workers 4 min 43 s, 2 workers 5 min 20 s). xdist's own
    ``PYTEST_XDIST_AUTO_NUM_WORKERS``, when set, decides instead."""
    if os.environ.get("PYTEST_XDIST_AUTO_NUM_WORKERS"):
        return None
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    return (cores or 1) + 1


def pytest_report_header(config: pytest.Config) -> str | None:
    return OPT_OUT_NOTE if config.getoption("no_browser") else None


def pytest_terminal_summary(
    terminalreporter: pytest.TerminalReporter, config: pytest.Config
) -> None:
    if config.getoption("no_browser"):
        terminalreporter.write_line(OPT_OUT_NOTE, yellow=True)


@pytest.fixture
def zh() -> Iterator[None]:
    """The zh edition for one test; the environment's choice again afterwards."""
    set_edition("zh")
    try:
        yield
    finally:
        set_edition(None)
