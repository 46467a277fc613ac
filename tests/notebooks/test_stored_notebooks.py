"""The stored notebooks: built from their sources, alike in both editions, teaching the API."""

from __future__ import annotations

import re
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import nbformat
import pytest
from notebook_support import EDITIONS, NOTEBOOKS, REPO, code_cells

from course.harness.manifest import load_manifest
from course.tools.nbrefresh import WIDGET_VIEW, clean, problems
from course.tools.notebooks import (
    NotebookSourceError,
    parse_source,
    planned,
    stale_notebooks,
    write_notebooks,
)

MANIFEST = load_manifest("11")
PATHS = sorted(path for folder in EDITIONS.values() for path in folder.glob("*.ipynb"))
LAB_CHECK = re.compile(r'^check\("(\d+\.[\w]+)"\)$', re.MULTILINE)
REFERENCE_IMPORT = re.compile(
    r"^\s*(from|import)\s+course\.(?!display\b|interop\b|curricula\.ch11\b)", re.MULTILINE
)


def read(path: Path) -> nbformat.NotebookNode:
    return nbformat.read(path, as_version=4)


def label(path: Path) -> str:
    return path.relative_to(REPO).as_posix()


@pytest.mark.parametrize("path", PATHS, ids=label)
def test_stored_outputs_are_stable(path: Path) -> None:
    assert problems(read(path)) == []


def test_every_edition_has_every_notebook_with_the_same_code_cells() -> None:
    english = sorted(p.name for p in NOTEBOOKS.glob("*.ipynb"))
    assert set(EDITIONS) == {"en", "zh"}
    for folder in EDITIONS.values():
        assert sorted(p.name for p in folder.glob("*.ipynb")) == english
    for name in english:
        cells = {e: [c.source for c in code_cells(read(f / name))] for e, f in EDITIONS.items()}
        assert cells["zh"] == cells["en"], f"{name}: the editions' code cells differ"
        prose = {
            e: [c.source for c in read(f / name).cells if c.cell_type == "markdown"]
            for e, f in EDITIONS.items()
        }
        assert len(prose["zh"]) == len(prose["en"])
        assert all(re.search(r"[\u4e00-\u9fff]", text) for text in prose["zh"][:1])


def test_the_notebooks_are_what_their_sources_build() -> None:
    run = subprocess.run(
        [sys.executable, "-m", "course.tools.maintainer", "notebooks", "--check"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert run.returncode == 0, run.stderr


@pytest.mark.parametrize("path", PATHS, ids=label)
def test_cells_reach_the_chapter_only_through_the_learners_package(path: Path) -> None:
    cells = code_cells(read(path))
    assert 'open_chapter("11")' in cells[0].source
    for cell in cells:
        assert not REFERENCE_IMPORT.search(cell.source), cell.source


def test_every_lab_notebook_calls_its_labs_functions_by_name_and_ends_with_its_check() -> None:
    for lab in MANIFEST.labs:
        for folder in EDITIONS.values():
            notebook = read(folder / lab.notebook)
            code = "\n".join(cell.source for cell in code_cells(notebook))
            public = [f.function for f in lab.functions if not f.function.startswith("_")]
            called = [name for name in public if re.search(rf"\b{name}\(", code)]
            assert called, f"{lab.notebook} never calls one of {public}"
            assert lab.id in LAB_CHECK.findall(code), f"{lab.notebook} lacks check({lab.id!r})"


PASSING = {
    "en": r"✓ (Lab \d+\.\w+ +.+ |Chapter 11: )(\d+)/\2 tests · (\d+)/\3 cases,? +passed",
    "zh": r"✓ (Lab \d+\.\w+ +.+ |第 11 章：)(\d+)/\2 项测试 · (\d+)/\3 个用例(，| +)通过",
}
"""A passing check's headline in each edition: every test passed, every probe case agreed."""


def test_the_stored_checks_show_the_reference_passing() -> None:
    for edition, folder in EDITIONS.items():
        for path in sorted(folder.glob("*.ipynb")):
            for cell in code_cells(read(path)):
                if LAB_CHECK.match(cell.source.strip()):
                    text = "".join(o.data["text/plain"] for o in cell.outputs)
                    first = text.splitlines()[0]
                    assert re.match(PASSING[edition], first), f"{label(path)}: {first}"


def test_a_source_with_a_missing_edition_names_the_line() -> None:
    source = "<!-- en -->\n# Title\n<!-- code -->\nx = 1\n"
    with pytest.raises(NotebookSourceError, match=r"demo.md:1: .* lacks its zh text"):
        parse_source(source, ["en", "zh"], "demo.md")
    with pytest.raises(NotebookSourceError, match=r"demo.md:1: text before the first marker"):
        parse_source("stray\n<!-- code -->\nx\n", ["en", "zh"], "demo.md")
    with pytest.raises(NotebookSourceError, match=r"unknown edition 'fr'"):
        parse_source("<!-- fr -->\nBonjour\n", ["en", "zh"], "demo.md")
    cells = parse_source(
        "<!-- en -->\nHi\n<!-- zh -->\n你好\n<!-- code -->\nx\n", ["en", "zh"], "d"
    )
    assert [(c.kind, c.texts) for c in cells] == [
        ("markdown", {"en": "Hi", "zh": "你好"}),
        ("code", {"code": "x"}),
    ]


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


def test_a_chapter_builds_the_notebooks_its_manifest_lists_from_its_own_sources(
    tmp_path: Path,
) -> None:
    """``course-kit notebooks`` per chapter: a listed notebook without a source, a source the
    manifest does not list and a built notebook no chapter gives are each named."""
    kit = tmp_path
    manifest = replace(MANIFEST, notebook_sources="src", other_notebooks=())
    (kit / "src").mkdir()
    source = "<!-- en -->\nHello.\n<!-- zh -->\n你好。\n<!-- code -->\nx = 1\n"
    (kit / "src" / "11-1-compaction-record.md").write_text(source, encoding="utf-8")
    built = [
        kit / folder / "11-1-compaction-record.ipynb" for folder in manifest.notebooks.values()
    ]
    assert sorted(planned(kit, manifest)) == sorted(built)
    stale = stale_notebooks(kit, [manifest])
    assert "notebooks/11-1-compaction-record.ipynb is missing" in stale
    assert "notebooks/zh/11-2-interaction-groups.ipynb has no source in src" in stale
    assert write_notebooks(kit, manifest) == built
    (kit / "notebooks" / "11-0-chapter.ipynb").write_text("{}", encoding="utf-8")
    stale = stale_notebooks(kit, [manifest])
    assert "notebooks/11-0-chapter.ipynb has no source in any chapter" in stale
    assert not [line for line in stale if line.startswith("notebooks/11-1-")]
    (kit / "src" / "11-9-extra.md").write_text(source, encoding="utf-8")
    with pytest.raises(NotebookSourceError, match=r"src/11-9-extra\.md: 11-9-extra\.ipynb is not"):
        planned(kit, manifest)
