"""The bytecode shipped with the graded copy: one checked-hash ``.pyc`` per kit module, none for
the learner's, loaded only beside the bytes it was made from, and never served stale or broken
from the cache."""

from __future__ import annotations

import importlib.util
import marshal
import os
import subprocess
import sys
from pathlib import Path, PurePosixPath

import pytest

from course.grading.intake.snapshot import reference_snapshot
from course.grading.verdict import bytecode as shipping
from course.grading.verdict.engine import graded_files, grader_library, write_files
from course.harness.manifest import Manifest

CACHE_TAG = str(sys.implementation.cache_tag)
PYTEST_TAG = shipping._pytest_tag(CACHE_TAG)


@pytest.fixture
def own_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An empty kit cache, and nothing made earlier in this process."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.setattr(shipping, "_made", {})
    return tmp_path / "cache" / "course-kit" / "bytecode"


def expected_names(files: dict[str, bytes], skip: set[str]) -> set[str]:
    """Where the child's import system (or pytest's rewriter) looks for each module's ``.pyc``."""
    names = set()
    for path in files:
        if path.endswith(".py") and path not in skip:
            where = PurePosixPath(path)
            rewritten = path.startswith(shipping.REWRITTEN_BY_PYTEST)
            tag = PYTEST_TAG if rewritten else CACHE_TAG
            if tag is not None:  # no pytest that reads them: none in pytest's form
                names.add(f"{where.parent}/__pycache__/{where.stem}.{tag}.pyc")
    return names


def test_the_graded_copy_ships_a_pyc_for_each_kit_module_and_none_for_the_learners(
    manifest: Manifest, kit: Path, own_cache: Path
) -> None:
    learner = reference_snapshot(manifest, kit).learner
    files = graded_files(manifest, kit, learner, None)
    got = set(shipping.bytecode(files, skip=learner.keys()))
    expected = expected_names(files, set(learner))
    assert got == expected, f"extra: {sorted(got - expected)}; missing: {sorted(expected - got)}"
    for path in learner:
        where = PurePosixPath(path)
        assert not any(name.startswith(f"{where.parent}/__pycache__/{where.stem}.") for name in got)
    if PYTEST_TAG is not None:
        assert f"tests/chapter11/__pycache__/conftest.{PYTEST_TAG}.pyc" in got


def test_the_library_ships_a_pyc_for_each_module_the_reporter_in_pytests_form(
    own_cache: Path,
) -> None:
    library = grader_library()
    got = set(shipping.bytecode(library))
    assert got == expected_names(library, set())
    if PYTEST_TAG is not None:
        assert f"course/sandboxed/__pycache__/plugin.{PYTEST_TAG}.pyc" in got


def test_a_pyc_is_made_once_and_kept_in_the_cache(own_cache: Path) -> None:
    files = {"pkg/mod.py": b"VALUE = 1\n"}
    shipping.bytecode(files)
    (entry,) = own_cache.iterdir()
    kept = entry.read_bytes()[:16] + marshal.dumps(compile("VALUE = 'kept'", "x", "exec"))
    entry.write_bytes(kept)
    shipping._made.clear()
    assert shipping.bytecode(files) == {"pkg/__pycache__/mod." + f"{CACHE_TAG}.pyc": kept}


@pytest.mark.parametrize("stored", [b"", b"garbage", "other source"])
def test_a_broken_or_foreign_cached_pyc_is_made_again(own_cache: Path, stored: bytes | str) -> None:
    files = {"pkg/mod.py": b"VALUE = 1\n"}
    made = shipping.bytecode(files)
    (entry,) = own_cache.iterdir()
    if isinstance(stored, str):  # whole, but made from other bytes
        shipping._made.clear()
        stored = next(iter(shipping.bytecode({"pkg/mod.py": b"VALUE = 2\n"}).values()))
    entry.write_bytes(stored)
    shipping._made.clear()
    assert shipping.bytecode(files) == made, f"served the stored {stored[:40]!r}"


def test_a_module_that_does_not_compile_ships_no_pyc(own_cache: Path) -> None:
    assert shipping.bytecode({"pkg/broken.py": b"def (:\n", "tests/test_x.py": b"x = (\n"}) == {}


def run_child(root: Path, *args: str) -> str:
    env = {**os.environ, "PYTHONPATH": str(root), "PYTHONDONTWRITEBYTECODE": "1"}
    env["PYTEST_DISABLE_PLUGIN_AUTOLOAD"] = "1"
    command = [sys.executable, *args]
    run = subprocess.run(command, capture_output=True, text=True, env=env, cwd=root, check=False)
    return run.stdout + run.stderr


PLAIN = ("pkg/mod.py", ("-c", "import pkg.mod"))
REWRITTEN = pytest.param(
    "tests/test_mod.py",
    ("-m", "pytest", "-q", "-s", "-p", "no:cacheprovider", "tests"),
    marks=pytest.mark.skipif(PYTEST_TAG is None, reason="this pytest reads no shipped bytecode"),
)


@pytest.mark.parametrize(("path", "args"), [PLAIN, REWRITTEN], ids=["import", "pytest"])
def test_the_child_loads_a_pyc_only_beside_the_source_it_was_made_from(
    tmp_path: Path, own_cache: Path, path: str, args: tuple[str, ...]
) -> None:
    source = b"print('from source', __file__)\ndef test_it(): pass\n"
    foreign = shipping.bytecode({path: source.replace(b"source", b"the pyc")})
    # the foreign code under the header of ``source``: the child runs the pyc's code
    hashed = {
        name: pyc[:8] + importlib.util.source_hash(source) + pyc[16:]
        for name, pyc in foreign.items()
    }
    write_files(tmp_path, {"pkg/__init__.py": b"", path: source} | hashed)
    said = run_child(tmp_path, *args)
    assert f"from the pyc {tmp_path / path}" in said, said
    write_files(tmp_path, foreign)
    said = run_child(tmp_path, *args)
    assert f"from source {tmp_path / path}" in said, f"a pyc made from other bytes was used: {said}"
