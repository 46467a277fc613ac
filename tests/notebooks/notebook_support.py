"""Helpers for the notebook tests: practice workspaces and notebooks run in a real kernel."""

from __future__ import annotations

import importlib.util
import shutil
import subprocess
import sys
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import nbformat
from nbclient import NotebookClient
from nbclient.exceptions import CellExecutionError

from course.harness.manifest import load_manifest
from course.tools.nbrefresh import WIDGET_VIEW

REPO = Path(__file__).resolve().parents[2]
CHAPTER = "11"
EDITIONS = {edition: REPO / folder for edition, folder in load_manifest(CHAPTER).notebooks.items()}
NOTEBOOKS = EDITIONS[load_manifest(CHAPTER).default_edition]


def create_workspace(folder: Path, edition: str | None = None) -> Path:
    """A fresh ``practice 11`` workspace in ``folder`` (made by the kit's own command)."""
    lang = ["--lang", edition] if edition else []
    subprocess.run(
        [sys.executable, "-m", "course.cli.practice", *lang, CHAPTER, str(folder)],
        check=True,
        capture_output=True,
        text=True,
    )
    return folder


def solve(workspace: Path) -> Path:
    """Replace every learner file of the workspace with the reference it is graded against."""
    for item in load_manifest(CHAPTER).files_with_role("learner"):
        shutil.copyfile(REPO / item.reference, workspace / item.path)
    return workspace


def solve_required(workspace: Path) -> Path:
    """Write every required lab with the reference's functions; the optional lab stays a stub."""
    spec = importlib.util.spec_from_file_location("solutions", REPO / "tests/harness/solutions.py")
    assert spec is not None and spec.loader is not None
    solutions = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(solutions)
    manifest = load_manifest(CHAPTER)
    for lab in manifest.required_labs:
        solutions.solve_lab(manifest, REPO, workspace, lab.id)
    return workspace


def run_notebook(path: Path, extra_cells: Iterable[str] = (), timeout: float = 300) -> Any:
    """Execute a notebook (plus ``extra_cells`` at its end) in a fresh kernel, in its folder."""
    notebook = nbformat.read(path, as_version=4)
    for source in extra_cells:
        notebook.cells.append(nbformat.v4.new_code_cell(source))
    client = NotebookClient(
        notebook,
        timeout=timeout,
        kernel_name="python3",
        resources={"metadata": {"path": str(path.parent)}},
        allow_errors=True,
    )
    client.execute()
    return notebook


def run_until_error(path: Path, timeout: float = 300) -> tuple[Any, int | None]:
    """Execute cells in order as "Run All" does; the notebook and the failing cell's index."""
    notebook = nbformat.read(path, as_version=4)
    client = NotebookClient(
        notebook,
        timeout=timeout,
        kernel_name="python3",
        resources={"metadata": {"path": str(path.parent)}},
    )
    with client.setup_kernel():
        for index, cell in enumerate(notebook.cells):
            try:
                client.execute_cell(cell, index)
            except CellExecutionError:
                return notebook, index
    return notebook, None


def texts(cell: Any) -> list[str]:
    """A code cell's outputs as plain text: streams, text/plain, and errors as 'ename: evalue'."""
    found = []
    for output in cell.get("outputs", []):
        if output.output_type == "stream":
            found.append(output.text)
        elif output.output_type == "error":
            found.append(f"{output.ename}: {output.evalue}")
        else:
            found.append(output.get("data", {}).get("text/plain", ""))
    return found


def errors(notebook: Any) -> list[str]:
    """Every error output of an executed notebook, as 'cell N: ename: evalue'."""
    return [
        f"cell {index}: {output.ename}: {output.evalue}"
        for index, cell in enumerate(notebook.cells, start=1)
        for output in cell.get("outputs", [])
        if output.output_type == "error"
    ]


def comparable(cell: Any) -> list[dict[str, Any]]:
    """A cell's outputs as nbval compares them: data without widget views, and stream text
    (consecutive stream outputs joined, as nbval joins them)."""
    found: list[dict[str, Any]] = []
    for output in cell.get("outputs", []):
        if output.output_type == "stream":
            if found and set(found[-1]) == {"text"}:  # a kernel splits a stream where it likes
                found[-1] = {"text": found[-1]["text"] + output.text}
            else:
                found.append({"text": output.text})
        elif "data" in output:
            found.append({k: v for k, v in output.data.items() if k != WIDGET_VIEW})
    return found


def code_cells(notebook: Any) -> list[Any]:
    return [cell for cell in notebook.cells if cell.cell_type == "code"]
