"""The budget explorer as a learner uses it: JupyterLab in headless Chromium, keys on a slider."""

from __future__ import annotations

import contextlib
import re

import pytest
from explorer_notebook import (
    OVERFLOW_19,
    PROBE_MARKER,
    SLIDER,
    TRIMMED_31,
    Expected,
    code_cell_count,
    prepare_copy,
)
from lab_page import (
    Lab,
    code_cell,
    error_texts,
    label_texts,
    move_slider_with_keys,
    open_notebook,
    run_all_cells,
    run_cell,
    slider_readout,
    slider_row,
    stream_text,
    table_row,
    widget_output,
)

# Without Playwright the `lab` fixture fails and names the fix.
with contextlib.suppress(ModuleNotFoundError):
    from playwright.sync_api import Locator, expect

pytestmark = [pytest.mark.browser, pytest.mark.costly]  # costly: tests/schedule.py

SCREENSHOT = "budget-explorer-max-tokens-19.png"


def exactly(text: str) -> re.Pattern[str]:
    return re.compile(f"^{re.escape(text)}$")


def expect_projection(explorer: Locator, expected: Expected) -> None:
    """The explorer shows ``expected``: readout, deduction table, kept-ids and reason labels.

    The readout changes in the browser; the table and the labels are rebuilt by the kernel.
    """
    value = str(expected.max_tokens)
    expect(slider_readout(slider_row(explorer, SLIDER))).to_have_text(value)
    expect(table_row(explorer, SLIDER).locator("td")).to_have_text([SLIDER, value])
    labels = label_texts(explorer)
    for text in (expected.kept_text, expected.reason):
        shown = labels.filter(has_text=exactly(text))
        expect(shown, f"the explorer shows {text!r}").to_have_count(1)
        expect(shown).to_be_visible()


def expect_probe(cell: Locator, expected: Expected) -> None:
    """The probe cell printed the kernel's slider value, kept ids and reason."""
    expect(stream_text(cell)).to_have_text("\n".join(expected.probe_lines))


def test_moving_max_tokens_from_31_to_19_changes_the_projection(lab: Lab) -> None:
    (lab.artifacts / SCREENSHOT).unlink(missing_ok=True)
    copy = prepare_copy(lab.server.root_dir)
    notebook = open_notebook(lab.page, lab.server.url, copy.name)
    run_all_cells(lab.page, notebook, code_cell_count(copy))
    assert error_texts(notebook) == []

    explorer = widget_output(notebook, SLIDER)
    expect(explorer, "one rendered explorer with a max_tokens slider").to_have_count(1)
    expect_projection(explorer, TRIMMED_31)
    probe = code_cell(notebook, PROBE_MARKER)
    expect_probe(probe, TRIMMED_31)

    move_slider_with_keys(slider_row(explorer, SLIDER), TRIMMED_31.max_tokens, 19)
    expect_projection(explorer, OVERFLOW_19)

    run_cell(lab.page, probe)
    expect_probe(probe, OVERFLOW_19)
    assert error_texts(notebook) == []

    explorer.evaluate("node => node.scrollIntoView({block: 'start'})")
    lab.screenshot(SCREENSHOT)
