"""The notebooks in a practice workspace: pending labs when fresh, the reference's views solved."""

from __future__ import annotations

from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import nbformat
import pytest
from notebook_support import NOTEBOOKS, code_cells, comparable, errors, run_notebook, texts

from course.harness.manifest import load_manifest

STEMS = sorted(path.stem for path in NOTEBOOKS.glob("*.ipynb"))


def run_all(workspace: Path) -> dict[str, Any]:
    """Every notebook copied into the workspace, executed (two kernels at a time)."""
    paths = [workspace / "notebooks" / f"{stem}.ipynb" for stem in STEMS]
    assert all(path.is_file() for path in paths), "practice copies every notebook"
    with ThreadPoolExecutor(max_workers=2) as pool:
        return dict(zip(STEMS, pool.map(run_notebook, paths), strict=True))


@pytest.fixture(scope="module")
def fresh_runs(fresh_workspace: Path) -> dict[str, Any]:
    return run_all(fresh_workspace)


@pytest.fixture(scope="module")
def solved_runs(solved_workspace: Path) -> dict[str, Any]:
    return run_all(solved_workspace)


def all_text(notebook: Any) -> Iterator[str]:
    for cell in code_cells(notebook):
        yield from texts(cell)


@pytest.mark.parametrize("stem", STEMS)
def test_a_fresh_workspace_runs_every_notebook_without_errors(
    fresh_runs: dict[str, Any], stem: str
) -> None:
    notebook = fresh_runs[stem]
    assert errors(notebook) == []
    assert texts(code_cells(notebook)[0]) == [
        "· Running your practice workspace (package pi_course)."
    ]
    assert not any("Traceback" in text for text in all_text(notebook))


def test_a_fresh_workspace_shows_every_lab_pending(fresh_runs: dict[str, Any]) -> None:
    shown = "\n".join(text for notebook in fresh_runs.values() for text in all_text(notebook))
    for lab in load_manifest("11").labs:
        assert f"… Lab {lab.id} · {lab.title}: 0/{lab.tests} passed ({lab.tests} pending)" in shown
    for lab_id in ("11.1", "11.2", "11.3", "11.4"):
        assert f"… pending: Lab {lab_id} " in shown, "views show the starter's message"


@pytest.mark.parametrize("stem", STEMS)
def test_a_solved_workspace_shows_what_the_reference_shows(
    solved_runs: dict[str, Any], stem: str
) -> None:
    notebook = solved_runs[stem]
    assert errors(notebook) == []
    stored = code_cells(nbformat.read(NOTEBOOKS / f"{stem}.ipynb", as_version=4))
    ran = code_cells(notebook)
    assert texts(ran[0]) == ["· Running your practice workspace (package pi_course)."]
    assert len(ran) == len(stored)
    for number, (mine, theirs) in enumerate(zip(ran[1:], stored[1:], strict=True), start=2):
        assert comparable(mine) == comparable(theirs), f"{stem}, code cell {number}"
