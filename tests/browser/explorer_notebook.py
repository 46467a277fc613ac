"""The notebook under test: a fresh copy of the Lab 11.3 notebook plus a probe cell."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]
SOURCE = REPO / "notebooks" / "11-3-budget-projection.ipynb"
"""The notebook whose ``explorer = BudgetExplorer(…)`` cell shows the nine-entry explorer."""
COPY_NAME = "budget-explorer.ipynb"
EXPLORER_VARIABLE = "explorer"
SLIDER = "max_tokens"
"""The description (visible label) of the slider the test moves."""
PROBE_ID = "browser-probe"
PROBE_MARKER = "print('probe max_tokens ='"
"""Finds the probe cell by its source (JupyterLab does not put cell ids in the DOM)."""
PROBE_SOURCE = (
    f"{PROBE_MARKER}, {EXPLORER_VARIABLE}.max_tokens.value)\n"
    f"print('probe kept =', ', '.join({EXPLORER_VARIABLE}.result.kept_entry_ids))\n"
    f"print('probe reason =', {EXPLORER_VARIABLE}.result.reason)"
)
PYTHON_KERNEL = {"display_name": "Python 3 (ipykernel)", "language": "python", "name": "python3"}


@dataclass(frozen=True)
class Expected:
    """What the chapter says the projection is for one ``max_tokens``."""

    max_tokens: int
    kept: tuple[str, ...]
    reason: str

    @property
    def kept_text(self) -> str:
        return ", ".join(self.kept)

    @property
    def probe_lines(self) -> list[str]:
        """The probe cell's output when the kernel holds this budget."""
        return [
            f"probe max_tokens = {self.max_tokens}",
            f"probe kept = {self.kept_text}",
            f"probe reason = {self.reason}",
        ]


TRIMMED_31 = Expected(31, ("u2", "a2", "u3", "calls", "r-test", "r-read", "a3"), "trimmed")
"""22 tokens for messages: the newest two groups (15 + 7) fit exactly."""
OVERFLOW_19 = Expected(19, ("u3", "calls", "r-test", "r-read", "a3"), "single_group_overflow")
"""10 tokens for messages: the newest group (15) is still sent whole."""


def probe_cell() -> dict[str, Any]:
    """A code cell that prints what the kernel's explorer holds."""
    return {
        "cell_type": "code",
        "execution_count": None,
        "id": PROBE_ID,
        "metadata": {},
        "outputs": [],
        "source": PROBE_SOURCE,
    }


def prepare_copy(target_dir: Path, source: Path = SOURCE) -> Path:
    """Copy ``source`` into ``target_dir`` without outputs, with a kernel and the probe at the end.

    Clearing the stored outputs makes sure everything the test reads was produced by the
    kernel during the test, not saved with the notebook.
    """
    notebook: dict[str, Any] = json.loads(source.read_text(encoding="utf-8"))
    cells: list[dict[str, Any]] = notebook["cells"]
    sources = [
        "".join(c["source"]) if isinstance(c["source"], list) else c["source"] for c in cells
    ]
    if not any(f"{EXPLORER_VARIABLE} = " in text for text in sources):
        raise ValueError(f"{source.name}: no cell assigns `{EXPLORER_VARIABLE} = …`")
    for cell in cells:
        if cell["cell_type"] == "code":
            cell["outputs"] = []
            cell["execution_count"] = None
    cells.append(probe_cell())
    metadata: dict[str, Any] = notebook.setdefault("metadata", {})
    metadata["kernelspec"] = PYTHON_KERNEL
    target = target_dir / COPY_NAME
    target.write_text(json.dumps(notebook, indent=1, ensure_ascii=False), encoding="utf-8")
    return target


def code_cell_count(notebook: Path) -> int:
    """How many code cells ``notebook`` holds."""
    data: dict[str, Any] = json.loads(notebook.read_text(encoding="utf-8"))
    return sum(1 for cell in data["cells"] if cell["cell_type"] == "code")
