"""``course-kit new-chapter N DIR``: a chapter's folder to fill in, meeting the contract at once.

The skeleton is a whole chapter of two labs: a manifest with every field, a reference module,
its starter, the focused tests and their conftest, a probe module, a notebook source in both
editions (built and run), a ``babel.cfg`` and a zh catalog that translates every message, and a
glossary. ``course-kit chapters``, ``starters --check``, ``notebooks --check``, ``catalogs
--check`` pass on it, and ``checkpoint N`` passes on its reference: a maintainer replaces its
texts and code lab by lab, keeping it green (docs/chapters.md, "Adding a chapter").
"""

from __future__ import annotations

import os
import re
import tomllib
from pathlib import Path
from string import Template

from ..harness.kit import kit_root
from ..harness.manifest import (
    BUILT_IN_FOLDER,
    CHAPTER_ROOTS,
    MANIFEST_NAME,
    available_chapters,
    load_manifest,
)
from ..locale import CHAPTER_EDITION
from . import catalogs

SKELETON = Path(__file__).resolve().with_name("skeleton")
"""The skeleton's templates (``$N`` the chapter, ``$M`` its module, ``$P`` its parent…)."""
FILES = {
    MANIFEST_NAME: "chapter.toml.tmpl",
    "$M.py": "module.py.tmpl",
    "tests/conftest.py": "conftest.py.tmpl",
    "tests/test_${U}_labs.py": "test_labs.py.tmpl",
    "probes.py": "probes.py.tmpl",
    "notebooks/$N-labs.md": "labs.md.tmpl",
    "babel.cfg": "babel.cfg.tmpl",
    "locale/zh/glossary.toml": "glossary.toml.tmpl",
}
"""Each file of the skeleton (its path in the chapter's folder), from its template."""
WITHOUT_PARENT = {"given/__init__.py": "init.py.tmpl"}
"""What a chapter without a parent gives its workspace besides (and ``given/labs.py``, the
kit's own ``LabNotImplemented``, generated from it)."""
CARD_PARENT = {
    True: "chapter $P complete; the chapter $N starter raises LabNotImplemented at every lab",
    False: "nothing yet: the chapter $N starter raises LabNotImplemented at every lab",
}


class NewChapterError(ValueError):
    """The skeleton cannot be written there (the message says why)."""


def module_name(chapter: str) -> str:
    """The default name of the chapter's module: ``chapter13`` (a Python identifier)."""
    return "chapter" + re.sub(r"\W", "_", chapter)


def skeleton(chapter: str, module: str, parent: str | None) -> dict[str, str]:
    """The skeleton's hand-written files by their path in the chapter's folder (the starter,
    the built notebooks and the catalog are generated from them)."""
    values = {"N": chapter, "U": re.sub(r"\W", "_", chapter), "M": module, "P": parent or ""}
    values |= {
        "SEED": str(int(chapter)) if chapter.isdigit() else "0",
        "PARENT": f'parent = "{parent}"  # its modules come first, given\n' if parent else "",
        "PACKAGE_NOTE": ", its parent's" if parent else "",
        "CARD_PARENT": Template(CARD_PARENT[parent is not None]).substitute(values),
        "GIVEN": "" if parent else _template("given.toml.tmpl"),
        "GIVEN_LESSON": "" if parent else "[lesson: given/*.py]\n",
    }
    files = {
        Template(path).substitute(values): _template(template)
        for path, template in (FILES | ({} if parent else WITHOUT_PARENT)).items()
    }
    written = {path: Template(text).substitute(values) for path, text in files.items()}
    if parent is None:
        written["given/labs.py"] = (kit_root() / "course" / "labs.py").read_text(encoding="utf-8")
    return written


def _template(name: str) -> str:
    return (SKELETON / name).read_text(encoding="utf-8")


