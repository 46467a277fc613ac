"""Instructor tests: test files learners never see, run beside the focused tests and counted.

``checkpoint CHAPTER --hidden DIR`` puts every ``test_*.py`` of ``DIR`` beside the focused tests
in the graded copy. How many tests each lab gains (``@pytest.mark.lab("ID")`` functions; a
literal ``parametrize`` list counts each case) is read here, on the grader's side, so a test
process that leaves instructor tests out of its report cannot shrink a lab. They count inside
their lab's points (a lab passes only when they pass too) and earn none of their own; learners
see the chapter's counts (``engine.for_learners``).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path, PurePosixPath

from ...harness.catalog import Catalog, CatalogError, CatalogTest, test_functions
from ...harness.manifest import Manifest

QUOTED_CHARS = 24
"""A line of an instructor test at least this long (stripped) counts as quoting it."""
REDACTED = "[text of an instructor test, not shown]"


class HiddenTestError(ValueError):
    """Instructor tests cannot be used; the message names the file and the test."""


@dataclass(frozen=True)
class HiddenTests:
    """Instructor test files by name, and how many tests each lab gains from them."""

    files: Mapping[str, bytes]
    catalog: Catalog  # their tests, at their place in the graded copy

    def paths(self, manifest: Manifest) -> dict[str, bytes]:
        """The files at their place in a graded copy: beside the focused tests."""
        folder = PurePosixPath(manifest.focused_tests).parent
        return {(folder / name).as_posix(): data for name, data in self.files.items()}

    @cached_property
    def lines(self) -> frozenset[str]:
        """The files' stripped lines long enough to tell that a message quotes them."""
        texts = [data.decode("utf-8", "replace") for data in self.files.values()]
        found = (line.strip() for text in texts for line in text.splitlines())
        return frozenset(line for line in found if len(line) >= QUOTED_CHARS)

    def redact(self, text: str) -> str:
        """``text`` with every line that quotes an instructor test replaced by a placeholder
        (learner code can read them while it runs and put their text into any message)."""
        if not any(line in text for line in self.lines):
            return text
        return "\n".join(
            REDACTED if any(line in shown for line in self.lines) else shown
            for shown in text.split("\n")
        )

    def holds(self, manifest: Manifest, nodeid: str) -> bool:
        """Whether a collected test comes from one of these files."""
        return nodeid.partition("::")[0] in self.paths(manifest)


def read_hidden(directory: Path, manifest: Manifest) -> HiddenTests:
    """Every ``test_*.py`` of ``directory``, checked and counted."""
    if not directory.is_dir():
        raise HiddenTestError(f"{directory}: not a directory of instructor tests")
    shipped = {PurePosixPath(f.path).name for f in manifest.files_with_role("test")}
    files: dict[str, bytes] = {}
    tests: list[CatalogTest] = []
    labs = [lab.id for lab in manifest.labs]
    folder = PurePosixPath(manifest.focused_tests).parent
    for path in sorted(directory.glob("test_*.py")):
        if not path.is_file():
            raise HiddenTestError(f"{path}: not a regular file")
        if path.name in shipped:
            raise HiddenTestError(f"{path}: has the name of a focused test file; rename it")
        data = path.read_bytes()
        try:
            found = test_functions(data.decode("utf-8"), (folder / path.name).as_posix(), labs)
        except (CatalogError, UnicodeDecodeError) as error:
            raise HiddenTestError(f"{path.name}: {error}") from None
        if not found:
            raise HiddenTestError(f"{path.name}: holds no test functions")
        tests += found
        files[path.name] = data
    if not files:
        raise HiddenTestError(f"{directory}: no test_*.py files")
    return HiddenTests(files, Catalog(tuple(tests)))
