"""The zero-install site for the browser tests and the benchmark: built once, served, driven.

The site is built by the command ``docs/lite.md`` shows, into a folder outside the repository
keyed by what it is made of (the lite versions and the kit's own files), so repeated runs reuse
it. A headless Chromium opens it with every request outside 127.0.0.1 aborted and counted.
"""

from __future__ import annotations

import functools
import hashlib
import http.server
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from course.harness.kit import kit_cache, kit_root
from course.harness.manifest import Manifest
from course.tools.lite import CONFIG, chapter_folder, site_chapters

KIT_SOURCES = ("course", "starters", "notebooks", "tests/chapter11", "pyproject.toml")
"""What the site is built from, besides the fetched versions and each chapter's folder (those
``COURSE_CHAPTERS`` adds too): a change rebuilds it."""
CHROMIUM = "/usr/bin/chromium"
BUILD_TIMEOUT = 900
RUN_TIMEOUT_S = 240.0


DOCS = Path(__file__).resolve().parents[2] / "docs" / "lite.md"
DOCUMENTED_OUT = "site"
"""The folder the documented command builds into; the test builds into its cache instead."""


def documented_command() -> list[str]:
    """The one ``course-kit lite`` command docs/lite.md shows (a test runs it, so it works)."""
    [line] = [
        x for x in DOCS.read_text(encoding="utf-8").splitlines() if x.startswith("course-kit lite ")
    ]
    return line.split()


def build_command(out: Path) -> list[str]:
    """The documented build, from this Python's scripts, into ``out``."""
    words = documented_command()
    words[0] = str(Path(sys.executable).with_name(words[0]))
    return [str(out) if word == DOCUMENTED_OUT else word for word in words]


def kit_digest() -> str:
    """A hash of the kit's files the site carries, and of each chapter's folder, wherever it is
    (a chapter ``COURSE_CHAPTERS`` adds may lie outside the kit)."""
    total = hashlib.sha256(CONFIG.cache_key().encode())
    root = kit_root()
    for name in [*KIT_SOURCES, *(manifest.folder for manifest in site_chapters())]:
        base = root / name  # a folder outside the kit is absolute: the path itself
        paths = sorted(base.rglob("*")) if base.is_dir() else [base]
        for path in paths:
            if path.is_file() and "__pycache__" not in path.parts:
                total.update(f"{name}/{path.relative_to(base).as_posix()}".encode() + b"\0")
                total.update(path.read_bytes())
    return total.hexdigest()[:16]


def built_site() -> Path:
    """The site for the kit as it is now: built on first use, then reused."""
    site = kit_cache() / "sites" / kit_digest()
    if not (site / "index.html").is_file():
        partial = site.with_name(site.name + ".partial")
        subprocess.run(["rm", "-rf", str(partial)], check=True)
        done = subprocess.run(
            build_command(partial), capture_output=True, text=True, timeout=BUILD_TIMEOUT
        )
        if done.returncode != 0:
            raise RuntimeError(f"the site did not build:\n{done.stdout}\n{done.stderr}")
        partial.rename(site)
    return site


class QuietHandler(http.server.SimpleHTTPRequestHandler):
    """A static server that keeps quiet and shrugs off a page that goes away mid-file."""

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def handle(self) -> None:
        with suppress(ConnectionError):
            super().handle()


@contextmanager
def served(site: Path) -> Iterator[str]:
    """Serve ``site`` on 127.0.0.1; yields its base URL."""
    handler = functools.partial(QuietHandler, directory=str(site))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


@dataclass
class Outside:
    """Requests to anywhere but the site, aborted."""

    urls: list[str] = field(default_factory=list)


def guard(context: Any, base: str) -> Outside:
    """Abort (and count) every request of ``context`` that does not go to ``base``."""
    outside = Outside()

    def route(route: Any) -> None:
        url = route.request.url
        if url.startswith((f"{base}/", "data:", "blob:")):
            route.continue_()
        else:
            outside.urls.append(url)
            route.abort()

    context.route("**/*", route)
    return outside


