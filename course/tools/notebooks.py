"""Notebooks built from one source per notebook: shared code cells, prose in every edition.

A chapter's notebook sources are in its folder (``course/curricula/chNN/notebooks/NAME.md``, or
the manifest's ``notebook_sources``). A source is a sequence of blocks, each opened by a marker
line: ``<!-- code -->`` starts a code cell; ``<!-- en -->``, ``<!-- zh -->`` … start one
edition's text of a markdown cell, and every edition's block follows in turn. Building writes
``NAME.ipynb`` into each edition's folder (the manifest's ``notebooks`` table), so the code
cells of the editions are the same by construction.
"""

from __future__ import annotations

import html
import json
import re
from collections.abc import Collection, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..harness.kit import shown
from ..harness.manifest import Manifest

MARKER = re.compile(r"^<!-- (code|[a-z]{2}) -->\s*$")
KERNELSPEC = {"name": "python3", "display_name": "Python 3 (ipykernel)", "language": "python"}


class NotebookSourceError(ValueError):
    """A notebook source is malformed; the message names the file and line."""


@dataclass(frozen=True)
class Cell:
    """One cell: code (the same in every edition) or markdown text per edition."""

    kind: str
    texts: dict[str, str]


def parse_source(text: str, editions: Sequence[str], where: str) -> list[Cell]:
    """The cells of one source file; every markdown cell has every edition's text."""
    blocks: list[tuple[str, int, list[str]]] = []
    for number, line in enumerate(text.splitlines(), start=1):
        if found := MARKER.match(line):
            blocks.append((found.group(1), number, []))
        elif blocks:
            blocks[-1][2].append(line)
        elif line.strip():
            raise NotebookSourceError(f"{where}:{number}: text before the first marker")
    cells: list[Cell] = []
    pending: dict[str, str] = {}
    start = 0

    def close() -> None:
        """End the markdown cell in ``pending``, which must have every edition's text."""
        missing = [e for e in editions if e not in pending]
        if pending and missing:
            raise NotebookSourceError(
                f"{where}:{start}: the markdown cell here lacks its {', '.join(missing)} text"
            )
        pending.clear()

    for kind, number, lines in blocks:
        body = "\n".join(lines).strip("\n")
        if kind == "code":
            close()
            cells.append(Cell("code", {"code": body}))
            continue
        if kind not in editions:
            raise NotebookSourceError(f"{where}:{number}: unknown edition {kind!r}")
        if kind in pending:
            close()
        if not pending:
            start = number
        pending[kind] = body
        if len(pending) == len(editions):
            cells.append(Cell("markdown", dict(pending)))
            pending.clear()
    close()
    return cells


def edition_notebook(cells: Sequence[Cell], edition: str, stem: str) -> dict[str, Any]:
    """One edition's notebook (no outputs yet) as JSON data."""
    out: list[dict[str, Any]] = []
    for index, cell in enumerate(cells, start=1):
        fields: dict[str, Any] = {"id": f"{stem}-{index:02d}", "metadata": {}}
        if cell.kind == "code":
            fields = {"execution_count": None, **fields, "outputs": []}
        source = cell.texts["code" if cell.kind == "code" else edition]
        out.append({"cell_type": cell.kind, **fields, "source": source})
    return {
        "cells": out,
        "metadata": {"kernelspec": dict(KERNELSPEC), "language_info": {"name": "python"}},
        "nbformat": 4,
        "nbformat_minor": 5,
    }


def cell_sources(notebook: dict[str, Any]) -> list[tuple[str, str]]:
    """(type, source) per cell: what the check compares."""
    out: list[tuple[str, str]] = []
    for cell in notebook.get("cells", []):
        kind, source = cell.get("cell_type", ""), cell.get("source", "")
        out.append((kind, "".join(source) if isinstance(source, list) else source))
    return out


