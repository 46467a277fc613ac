"""What runs inside the sandbox is ``course.sandboxed``, and the graded copy carries just that.

The graded child runs the pytest reporter, the chapter's conftest and focused tests, and the
probe driver, with the graded copy's library as the only kit code on its path. These tests run
the same code over that library alone (and the bytecode shipped with it, ``test_bytecode.py``)
and name every kit module it imported.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from babel.messages.pofile import read_po

import course.sandboxed
from course.grading.intake.snapshot import reference_snapshot
from course.grading.verdict.bytecode import bytecode
from course.grading.verdict.engine import graded_files, grader_library, write_files
from course.harness.kit import kit_root
from course.harness.manifest import Manifest
from course.locale import (
    EDITIONS,
    SOURCE_EDITION,
    catalog_path,
    chapter_catalog_path,
    chapter_locales,
)

CHILD_SIDE = """
import json, os, sys
library, copy, results = sys.argv[1:4]
sys.path[:0] = [copy, library]
os.chdir(copy)
import pytest
import course.sandboxed.probe_driver as driver
code = pytest.main(["-p", "course.sandboxed.plugin", "-p", "no:cacheprovider", "-q",
                    "--course-results", results, *sys.argv[4:]])
driver.load_module(driver.Path(copy, "course/curricula/ch11/probes.py"), "chapter_probes")
mods = sys.modules.items()
kit = {n: getattr(m, "__file__", None) for n, m in mods if n.split(".")[0] == "course"}
print(json.dumps({"code": int(code), "kit": kit}))
"""
"""The reporter running the chapter's focused tests, then the probe driver loading the chapter's
probe module, in one process whose path starts with the graded copy and its library."""


def package_files() -> set[str]:
    folder = Path(course.sandboxed.__file__).parent
    return {f"course/sandboxed/{path.name}" for path in folder.glob("*.py")}


def test_the_graded_library_is_the_sandboxed_package_and_the_editions() -> None:
    root = Path(course.sandboxed.__file__).parents[2]
    translated = [edition for edition in EDITIONS if edition != SOURCE_EDITION]
    catalogs = {catalog_path(edition, ".mo").relative_to(root) for edition in translated}
    catalogs |= {
        chapter_catalog_path(folder, edition, ".mo").relative_to(root)
        for folder in chapter_locales()
        for edition in translated
    }
    expected = package_files() | {"course/__init__.py", "course/locale/__init__.py"}
    expected |= {"course/locale/refusals.py"}  # the reference's refusals, in the edition
    expected |= {path.as_posix() for path in catalogs}
    got = set(grader_library())
    assert got == expected, f"extra: {sorted(got - expected)}; missing: {sorted(expected - got)}"


CHILD_TRANSLATES = """
import json, sys
sys.path[:0] = [sys.argv[1]]
from course.locale import translations
zh = translations("zh")
print(json.dumps([zh.gettext(message) for message in sys.argv[2:]]))
"""


def test_the_child_reads_the_chapters_messages_and_the_kits(
    manifest: Manifest, tmp_path: Path
) -> None:
    """The graded copy's focused tests and given modules speak the chapter's catalog; the
    sandboxed package speaks the kit's."""
    chapter, kit = (read_po(path.open("rb")) for path in _catalogs(manifest))
    own = next(m.id for m in chapter if m.id and m.string and kit.get(m.id) is None)
    machinery = next(m.id for m in kit if m.id and m.string and chapter.get(m.id) is None)
    write_files(tmp_path / "lib", grader_library())
    env = {**os.environ, "PYTHONPATH": ""}
    command = [sys.executable, "-c", CHILD_TRANSLATES, str(tmp_path / "lib"), own, machinery]
    run = subprocess.run(command, capture_output=True, text=True, env=env, check=True)
    said = json.loads(run.stdout)
    assert said == [chapter[own].string, kit[machinery].string]


def _catalogs(manifest: Manifest) -> tuple[Path, Path]:
    """The zh catalogs of ``manifest``'s chapter and of the kit."""
    folder = kit_root() / manifest.folder
    return chapter_catalog_path(folder, "zh"), catalog_path("zh")


def test_the_child_side_imports_nothing_of_the_kit_outside_the_sandboxed_package(
    manifest: Manifest, kit: Path, tmp_path: Path
) -> None:
    library, copy = tmp_path / "lib", tmp_path / "copy"
    shipped = grader_library()
    write_files(library, shipped | bytecode(shipped))
    learner = reference_snapshot(manifest, kit).learner
    files = graded_files(manifest, kit, learner, None)
    write_files(copy, files | bytecode(files, skip=learner.keys()))
    env = {**os.environ, "COURSE_LAB_PACKAGE": manifest.package, "PYTHONPATH": ""}
    command = [sys.executable, "-c", CHILD_SIDE, str(library), str(copy), str(tmp_path / "r")]
    run = subprocess.run(
        command + list(manifest.test_files), capture_output=True, text=True, env=env, check=False
    )
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    said = json.loads(run.stdout.splitlines()[-1])
    assert said["code"] == 0, run.stdout[-3000:]
    allowed = ("course", "course.locale", "course.locale.refusals", "course.sandboxed")
    outside = {
        name: file
        for name, file in said["kit"].items()
        if not name.startswith("course.sandboxed.") and name not in allowed
    }
    assert outside == {}, f"the child side imported {outside}"
    away = {n: f for n, f in said["kit"].items() if f and not Path(f).is_relative_to(library)}
    assert away == {}, f"imported from outside the graded library: {away}"
    assert "course.sandboxed.plugin" in said["kit"] and "course.sandboxed.marker" in said["kit"]
