"""The reference package in the kit's own process, with a chapter's modules kept outside it."""

from __future__ import annotations

import importlib
import sys
from pathlib import Path, PurePosixPath
from types import ModuleType

from ..sandboxed.focused import mount
from .manifest import Manifest


def outside_modules(manifest: Manifest) -> dict[str, str]:
    """The learner's package's modules whose reference file is not in the reference package
    (a chapter kept with the tests holds its own), by module name: their kit-relative files."""
    home = PurePosixPath(*manifest.reference.split("."))
    found = {}
    for file in manifest.files:
        path = PurePosixPath(file.path)
        if file.role == "test" or path.suffix != ".py" or path.parent.name != manifest.package:
            continue
        if path.stem == "__init__":  # the package itself, which the reference package stands for
            continue
        if PurePosixPath(file.reference) != home / path.name:
            found[path.stem] = file.reference
    return found


def import_reference(manifest: Manifest, kit: Path) -> ModuleType:
    """``manifest.reference`` imported, each of its ``outside_modules`` loaded from its file
    under the reference's name, so ``<reference>.<module>`` answers as the learner's would;
    then every learner module of it, so one that cannot be imported raises here, before a
    probe case takes its ``ImportError`` for the reference's answer."""
    package = importlib.import_module(manifest.reference)
    for name, relative in outside_modules(manifest).items():
        if f"{manifest.reference}.{name}" not in sys.modules:
            mount(manifest.reference, name, kit / relative)
    for file in manifest.files_with_role("learner"):
        importlib.import_module(f"{manifest.reference}.{PurePosixPath(file.path).stem}")
    return package
