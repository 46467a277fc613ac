"""Practice workspaces: laying one out and writing its marker (``sandboxed/marker.py`` reads it)."""

from __future__ import annotations

import functools
import itertools
import json
import os
import shutil
import tempfile
from datetime import UTC, datetime
from pathlib import Path

from ..labs import stub_message
from ..locale import N_, SOURCE_EDITION, translations
from ..locale import gettext as _
from ..sandboxed.columns import wrap
from ..sandboxed.commands import BY_NAME, Commands
from ..sandboxed.marker import MARKER, WorkspaceError
from .docstrings import localized
from .kit import digest, fingerprint, notebook_sources, read_source, scaffold_files
from .learning import render_learning
from .manifest import Manifest

REUSE_REFUSED = N_("start a new practice directory; do not reuse a modified scaffold")

PYTEST_INI = """\
[pytest]
testpaths = tests
{why}
addopts = --disable-plugin-autoload -p no:cacheprovider
markers =
    lab(id): {marker}
"""
PLUGINS_OFF = N_(
    "The focused tests need no plugin, and every installed one (nbval, hypothesis...) costs "
    "seconds at each start: autoloading is off, and no cache is written here."
)
LAB_MARKER = N_("the lab a focused test belongs to")
MARKER_COMMENT = N_(
    "A practice workspace of the course kit; checkpoint and the notebooks find it by this "
    "file. The checksums let checkpoint tell a shipped file this scaffold made from an edit."
)


def comment(text: str, edition: str) -> list[str]:
    """``text`` in ``edition`` as the lines of a ``#`` comment, at most 96 columns wide."""
    return [f"# {line}" for line in wrap(translations(edition).gettext(text), 94)]


def pytest_ini(edition: str) -> str:
    """A workspace's ``pytest.ini``, its comments in ``edition``."""
    said = translations(edition).gettext
    return PYTEST_INI.format(why="\n".join(comment(PLUGINS_OFF, edition)), marker=said(LAB_MARKER))


def render_marker(
    manifest: Manifest,
    starter: str,
    checksums: dict[str, str],
    when: str,
    edition: str = SOURCE_EDITION,
) -> str:
    """The marker file's TOML text."""
    lines = [
        *comment(MARKER_COMMENT, edition),
        f"chapter = {json.dumps(manifest.chapter)}",
        f"package = {json.dumps(manifest.package)}",
        f"starter_fingerprint = {json.dumps(starter)}",
        f"edition = {json.dumps(edition)}",
        f"created = {json.dumps(when)}",
        "",
        "[checksums]",
    ]
    lines += [f"{json.dumps(path)} = {json.dumps(value)}" for path, value in checksums.items()]
    return "\n".join(lines) + "\n"


def default_directory(manifest: Manifest, here: Path) -> Path:
    """A fresh directory in ``here``: ``practice-11``, else ``practice-11-2``, and so on."""
    name = manifest.default_workspace
    names = itertools.chain([name], (f"{name}-{number}" for number in itertools.count(2)))
    return next(here / folder for folder in names if not (here / folder).exists())


def check_fresh(target: Path) -> None:
    """Refuse a path that is a file or a directory with anything in it."""
    if target.is_file() or target.is_symlink():
        said = _("{target} is a file: {advice}")
        raise WorkspaceError(said.format(target=target, advice=_(REUSE_REFUSED)))
    if target.is_dir() and any(target.iterdir()):
        said = _("{target} is not empty: {advice}")
        raise WorkspaceError(said.format(target=target, advice=_(REUSE_REFUSED)))


def shipped_in_edition(path: str, text: bytes, edition: str) -> bytes:
    """A shipped module with its docstrings in ``edition`` (``docstrings.py``), its code as is."""
    if edition == SOURCE_EDITION or not path.endswith(".py"):
        return text
    said = functools.partial(stub_message, edition=edition)
    return localized(text.decode("utf-8"), translations(edition).gettext, said).encode("utf-8")


WORKSPACE_NOTEBOOKS = "notebooks"  # whichever edition the workspace was given


def workspace_layout(
    manifest: Manifest, kit: Path, edition: str | None = None, commands: Commands = BY_NAME
) -> dict[str, bytes]:
    """Every file of a new workspace, by its path inside the workspace."""
    edition = edition or manifest.default_edition
    files = scaffold_files(manifest, kit, "starter")
    starter = fingerprint(files)
    for file in manifest.files:
        if file.role != "test":  # the learner reads their files and the given ones in their edition
            files[file.path] = shipped_in_edition(file.path, files[file.path], edition)
    # every shipped file as written: a later kit tells this scaffold's files from edits
    checksums = {f.path: digest(files[f.path]) for f in manifest.files if f.role != "learner"}
    notebooks = []
    for source in notebook_sources(manifest, kit, edition):
        notebook = f"{WORKSPACE_NOTEBOOKS}/{Path(source).name}"
        files[notebook] = read_source(kit, source)
        notebooks.append(notebook)
    when = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    files[MARKER] = render_marker(manifest, starter, checksums, when, edition).encode("utf-8")
    files["pytest.ini"] = pytest_ini(edition).encode("utf-8")
    learning = render_learning(manifest, starter, notebooks, commands, edition)
    files["LEARNING.md"] = learning.encode("utf-8")
    return files


def create_workspace(
    manifest: Manifest,
    kit: Path,
    target: Path,
    edition: str | None = None,
    commands: Commands = BY_NAME,
) -> list[str]:
    """Lay out a fresh workspace at ``target``; returns the files written (into a scratch
    directory moved into place at once, so a failure leaves no half-made workspace)."""
    target = target.resolve()
    check_fresh(target)
    files = workspace_layout(manifest, kit, edition, commands)
    target.parent.mkdir(parents=True, exist_ok=True)
    scratch = Path(tempfile.mkdtemp(prefix=f".{target.name}-", dir=target.parent))
    try:
        for relative, data in files.items():
            path = scratch / relative
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(data)
        scratch.chmod(0o755)
        if target.is_dir():
            target.rmdir()  # empty, checked above
        os.replace(scratch, target)
    except BaseException:
        shutil.rmtree(scratch, ignore_errors=True)
        raise
    return sorted(files)
