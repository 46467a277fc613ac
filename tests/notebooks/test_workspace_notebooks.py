"""The notebooks in a practice workspace: pending labs when fresh, the reference's views solved."""

from __future__ import annotations

import re
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

pytestmark = pytest.mark.costly  # handed to a worker first (tests/schedule.py)

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


@pytest.fixture(scope="module")
def required_runs(required_workspaces: list[Path]) -> dict[str, tuple[Any, int | None]]:
    """Run All of every notebook of both editions, at 14/14 with the optional lab unwritten."""
    paths = [path for workspace in required_workspaces for path in in_workspace(workspace)]
    with ThreadPoolExecutor(max_workers=2) as pool:
        runs = list(pool.map(run_until_error, paths))
    return {f"{p.parents[1].name}/{p.name}": run for p, run in zip(paths, runs, strict=True)}


# Each class runs on one worker (pytest-xdist, --dist loadscope) and runs its workspace's
# notebooks only: the three kinds of run share the workers.


class TestFreshWorkspace:
    @pytest.mark.parametrize("stem", STEMS)
    def test_in_a_fresh_workspace_run_all_goes_on_past_one_line_pending_notes(
        self, fresh_runs: dict[str, tuple[Any, int | None]], stem: str
    ) -> None:
        notebook, failed = fresh_runs[stem]
        assert texts(code_cells(notebook)[0]) == [WORKSPACE_LABEL]
        assert failed is None, (
            f"Run All stopped at cell {failed}: {texts(notebook.cells[failed or 0])}"
        )
        pending = [
            t for c in code_cells(notebook) for t in texts(c) if t.startswith("… pending · ")
        ]
        assert pending, "a fresh workspace has no lab written yet"
        assert all("\n" not in note.strip() for note in pending), "each note is one line"
        assert any("not implemented yet" in note for note in pending)
        assert not any("Traceback" in text for cell in code_cells(notebook) for text in texts(cell))


class TestRequiredWorkspaces:
    def test_at_14_of_14_run_all_completes_in_every_notebook_of_both_editions(
        self,
        required_runs: dict[str, tuple[Any, int | None]],
    ) -> None:
        stopped = {
            name: failed for name, (_, failed) in required_runs.items() if failed is not None
        }
        assert stopped == {}, "Run All stopped (notebook: cell)"
        for name, (notebook, _) in required_runs.items():
            shown = [t for c in code_cells(notebook) for t in texts(c)]
            assert not any("Traceback" in t for t in shown), name
            pending = [t for t in shown if "pending · Lab 11." in t or "待实现 · Lab 11." in t]
            assert all("Lab 11.opt" in t for t in pending), name
            if name.startswith("zh/") and "budget-projection" in name:  # the zh edition's own words
                assert any(t.startswith("… 待实现 · Lab 11.opt") for t in pending), name


class TestSolvedWorkspace:
    @pytest.mark.parametrize("stem", STEMS)
    def test_a_solved_workspace_shows_what_the_reference_shows(
        self, solved_runs: dict[str, Any], stem: str
    ) -> None:
        notebook = solved_runs[stem]
        assert errors(notebook) == []
        stored = code_cells(nbformat.read(NOTEBOOKS / f"{stem}.ipynb", as_version=4))
        ran = code_cells(notebook)
        assert texts(ran[0]) == [WORKSPACE_LABEL]
        assert len(ran) == len(stored)
        for number, (mine, theirs) in enumerate(zip(ran[1:], stored[1:], strict=True), start=2):
            assert by_name(comparable(mine)) == comparable(theirs), f"{stem}, code cell {number}"


def by_name(outputs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Outputs with a replay command by the kit's plain name: in a workspace it is printed as
    the learner's shell runs it (the full path into .venv when ``checkpoint`` is not on PATH),
    in the kit's own notebooks by name."""
    path = re.compile(r"[^\s'\"<>]*/checkpoint (\d+ --replay)")
    return [
        {
            key: path.sub(r"checkpoint \1", value) if isinstance(value, str) else value
            for key, value in output.items()
        }
        for output in outputs
    ]
