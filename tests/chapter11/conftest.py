"""Wiring for the focused tests: which implementation they exercise.

The tests never import an implementation directly. ``COURSE_LAB_PACKAGE`` names the package
whose ``session``, ``groups``, ``context``, ``compaction`` and ``fixtures`` modules are under
test. Without it the default is the reference, ``course``, in the kit; in a practice
workspace (a directory holding ``.course-workspace.toml``) it is the learner's package named
there, and the reference package cannot be imported at all, so a workspace run only ever
grades the learner's code.
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import os
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType

import pytest

from course.sandboxed.marker import find_workspace, read_workspace, speak

REFERENCE_PACKAGE = "course"


@dataclass(frozen=True)
class Implementation:
    """The modules under test and the chapter's data."""

    package: str
    session: ModuleType
    groups: ModuleType
    context: ModuleType
    compaction: ModuleType
    fixtures: ModuleType


ALLOWED_KIT_PACKAGES = ("curricula", "harness", "locale", "sandboxed")
"""The kit's own packages a workspace may import: the harness, the code that runs beside the
learner's (``course.sandboxed``: this file's marker reader, the reporter, the diffs), the
editions' gettext (the given modules speak the learner's edition through ``course.locale``) and
the chapters' code, whose probe module calls the package under test by name and holds no
answer."""


class _NoReference(importlib.abc.MetaPathFinder):
    """Refuses the reference package's lab modules inside a workspace."""

    def find_spec(
        self, fullname: str, path: Sequence[str] | None, target: ModuleType | None = None
    ) -> importlib.machinery.ModuleSpec | None:
        top, _, rest = fullname.partition(".")
        if top == REFERENCE_PACKAGE and rest.split(".")[0] not in ALLOWED_KIT_PACKAGES:
            raise ImportError(
                f"{fullname}: a practice workspace grades its own code; import the "
                "workspace's package instead of the reference"
            )
        return None


WORKSPACE = find_workspace(Path(__file__).resolve().parent)
if WORKSPACE is not None:
    sys.meta_path.insert(0, _NoReference())
    sys.path.insert(0, str(WORKSPACE))
    speak(None, WORKSPACE)  # the workspace's edition, whatever LANG says, as every door chooses


def default_package() -> str:
    return REFERENCE_PACKAGE if WORKSPACE is None else read_workspace(WORKSPACE).package


def _import(package: str, module: str) -> ModuleType:
    loaded = importlib.import_module(f"{package}.{module}")
    if WORKSPACE is not None:
        where = Path(loaded.__file__ or "").resolve()
        if not where.is_relative_to(WORKSPACE):
            pytest.fail(f"{package}.{module} was imported from {where}, outside the workspace")
    return loaded


@pytest.fixture(scope="session")
def impl() -> Implementation:
    package = os.environ.get("COURSE_LAB_PACKAGE") or default_package()
    return Implementation(
        package=package,
        session=_import(package, "session"),
        groups=_import(package, "groups"),
        context=_import(package, "context"),
        compaction=_import(package, "compaction"),
        fixtures=_import(package, "fixtures"),
    )
