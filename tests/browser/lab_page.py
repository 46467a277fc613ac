"""What a learner does in JupyterLab, as Playwright steps: open, run, move a slider, read."""

from __future__ import annotations

import contextlib
import re
from dataclasses import dataclass
from pathlib import Path

import pytest
from lab_server import LabServer

# Without Playwright the `lab` fixture fails and names the fix.
with contextlib.suppress(ModuleNotFoundError):
    from playwright.sync_api import Locator, Page, expect

KERNEL_NAME = "Python 3 (ipykernel)"
KERNEL_TIMEOUT_MS = 90_000
"""Loading JupyterLab and starting the kernel."""
RUN_TIMEOUT_MS = 120_000
"""Running every cell (the lab check at the end starts a fresh pytest)."""
UPDATE_TIMEOUT_MS = 15_000
"""A widget round trip: browser → kernel → browser."""
ERROR_MIME = "application/vnd.jupyter.error"
EXECUTED = re.compile(r"^\[\d+\]:$")
ARTIFACTS_KEY = pytest.StashKey[list[Path]]()
"""Files saved for the reader of a run: listed in the terminal summary."""


def record_artifact(config: pytest.Config, path: Path) -> Path:
    """Remember ``path`` for the terminal summary."""
    config.stash.setdefault(ARTIFACTS_KEY, []).append(path)
    return path


@dataclass(frozen=True)
class Lab:
    """A JupyterLab server and a Chromium page pointed at nothing yet."""

    server: LabServer
    page: Page
    artifacts: Path
    config: pytest.Config

    def screenshot(self, name: str) -> Path:
        """Save what the page shows now as ``artifacts/name``; listed at the end of the run."""
        path = self.artifacts / name
        self.page.screenshot(path=str(path))
        return record_artifact(self.config, path)


def open_notebook(page: Page, server_url: str, name: str) -> Locator:
    """Open ``name`` in JupyterLab and wait until its kernel is connected and idle."""
    page.goto(f"{server_url}lab/tree/{name}", wait_until="domcontentloaded")
    notebook = page.locator(".jp-NotebookPanel .jp-Notebook").first
    expect(notebook).to_be_visible(timeout=KERNEL_TIMEOUT_MS)
    wait_for_idle_kernel(page)
    return notebook


def wait_for_idle_kernel(page: Page, timeout: float = KERNEL_TIMEOUT_MS) -> None:
    """The status bar says the notebook's kernel is idle (not 'No Kernel', not 'Connecting')."""
    status = page.locator(".jp-StatusBar-TextItem", has_text=f"{KERNEL_NAME} |")
    expect(status).to_have_text(f"{KERNEL_NAME} | Idle", timeout=timeout)
    indicator = page.locator(".jp-Notebook-ExecutionIndicator")
    expect(indicator).to_have_attribute("data-status", "idle", timeout=timeout)


def choose_menu(page: Page, menu: str, item: str) -> None:
    """Click ``menu`` in the menu bar, then ``item`` in it."""
    page.locator(".lm-MenuBar-itemLabel", has_text=re.compile(f"^{re.escape(menu)}$")).click()
    entry = page.locator(".lm-Menu-item", has_text=re.compile(f"^{re.escape(item)}"))
    entry.first.click()


def code_prompts(notebook: Locator) -> Locator:
    """The input prompts ('[ ]:', '[*]:', '[3]:') of the code cells, in order."""
    return notebook.locator(".jp-CodeCell .jp-InputArea-prompt")


def run_all_cells(page: Page, notebook: Locator, code_cells: int) -> None:
    """Run → Run All Cells, then wait until every code cell has an execution number."""
    prompts = code_prompts(notebook)
    expect(prompts).to_have_count(code_cells, timeout=KERNEL_TIMEOUT_MS)
    choose_menu(page, "Run", "Run All Cells")
    expect(prompts).to_have_text([EXECUTED] * code_cells, timeout=RUN_TIMEOUT_MS)
    wait_for_idle_kernel(page, RUN_TIMEOUT_MS)


def error_texts(notebook: Locator) -> list[str]:
    """The tracebacks shown in the notebook's outputs."""
    return notebook.locator(f"[data-mime-type='{ERROR_MIME}']").all_inner_texts()


def widget_output(notebook: Locator, slider: str) -> Locator:
    """The output area holding the widget that has a slider described as ``slider``."""
    # A `has=` locator is matched inside each candidate, so it is built from the page.
    return notebook.locator(".jp-OutputArea-output").filter(has=slider_row(notebook.page, slider))


def slider_row(scope: Page | Locator, description: str) -> Locator:
    """The ipywidgets slider under ``scope`` whose label reads ``description``."""
    page = scope if isinstance(scope, Page) else scope.page
    label = page.locator("label.widget-label", has_text=re.compile(f"^{re.escape(description)}$"))
    return scope.locator(".widget-slider").filter(has=label)


def slider_handle(row: Locator) -> Locator:
    """The slider's keyboard-focusable handle (noUiSlider)."""
    return row.locator(".noUi-handle")


def slider_readout(row: Locator) -> Locator:
    """The number shown next to the slider."""
    return row.locator(".widget-readout")


def table_row(widget: Locator, first_cell: str) -> Locator:
    """The HTML table row inside ``widget`` whose first cell reads ``first_cell``."""
    cell = widget.page.locator("td:first-child", has_text=re.compile(f"^{re.escape(first_cell)}$"))
    return widget.locator("tr").filter(has=cell)


def label_texts(widget: Locator) -> Locator:
    """The ipywidgets ``Label`` views inside ``widget`` (not slider descriptions)."""
    return widget.locator("div.widget-label")


def move_slider_with_keys(row: Locator, start: int, target: int) -> None:
    """Focus the handle and press ArrowLeft/ArrowRight one step at a time."""
    handle = slider_handle(row)
    handle.focus()
    key = "ArrowLeft" if target < start else "ArrowRight"
    for _ in range(abs(target - start)):
        handle.press(key)
    expect(slider_readout(row)).to_have_text(str(target), timeout=UPDATE_TIMEOUT_MS)


def code_cell(notebook: Locator, source: str) -> Locator:
    """The code cell whose source contains ``source``."""
    editor = notebook.page.locator(".jp-InputArea-editor", has_text=source)
    return notebook.locator(".jp-CodeCell").filter(has=editor)


def run_cell(page: Page, cell: Locator) -> None:
    """Select ``cell`` by its prompt (command mode) and run it in place with Ctrl+Enter."""
    cell.locator(".jp-InputArea-prompt").click()
    page.keyboard.press("Control+Enter")


def stream_text(cell: Locator) -> Locator:
    """The printed (stdout) output of ``cell``."""
    return cell.locator(".jp-OutputArea-output[data-mime-type='application/vnd.jupyter.stdout']")
