"""The notebooks in a practice workspace: pending labs when fresh, the reference's views solved."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import nbformat
import pytest
from notebook_support import (
    NOTEBOOKS,
    code_cells,
    comparable,
    errors,
    run_notebook,
    run_until_error,
    texts,
)

STEMS = sorted(path.stem for path in NOTEBOOKS.glob("*.ipynb"))
WORKSPACE_LABEL = "· pi_course is your practice workspace's package"


def in_workspace(workspace: Path) -> list[Path]:
    paths = [workspace / "notebooks" / f"{stem}.ipynb" for stem in STEMS]
    assert all(path.is_file() for path in paths), "practice copies every notebook"
    return paths


@pytest.fixture(scope="module")
def fresh_runs(fresh_workspace: Path) -> dict[str, tuple[Any, int | None]]:
    with ThreadPoolExecutor(max_workers=2) as pool:
        runs = pool.map(run_until_error, in_workspace(fresh_workspace))
        return dict(zip(STEMS, runs, strict=True))


@pytest.fixture(scope="module")
def solved_runs(solved_workspace: Path) -> dict[str, Any]:
    with ThreadPoolExecutor(max_workers=2) as pool:
        return dict(zip(STEMS, pool.map(run_notebook, in_workspace(solved_workspace)), strict=True))


@pytest.mark.parametrize("stem", STEMS)
def test_in_a_fresh_workspace_a_notebook_stops_at_a_one_line_pending_note(
    fresh_runs: dict[str, tuple[Any, int | None]], stem: str
) -> None:
    notebook, failed = fresh_runs[stem]
    assert texts(code_cells(notebook)[0]) == [WORKSPACE_LABEL]
    assert failed is not None, "a fresh workspace has no lab written yet"
    shown = texts(notebook.cells[failed])
    assert len(shown) == 1 and shown[0].startswith("… pending · Lab 11."), shown
    assert "not implemented yet" in shown[0] and "\n" not in shown[0].strip()
    assert not any("Traceback" in text for cell in code_cells(notebook) for text in texts(cell))


@pytest.mark.parametrize("stem", STEMS)
def test_a_solved_workspace_shows_what_the_reference_shows(
    solved_runs: dict[str, Any], stem: str
) -> None:
    notebook = solved_runs[stem]
    assert errors(notebook) == []
    stored = code_cells(nbformat.read(NOTEBOOKS / f"{stem}.ipynb", as_version=4))
    ran = code_cells(notebook)
    assert texts(ran[0]) == [WORKSPACE_LABEL]
    assert len(ran) == len(stored)
    for number, (mine, theirs) in enumerate(zip(ran[1:], stored[1:], strict=True), start=2):
        assert comparable(mine) == comparable(theirs), f"{stem}, code cell {number}"
