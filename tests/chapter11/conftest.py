"""Wiring for the focused tests: which implementation they exercise.

The tests never import an implementation directly. ``COURSE_LAB_PACKAGE`` names the package
whose ``session``, ``context`` and ``fixtures`` modules are under test (default: the reference,
``course``).
"""

from __future__ import annotations

import importlib
import os
from dataclasses import dataclass
from types import ModuleType

import pytest


@dataclass(frozen=True)
class Implementation:
    """The modules under test and the chapter's data."""

    package: str
    session: ModuleType
    context: ModuleType
    fixtures: ModuleType


@pytest.fixture(scope="session")
def impl() -> Implementation:
    package = os.environ.get("COURSE_LAB_PACKAGE", "course")
    return Implementation(
        package=package,
        session=importlib.import_module(f"{package}.session"),
        context=importlib.import_module(f"{package}.context"),
        fixtures=importlib.import_module(f"{package}.fixtures"),
    )
