"""The stored notebooks: one per lab in the curriculum, wired alike, outputs stable."""

from __future__ import annotations

import re
from pathlib import Path

import nbformat
import pytest
from notebook_support import NOTEBOOKS, code_cells

from course.harness.manifest import load_manifest
from course.tools.nbrefresh import WIDGET_VIEW, clean, problems

PATHS = sorted(NOTEBOOKS.glob("*.ipynb"))
LAB_CHECK = re.compile(r'^check\("(\d+\.\d+)"\)$')
DIRECT_IMPORT = re.compile(
    r"(from\s+course\s+import\s+[^\n]*\b(session|context|entries)\b"
    r"|(from|import)\s+course\.(session|context|entries)\b)"
)


def read(path: Path) -> nbformat.NotebookNode:
    return nbformat.read(path, as_version=4)


@pytest.mark.parametrize("path", PATHS, ids=[p.stem for p in PATHS])
def test_stored_outputs_are_stable(path: Path) -> None:
    assert problems(read(path)) == []


@pytest.mark.parametrize("path", PATHS, ids=[p.stem for p in PATHS])
def test_notebooks_reach_the_code_only_through_implementation(path: Path) -> None:
    cells = code_cells(read(path))
    assert "impl = implementation()" in cells[0].source
    for cell in cells:
        assert not DIRECT_IMPORT.search(cell.source), cell.source


def test_every_lab_has_a_notebook_that_ends_with_its_check() -> None:
    checked = {}
    for path in PATHS:
        notebook = read(path)
        last = code_cells(notebook)[-1].source.strip()
        match = LAB_CHECK.match(last)
        if match:
            checked[match.group(1)] = notebook.cells[0].source.splitlines()[0]
    labs = load_manifest("11").labs
    assert sorted(checked) == [lab.id for lab in labs]
    for lab in labs:
        assert checked[lab.id] == f"# {lab.notebook}", "the heading is the curriculum's title"


def test_the_stored_checks_show_the_reference_passing() -> None:
    for path in PATHS:
        last = code_cells(read(path))[-1]
        text = "".join(o.data["text/plain"] for o in last.outputs)
        assert re.match(r"✓ (Lab \d+\.\d+ · .+|Chapter 11): (\d+)/\2 passed$", text.splitlines()[0])


def test_clean_drops_widget_views_timings_and_widget_state() -> None:
    notebook = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("explorer")])
    notebook.metadata["widgets"] = {"state": {}}
    cell = notebook.cells[0]
    cell.execution_count = 1
    cell.metadata["execution"] = {"iopub.status.busy": "2024-01-01T00:00:00Z"}
    cell.outputs = [
        nbformat.v4.new_output(
            "display_data", {WIDGET_VIEW: {"model_id": "ab12"}, "text/plain": "summary"}
        ),
        nbformat.v4.new_output("display_data", {WIDGET_VIEW: {"model_id": "cd34"}}),
    ]
    assert len(problems(notebook)) == 4
    clean(notebook, "demo")
    assert problems(notebook) == []
    assert cell.id == "demo-01" and [o.data for o in cell.outputs] == [{"text/plain": "summary"}]


@pytest.mark.parametrize(
    "text",
    [
        "see /tmp/course-check-x/report.json",
        "<object at 0x7f3a2b1c>",
        "ran 2024-05-01T10:00",
        "took 1.25 s",
    ],
)
def test_unstable_text_is_found(text: str) -> None:
    notebook = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("x")])
    notebook.cells[0].execution_count = 1
    notebook.cells[0].outputs = [nbformat.v4.new_output("stream", name="stdout", text=text)]
    assert problems(notebook)
