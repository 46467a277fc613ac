"""Re-run the notebooks and store outputs that compare equal on any machine.

``course-kit nbrefresh [NOTEBOOK ...]`` (default: every edition's notebooks)
executes each notebook with the reference implementation and writes it back with stable
cell ids, no timing metadata, no widget state and no widget views (a widget cell keeps its
plain-text summary), so that nbval can compare every stored output.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ..harness.kit import kit_root
from .notebooks import KERNELSPEC

WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"
LANGUAGE_INFO = {
    "name": "python",
    "pygments_lexer": "ipython3",
    "file_extension": ".py",
    "mimetype": "text/x-python",
    "nbconvert_exporter": "python",
}

UNSTABLE_TEXT: dict[str, re.Pattern[str]] = {
    "a machine path": re.compile(r"(?<![\w.])/(?:tmp|home|root|work|Users|var|private)/"),
    "a memory address": re.compile(r"\bat 0x[0-9a-fA-F]+|\b0x[0-9a-fA-F]{8,}\b"),
    "a timestamp": re.compile(r"\b\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}"),
    "a duration": re.compile(r"\b\d+\.\d+\s?s(?:econds)?\b"),
}
"""Text that would make a stored output differ between runs or machines."""


def clean(notebook: Any, stem: str) -> Any:
    """Make an executed notebook's stored form deterministic (modifies and returns it)."""
    notebook.metadata = {"kernelspec": dict(KERNELSPEC), "language_info": dict(LANGUAGE_INFO)}
    for index, cell in enumerate(notebook.cells, start=1):
        cell["id"] = f"{stem}-{index:02d}"
        cell.metadata.pop("execution", None)
        if cell.cell_type != "code":
            continue
        kept: list[Any] = []
        for output in cell.outputs:
            data = output.get("data")
            if data is not None:
                data.pop(WIDGET_VIEW, None)
                if not data:
                    continue
            last: Any = kept[-1] if kept else None
            same_stream = last is not None and last.output_type == output.output_type == "stream"
            if same_stream and last.name == output.name:
                last.text += output.text  # the kernel splits a stream where it likes; one per run
            else:
                kept.append(output)
        cell.outputs = kept
    return notebook


def problems(notebook: Any) -> list[str]:
    """What keeps a stored notebook from being a stable reference (empty when fine)."""
    found: list[str] = []
    if "widgets" in notebook.metadata:
        found.append("notebook metadata holds widget state")
    numbered = enumerate(notebook.cells, start=1)
    code = [(index, cell) for index, cell in numbered if cell.cell_type == "code"]
    for expected, (index, cell) in enumerate(code, start=1):
        where = f"cell {index}"
        if cell.execution_count != expected:
            found.append(f"{where}: execution count {cell.execution_count}, expected {expected}")
        if "execution" in cell.metadata:
            found.append(f"{where}: timing metadata")
        for output in cell.outputs:
            if output.output_type == "error":
                found.append(f"{where}: an error output ({output.get('ename')})")
            data = output.get("data", {})
            if WIDGET_VIEW in data:
                found.append(f"{where}: a widget view (its model id is random)")
            texts = [output.get("text", "")] + [v for v in data.values() if isinstance(v, str)]
            for text in texts:
                for what, pattern in UNSTABLE_TEXT.items():
                    if pattern.search(text):
                        found.append(f"{where}: {what} in the output")
    return found


def refresh(path: Path, *, timeout: float = 600) -> list[str]:
    """Execute ``path`` in a fresh kernel, clean it and write it back; returns its problems."""
    import nbformat
    from nbclient import NotebookClient

    notebook = nbformat.read(path, as_version=4)  # type: ignore[no-untyped-call]
    for cell in notebook.cells:
        if cell.cell_type == "code":
            cell.outputs = []
            cell.execution_count = None
    resources = {"metadata": {"path": str(path.parent)}}
    NotebookClient(
        notebook, timeout=timeout, kernel_name="python3", resources=resources,
        record_timing=False, store_widget_state=False,
    ).execute()  # fmt: skip
    clean(notebook, path.stem)
    nbformat.write(notebook, path)  # type: ignore[no-untyped-call]
    return problems(notebook)


def every_notebook() -> list[Path]:
    from ..harness.manifest import available_chapters, load_manifest

    found: set[Path] = set()
    for chapter in available_chapters():
        for folder in load_manifest(chapter).notebooks.values():
            found.update((kit_root() / folder).glob("*.ipynb"))
    return sorted(found)


def main(argv: Sequence[str] | None = None) -> int:
    names = sys.argv[1:] if argv is None else argv
    status = 0
    for path in [Path(name) for name in names] or every_notebook():
        found = refresh(path)
        print(f"{path.name}: {'; '.join(found) or 'ok'}")
        status |= bool(found)
    return status


if __name__ == "__main__":
    raise SystemExit(main())
