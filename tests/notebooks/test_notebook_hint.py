"""``hint("11.1")`` works in every notebook of a fresh workspace, where the docs say it does.

LEARNING.md, docs/learners.md and docs/zh/learners.md tell a learner to call ``hint("11.3")``
in a notebook: each notebook's import cell gives the name, in both editions.
"""

from __future__ import annotations

from pathlib import Path

import nbformat
import pytest
from notebook_support import CHAPTER, code_cells, create_workspace, run_notebook, texts

pytestmark = pytest.mark.costly  # one kernel per edition

HEADS = {"en": "Hint ", "zh": "提示 "}


@pytest.mark.parametrize("edition", sorted(HEADS))
def test_each_notebooks_import_cell_gives_hint_in_a_fresh_workspace(
    tmp_path: Path, edition: str
) -> None:
    workspace = create_workspace(tmp_path / f"practice-{edition}", edition)
    notebooks = sorted((workspace / "notebooks").glob("*.ipynb"))
    assert len(notebooks) == 8
    cells = []
    for path in notebooks:
        first = code_cells(nbformat.read(path, as_version=4))[0].source
        # each notebook's import cell alone, then the call the docs give, then the name gone
        cells += [first, f'hint("{CHAPTER}.1")', "del hint"]
    probe = workspace / "notebooks" / "hint-probe.ipynb"
    nbformat.write(nbformat.v4.new_notebook(cells=[]), probe)
    ran = code_cells(run_notebook(probe, cells))
    for path, index in zip(notebooks, range(1, len(ran), 3), strict=True):
        shown = "".join(texts(ran[index]))
        assert shown.startswith(HEADS[edition]), f"{path.name}: hint() gave {shown[:200]!r}"
        assert "NameError" not in shown
    assert (workspace / ".course-hints.toml").is_file(), "the level opened is recorded"
