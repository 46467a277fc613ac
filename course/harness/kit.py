"""The kit's source tree (starters, focused tests, notebooks) and the scaffold fingerprints."""

from __future__ import annotations

import hashlib
import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from ..locale import gettext as _
from .manifest import Manifest

Side = Literal["starter", "reference"]
SIDES: tuple[Side, ...] = ("starter", "reference")


class KitError(RuntimeError):
    """The kit's source tree is not where the installed package expects it."""


def kit_root() -> Path:
    """The repository the ``course`` package was installed from (editable install): starters
    and focused tests are not package data, they live beside the package."""
    root = Path(__file__).resolve().parents[2]
    if not (root / "starters").is_dir() or not (root / "tests").is_dir():
        raise KitError(
            _(
                "{root} has no starters/ and tests/: checkpoint and practice need the kit's "
                "source tree; install it with `pip install -e .` from a clone of the repository"
            ).format(root=root)
        )
    return root


def kit_cache() -> Path:
    """Where the kit keeps what it can make again between runs (drawn probe cases, hypothesis's
    Unicode tables, the site's downloads): ``$XDG_CACHE_HOME/course-kit``."""
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "course-kit"


def shown(path: Path, kit: Path) -> str:
    """``path`` as a message names it: relative to the kit when it is inside it."""
    return str(path.relative_to(kit)) if path.is_relative_to(kit) else str(path)


def read_source(root: Path, relative: str) -> bytes:
    """A kit file's bytes; a ``KitError`` names the file if it is missing."""
    path = root / relative
    try:
        return path.read_bytes()
    except FileNotFoundError:
        said = _("{path}: listed in the curriculum but missing from {root}")
        raise KitError(said.format(path=relative, root=root)) from None


def scaffold_files(manifest: Manifest, root: Path, side: Side) -> dict[str, bytes]:
    """The workspace as the starter scaffold or the finished reference would lay it out."""
    return {
        file.path: read_source(root, file.starter if side == "starter" else file.reference)
        for file in manifest.files
    }


def digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def fingerprint(files: Mapping[str, bytes]) -> str:
    """One SHA-256 over file paths and contents: equal iff every file is byte-for-byte equal."""
    total = hashlib.sha256()
    for path in sorted(files):
        total.update(path.encode("utf-8") + b"\0" + digest(files[path]).encode("ascii") + b"\n")
    return total.hexdigest()


def short(full: str) -> str:
    """The 12-character form printed on cards and reports."""
    return full[:12]


@dataclass(frozen=True)
class Fingerprints:
    """The chapter's two ends as content fingerprints."""

    starter: str
    reference: str


def chapter_fingerprints(manifest: Manifest, root: Path) -> Fingerprints:
    return Fingerprints(*(fingerprint(scaffold_files(manifest, root, side)) for side in SIDES))


def notebook_sources(manifest: Manifest, root: Path, edition: str | None = None) -> list[str]:
    """Kit-relative paths of one edition's notebooks of the chapter (the default edition's unless
    named): the labs' and the manifest's ``other_notebooks``."""
    edition = edition or manifest.default_edition
    folder = manifest.notebooks.get(edition)
    if folder is None:
        known = ", ".join(manifest.notebooks)
        said = _("no notebook edition {edition} (editions: {known})")
        raise KitError(said.format(edition=repr(edition), known=known))
    return [f"{folder}/{name}" for name in manifest.notebook_names]
