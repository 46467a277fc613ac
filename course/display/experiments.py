"""Experiments on the learner's own code: swap one function, see the result, run the lab's tests.

``replaced(module, name=function)`` swaps a function for the length of a ``with`` block, in
this kernel. ``check_variant(lab, module, function)`` writes a copy of the package with the
function replaced (its source appended to the module) and runs that lab's focused tests on the
copy in a fresh process, so an experiment never touches the learner's files.
"""

from __future__ import annotations

import contextlib
import inspect
import os
import shutil
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

from ..harness.kit import kit_root
from ..harness.manifest import load_manifest
from ..harness.results import summarize
from ..harness.runner import RunTarget, run_focused_tests
from ..harness.workspace import find_workspace
from .checkreport import CheckReport, parse_report
from .notebook import check_environment


@contextlib.contextmanager
def replaced(module: ModuleType, **functions: Callable[..., Any]) -> Iterator[None]:
    """``module``'s functions swapped for ``functions`` inside the block, restored after it."""
    saved = {name: getattr(module, name) for name in functions}
    for name, function in functions.items():
        setattr(module, name, function)
    try:
        yield
    finally:
        for name, function in saved.items():
            setattr(module, name, function)


@contextlib.contextmanager
def _plain_output() -> Iterator[None]:
    """The kernel's colour switches off while the tests run: their report is plain text."""
    saved = dict(os.environ)
    os.environ.clear()
    os.environ.update(check_environment())
    try:
        yield
    finally:
        os.environ.clear()
        os.environ.update(saved)


def _package_sources(lab_id: str, workspace: Path | None) -> tuple[Path, dict[str, Path]]:
    """The tests' root and the package's module files (the workspace's, else the reference)."""
    manifest = load_manifest(lab_id.split(".")[0])
    kit = kit_root()
    prefix = f"{manifest.package}/"
    files = {}
    for file in manifest.files:
        if file.role == "test" or not file.path.startswith(prefix):
            continue
        name = file.path[len(prefix) :]
        files[name] = workspace / file.path if workspace is not None else kit / file.target
    return (workspace or kit), files


def check_variant(lab: str, module: str, **functions: Callable[..., Any]) -> CheckReport:
    """Run ``lab``'s focused tests on a copy of the package where ``module`` uses ``functions``.

    Each keyword names the function replaced; each value must be defined in source (a notebook
    cell is fine), because its source is what the copy receives.
    """
    manifest = load_manifest(lab.split(".")[0])
    workspace = find_workspace(Path.cwd())
    root, files = _package_sources(lab, workspace)
    patch = "".join(
        f"\n\n# The experiment replaces {name}.\n{inspect.getsource(function)}\n"
        f"{name} = {function.__name__}\n"
        for name, function in functions.items()
    )
    target = ", ".join(functions)
    with tempfile.TemporaryDirectory(prefix=".course-variant-", dir=root) as folder:
        package = f"{manifest.package}_variant"
        copy = Path(folder) / package
        copy.mkdir()
        for name, path in files.items():
            shutil.copyfile(path, copy / name)
        with (copy / f"{module}.py").open("a", encoding="utf-8") as handle:
            handle.write(patch)
        with _plain_output():
            outcomes, _ = run_focused_tests(
                RunTarget(root, manifest.test_files, package, (Path(folder),)), labs=[lab]
            )
    result = summarize(manifest, [manifest.lab(lab)], outcomes, target=f"{module}.{target}")
    report = parse_report(result.to_json(), lab=lab)
    return report.without_text(str(root), "<package>") if workspace else report