def stray_sources(kit: Path, manifest: Manifest) -> list[str]:
    """The chapter's notebook sources whose notebook the manifest does not list (a lab's
    ``notebook``, ``other_notebooks``), each said."""
    folder = manifest.source_folder
    return [
        f"{folder}/{source.name}: {source.stem}.ipynb is not a notebook of {manifest.source} "
        "(a lab's notebook or other_notebooks)"
        for source in (sorted((kit / folder).glob("*.md")) if folder else [])
        if f"{source.stem}.ipynb" not in manifest.notebook_names
    ]


def planned(kit: Path, manifest: Manifest) -> dict[Path, dict[str, Any]]:
    """Every edition's notebook that the chapter's sources give, by its path; a source whose
    notebook the manifest does not list is an error (``stray_sources``)."""
    if stray := stray_sources(kit, manifest):
        raise NotebookSourceError(stray[0])
    out = {}
    folder = manifest.source_folder
    for source in sorted((kit / folder).glob("*.md")) if folder else []:
        where = f"{folder}/{source.name}"
        cells = parse_source(source.read_text(encoding="utf-8"), list(manifest.notebooks), where)
        for edition, edition_folder in manifest.notebooks.items():
            path = kit / edition_folder / f"{source.stem}.ipynb"
            out[path] = edition_notebook(cells, edition, source.stem)
    return out


def _matches(path: Path, notebook: dict[str, Any]) -> bool:
    """Whether the stored notebook at ``path`` has the cells of ``notebook``."""
    stored = json.loads(path.read_text(encoding="utf-8"))
    return cell_sources(stored) == cell_sources(notebook)


def stale_notebooks(kit: Path, manifests: Sequence[Manifest]) -> list[str]:
    """Notebooks whose cells differ from their source, that no source gives, or that a chapter
    lists without a source (the editions' folders may hold several chapters' notebooks)."""
    stale = []
    plan: dict[Path, dict[str, Any]] = {}
    for manifest in manifests:
        chapter = planned(kit, manifest)
        plan |= chapter
        for name in manifest.notebook_names:
            for folder in manifest.notebooks.values():
                if kit / folder / name not in chapter:
                    stale.append(f"{folder}/{name} has no source in {manifest.source_folder}")
    for path, notebook in plan.items():
        if not path.is_file():
            stale.append(f"{shown(path, kit)} is missing")
        elif not _matches(path, notebook):
            stale.append(f"{shown(path, kit)} differs from its source")
    folders = sorted({folder for manifest in manifests for folder in manifest.notebooks.values()})
    for folder in folders:
        stale += [
            f"{shown(path, kit)} has no source in any chapter"
            for path in sorted((kit / folder).glob("*.ipynb"))
            if path not in plan
        ]
    return list(dict.fromkeys(stale))


def write_notebooks(kit: Path, manifest: Manifest) -> list[Path]:
    """Write every notebook of the chapter whose cells changed; returns the paths written
    (outputs cleared)."""
    written = []
    for path, notebook in planned(kit, manifest).items():
        if path.is_file() and _matches(path, notebook):
            continue
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(notebook, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
        written.append(path)
    return written


def output_text(notebook: dict[str, Any]) -> str:
    """What a notebook's stored outputs show as text: streams, plain text, HTML without tags."""
    shown = []
    for cell in notebook.get("cells", []):
        for output in cell.get("outputs", []):
            data = output.get("data", {})
            texts = [output.get("text", ""), data.get("text/plain", "")]
            if "text/plain" not in data and "text/html" in data:
                markup = "".join(data["text/html"])
                texts.append(html.unescape(re.sub(r"<[^>]+>", " ", markup)))
            shown += ["".join(text) if isinstance(text, list) else str(text) for text in texts]
    return "\n".join(shown)


def outputs_behind(
    path: Path, english: Collection[str], lab_lines: Sequence[str] = ()
) -> list[str]:
    """What the notebook at ``path`` still shows in English in its stored outputs, stored before
    the translation: the ``english`` texts (those its edition's catalogs translate), and the
    labs' lines (``Lab 13.1  clip``) of ``lab_lines``, regular expressions."""
    shown = output_text(json.loads(path.read_text(encoding="utf-8")))
    found = sorted(text for text in english if text in shown)
    return found + [m.group(0) for line in lab_lines if (m := re.search(line, shown))]