class LitePage:
    """One JupyterLite page, driven through the lab's own commands."""

    def __init__(self, page: Any, base: str) -> None:
        self.page = page
        self.base = base

    def open_lab(self, path: str) -> float:
        """Open the lab on the notebook at ``path``; returns the seconds until its kernel ran
        its first cell (``1 + 1``) -- the first kernel start."""
        started = time.monotonic()
        self.page.goto(f"{self.base}/lab/index.html?path={path}")
        self.page.wait_for_function("() => window.jupyterapp !== undefined", timeout=60_000)
        self.page.evaluate("() => window.jupyterapp.restored")
        self.command("docmanager:open", {"path": path})  # the current tab, whatever was restored
        self.page.wait_for_function(
            "(path) => window.jupyterapp.shell.currentWidget?.context?.path === path", arg=path
        )
        self.page.wait_for_function(  # its session is made after the tab opens
            "() => window.jupyterapp.shell.currentWidget.sessionContext?.session?.kernel",
            timeout=RUN_TIMEOUT_S * 1000,
        )
        assert self.execute("1 + 1") == "2"
        return time.monotonic() - started

    def command(self, name: str, args: dict[str, Any] | None = None) -> None:
        """Run one of the lab's commands (``docmanager:open``, ``notebook:run-all-cells``)."""
        self.page.evaluate(
            "async ([name, args]) => { await window.jupyterapp.commands.execute(name, args); }",
            [name, args or {}],
        )

    def execute(self, code: str, timeout: float = RUN_TIMEOUT_S) -> str:
        """Run ``code`` in the current notebook's kernel; its plain-text result or output."""
        script = """async ([code]) => {
            const panel = window.jupyterapp.shell.currentWidget;
            await panel.sessionContext.ready;
            const future = panel.sessionContext.session.kernel.requestExecute({code});
            let text = "";
            future.onIOPub = (msg) => {
                const c = msg.content;
                if (c.data && c.data["text/plain"]) text += c.data["text/plain"];
                if (c.text) text += c.text;
                if (c.ename) text += c.ename + ": " + c.evalue;
            };
            await future.done;
            return text;
        }"""
        return str(self.page.evaluate(script, [code])).strip()

    def run_all(self, path: str) -> list[str]:
        """Open ``path``, restart its kernel, run every cell; returns the errors shown."""
        self.command("docmanager:open", {"path": path})
        self.page.wait_for_function(
            "(path) => window.jupyterapp.shell.currentWidget?.context?.path === path", arg=path
        )
        self.page.wait_for_function(
            "() => window.jupyterapp.shell.currentWidget.sessionContext.session?.kernel"
        )
        self.command("notebook:run-all-cells")
        self.page.wait_for_function(
            """() => { const p = window.jupyterapp.shell.currentWidget;
                const cells = p.content.widgets.filter(c => c.model.type === 'code');
                const failed = cells.some(c => c.model.outputs.toJSON().some(
                    o => o.output_type === 'error'));  // Run All stops at an error
                return cells.length > 0 && p.sessionContext.session.kernel.status === 'idle'
                    && (failed || cells.every(c => c.model.executionCount !== null)); }""",
            timeout=RUN_TIMEOUT_S * 1000,
        )
        return self.page.evaluate(
            """() => { const p = window.jupyterapp.shell.currentWidget;
                return p.content.widgets
                    .flatMap(c => (c.model.outputs ? c.model.outputs.toJSON() : []))
                    .filter(o => o.output_type === 'error')
                    .map(o => o.ename + ': ' + o.evalue); }"""
        )


CHECK = """
from course.display.notebook import check
v = check({lab!r}, timeout={seconds!r})
print(*[f'{{x.status}} {{x.passed}} {{x.total}} {{x.agreed}} {{x.cases}}' for x in v.labs]
      or [v.problem], sep='\\n')
"""


def check_in_page(lab: LitePage, lab_id: str, seconds: float = 10.0) -> tuple[object, ...]:
    """``check(lab_id)`` run in the page's kernel: the lab's status and counts (else its
    problem), as a roster's gradebook gives them."""
    said = lab.execute(CHECK.format(lab=lab_id, seconds=seconds))
    status, *counts = said.split()
    assert counts, f"check({lab_id!r}) gave no verdict: {said}"
    return (status, *map(int, counts))


def chapter_workspace(manifest: Manifest, edition: str) -> str:
    """The site's folder of ``manifest``'s workspace in ``edition``."""
    return f"{chapter_folder(manifest)}/{edition}"


def solve_in_page(lab: LitePage, manifest: Manifest, lab_id: str) -> None:
    """Write the reference of each learner file of ``lab_id`` into the workspace of the
    notebook open in the page (its kernel runs in the workspace's ``notebooks/``)."""
    [wanted] = [each for each in manifest.labs if each.id == lab_id]
    files = {file.path: file for file in manifest.files}
    for path in wanted.files:
        text = (kit_root() / files[path].reference).read_text(encoding="utf-8")
        lab.execute(f"open('../{path}', 'w', encoding='utf-8').write({text!r})")


@contextmanager
def offline_browser(base: str, profile: Path) -> Iterator[tuple[LitePage, Outside]]:
    """A headless Chromium (Debian's) on a persistent profile, every outside request aborted."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        context = playwright.chromium.launch_persistent_context(
            str(profile),
            executable_path=CHROMIUM,
            headless=True,
            args=["--no-sandbox", "--headless", "--disable-gpu", "--no-first-run"],
            viewport={"width": 1400, "height": 1000},
            accept_downloads=True,
        )
        try:
            outside = guard(context, base)
            page = context.pages[0] if context.pages else context.new_page()
            yield LitePage(page, base), outside
        finally:
            context.close()