def translations(chapter: str, module: str, parent: str | None) -> dict[str, str]:
    """The skeleton's texts in Chinese, by their English (whitespace collapsed)."""
    values = {"N": chapter, "M": module, "P": parent or ""}
    text = Template(_template("translations.toml.tmpl")).substitute(values)
    return {_collapsed(m["source"]): m["translation"] for m in tomllib.loads(text)["message"]}


def _collapsed(text: str) -> str:
    return " ".join(text.split())


def write_chapter(chapter: str, folder: Path, module: str, parent: str | None) -> list[Path]:
    """Write the skeleton into ``folder`` (new, or empty), then generate its starter, its
    notebooks (run: their outputs stored) and its catalog; returns the files written."""
    from .nbrefresh import refresh
    from .notebooks import write_notebooks
    from .starters import write_starters

    folder = folder.absolute()
    if folder.exists() and any(folder.iterdir()):
        raise NewChapterError(f"{folder}: not empty; name a new folder for the chapter")
    if not module.isidentifier() or (kit_root() / "course" / f"{module}.py").exists():
        said = "not a Python module name, or one the kit's course package has"
        raise NewChapterError(f"{module!r}: {said} (--module NAME)")
    if chapter in available_chapters():
        raise NewChapterError(
            f"chapter {chapter!r} exists already ({load_manifest(chapter).source})"
        )
    if parent is not None and parent not in available_chapters():
        raise NewChapterError(
            f"no chapter {parent!r} to build on (chapters: {', '.join(available_chapters())})"
        )
    for path, text in skeleton(chapter, module, parent).items():
        (folder / path).parent.mkdir(parents=True, exist_ok=True)
        (folder / path).write_text(text, encoding="utf-8")
    found_here(folder)
    manifest = load_manifest(chapter)
    kit = kit_root()
    write_starters(manifest, kit)
    catalog = catalogs.chapter_catalog(manifest, folder)
    known = catalogs.known_translations(catalogs.all_catalogs())
    known[CHAPTER_EDITION] = translations(chapter, module, parent) | known[CHAPTER_EDITION]
    catalogs.update(catalog, _collapsed_keys(known, catalog))
    for notebook in write_notebooks(kit, manifest):
        if problems := refresh(notebook):
            raise NewChapterError(f"{notebook}: {'; '.join(problems)}")
    return sorted(
        path for path in folder.rglob("*") if path.is_file() and "__pycache__" not in path.parts
    )


def _collapsed_keys(known: catalogs.Known, catalog: catalogs.Catalog) -> catalogs.Known:
    """``known`` with every message of ``catalog``'s sources that it holds once its whitespace
    is collapsed (a docstring's lines as the extractor gives them)."""
    messages = [message.id for message in catalogs.template(catalog) if isinstance(message.id, str)]
    out = {edition: dict(held) for edition, held in known.items()}
    for edition, held in known.items():
        for message in messages:
            if message and message not in held and _collapsed(message) in held:
                out[edition][message] = held[_collapsed(message)]
    return out


def found_here(folder: Path) -> None:
    """This process finds the chapter in ``folder`` (``COURSE_CHAPTERS`` names its parent
    folder, unless it is a built-in chapter's), and so do the kernels it starts."""
    root = folder.parent
    if root == kit_root() / BUILT_IN_FOLDER:
        return
    named = [part for part in os.environ.get(CHAPTER_ROOTS, "").split(os.pathsep) if part]
    if not any(Path(part).absolute() == root for part in named):
        os.environ[CHAPTER_ROOTS] = os.pathsep.join([*named, str(root)])


def main(chapter: str, folder: Path, module: str | None, parent: str | None) -> int:
    module = module or module_name(chapter)
    written = write_chapter(chapter, folder, module, parent)
    print(f"wrote chapter {chapter} in {folder.absolute()} ({len(written)} files)")
    root = folder.absolute().parent
    if root != kit_root() / BUILT_IN_FOLDER:
        print(f"the kit finds it with {CHAPTER_ROOTS}={root} (docs/chapters.md, Adding a chapter)")
    return 0
