"""Fixtures for the browser tests: Debian's Chromium, a private JupyterLab, an artifacts folder."""

from __future__ import annotations

import contextlib
import importlib.util
import os
import shutil
from collections.abc import Generator, Iterator
from pathlib import Path

import pytest
from lab_page import ARTIFACTS_KEY, Lab, record_artifact
from lab_server import running_lab

# Without Playwright the `lab` fixture fails and names the fix.
with contextlib.suppress(ModuleNotFoundError):
    from playwright.sync_api import Error as PlaywrightError
    from playwright.sync_api import Page, ViewportSize, expect, sync_playwright

CHROMIUM = Path("/usr/bin/chromium")
"""Debian's ``chromium`` package; Playwright's own browser downloads are not used."""
CHROMIUM_ARGS = [
    "--no-sandbox",  # needed as root
    "--headless",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
VIEWPORT: ViewportSize = {"width": 1400, "height": 1100}
STEP_TIMEOUT_MS = 30_000
"""Upper bound for any single Playwright action or wait without its own timeout."""
EXPECT_TIMEOUT_MS = 15_000
"""How long an `expect(...)` waits for the page to show something (a kernel round trip)."""
ARTIFACTS = Path(__file__).parent / "artifacts"
FIX = (
    "Run `bash scripts/setup` (as root it installs Debian's chromium and the dev extra), "
    "or leave the browser tests out with `python3 -m pytest --no-browser`."
)


def require_browser() -> None:
    """Fail, naming the fix, when Playwright or Chromium is missing: never skip."""
    problems = []
    if importlib.util.find_spec("playwright") is None:
        problems.append("the Python package `playwright` is not installed")
    if not (CHROMIUM.is_file() and os.access(CHROMIUM, os.X_OK)):
        problems.append(f"{CHROMIUM} is missing (Debian package `chromium`)")
    if problems:
        pytest.fail(f"cannot run the browser test: {'; '.join(problems)}. {FIX}", pytrace=False)


@pytest.fixture(scope="session")
def artifacts(request: pytest.FixtureRequest) -> Path:
    """``tests/browser/artifacts/`` (ignored by git); what is saved there is listed at the end."""
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    request.config.stash[ARTIFACTS_KEY] = []
    return ARTIFACTS


@pytest.fixture
def lab(request: pytest.FixtureRequest, tmp_path: Path, artifacts: Path) -> Iterator[Lab]:
    """JupyterLab serving ``tmp_path / "notebooks"`` and a headless Chromium page.

    Both are stopped whatever the test does; on failure the page and the server log are
    saved next to the screenshots.
    """
    require_browser()
    failure_shot = artifacts / f"{request.node.name}-failure.png"
    failure_log = artifacts / f"{request.node.name}-jupyterlab.log"
    for stale in (failure_shot, failure_log):
        stale.unlink(missing_ok=True)
    with running_lab(tmp_path) as server, sync_playwright() as playwright:
        context = playwright.chromium.launch_persistent_context(
            str(tmp_path / "chromium-profile"),
            executable_path=str(CHROMIUM),
            headless=True,
            args=CHROMIUM_ARGS,
            viewport=VIEWPORT,
            timeout=STEP_TIMEOUT_MS,
        )
        try:
            context.set_default_timeout(STEP_TIMEOUT_MS)
            expect.set_options(timeout=EXPECT_TIMEOUT_MS)
            page = context.pages[0] if context.pages else context.new_page()
            yield Lab(server, page, artifacts, request.config)
            if _failed(request):
                with contextlib.suppress(PlaywrightError):  # a crashed page has no picture
                    page.screenshot(path=str(failure_shot))
                    record_artifact(request.config, failure_shot)
        finally:
            context.close()
            if _failed(request):
                shutil.copyfile(server.log_file, failure_log)
                record_artifact(request.config, failure_log)


def _failed(request: pytest.FixtureRequest) -> bool:
    report = getattr(request.node, "rep_call", None)
    return report is None or report.failed


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(
    item: pytest.Item,
) -> Generator[None, pytest.TestReport, pytest.TestReport]:
    """Keep the call phase's report on the item, so fixtures can tell a failed test."""
    report = yield
    if report.when == "call":
        item.rep_call = report  # type: ignore[attr-defined]
    return report


def pytest_terminal_summary(
    terminalreporter: pytest.TerminalReporter, config: pytest.Config
) -> None:
    paths = config.stash.get(ARTIFACTS_KEY, [])
    if paths:
        terminalreporter.section("browser artifacts")
        for path in paths:
            terminalreporter.write_line(str(path))


@pytest.fixture
def chromium_page() -> Iterator[Page]:
    """A headless Chromium page with nothing served behind it: for a static file."""
    require_browser()
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path=str(CHROMIUM), headless=True, args=CHROMIUM_ARGS
        )
        try:
            page = browser.new_page(viewport=VIEWPORT)
            page.set_default_timeout(STEP_TIMEOUT_MS)
            yield page
        finally:
            browser.close()


@pytest.fixture(scope="session")
def lite_site(request: pytest.FixtureRequest) -> Path:
    """The zero-install site as ``docs/lite.md`` builds it, cached outside the repository.
    Built only with ``--lite-site``: the build fetches Pyodide and the wheels from the package
    registries and takes minutes, so the suite's own run leaves it to that option."""
    if not request.config.getoption("lite_site"):
        pytest.skip("the zero-install site is built and driven with --lite-site (docs/lite.md)")
    require_browser()
    from lite_site import built_site

    return built_site()
