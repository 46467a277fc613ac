"""The chapters kept with the tests (``tests/chapters/chNN``), found only by the tests here.

``COURSE_CHAPTERS`` names this folder while each test under it runs (its notebooks' kernels
and the commands it starts inherit it), and never outside: chapter 11's tests see the kit's
built-in chapters alone. The door tests reuse the harness tests' helpers (``tests/harness``).
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from course.harness.manifest import CHAPTER_ROOTS

CHAPTERS = Path(__file__).resolve().parent
HARNESS_TESTS = CHAPTERS.parent / "harness"
if str(HARNESS_TESTS) not in sys.path:
    sys.path.insert(0, str(HARNESS_TESTS))


@pytest.hookimpl(wrapper=True)
def pytest_runtest_protocol(item: pytest.Item) -> Iterator[None]:
    """``COURSE_CHAPTERS`` for the item's setup, run and teardown (a notebook's kernel starts in
    its first cell's setup), as it was afterwards; an item elsewhere runs as it would without
    this folder (the protocol is every item's hook, not this folder's alone)."""
    if not item.path.is_relative_to(CHAPTERS):
        return (yield)
    before = os.environ.get(CHAPTER_ROOTS)
    os.environ[CHAPTER_ROOTS] = str(CHAPTERS)
    try:
        return (yield)
    finally:
        if before is None:
            os.environ.pop(CHAPTER_ROOTS, None)
        else:
            os.environ[CHAPTER_ROOTS] = before
