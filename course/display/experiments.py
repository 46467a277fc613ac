"""Experiments on the learner's own code: swap one function, see the result, run the lab's tests."""

from __future__ import annotations

import contextlib
import inspect
from collections.abc import Callable, Iterator
from types import ModuleType
from typing import Any

from ..grading.intake.snapshot import Snapshot
from ..grading.verdict.engine import grade
from ..harness.manifest import load_manifest
from ..harness.runner import Limits
from ..locale import gettext as _
from .notebook import grading_options, kernel_door, verdict_view
from .verdict import VerdictView


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


def check_variant(lab: str, module: str, **functions: Callable[..., Any]) -> VerdictView:
    """``lab``'s verdict on a graded copy of the package where ``module`` uses ``functions``
    (each defined in source, a notebook cell say: its source is appended to the copy's module);
    the learner's files are never touched."""
    door = kernel_door(load_manifest(lab.split(".")[0]))
    manifest, kit, root, snapshot = door.source, door.kit, door.root, door.snapshot
    patch = "".join(
        f"\n\n# The experiment replaces {name}.\n{inspect.getsource(function)}\n"
        f"{name} = {function.__name__}\n"
        for name, function in functions.items()
    )
    path = f"{manifest.package}/{module}.py"
    if path not in snapshot.learner:
        known = ", ".join(sorted(snapshot.learner))
        said = _("{module}: not one of the learner's modules ({known})")
        raise ValueError(said.format(module=module, known=known))
    learner = dict(snapshot.learner) | {path: snapshot.learner[path] + patch.encode("utf-8")}
    label = f"{module} with {', '.join(functions)} replaced"
    variant = Snapshot(label, learner, starter=snapshot.starter)
    graded = grade(manifest, kit, variant, [manifest.lab(lab)], Limits(), grading_options(root))
    return verdict_view(graded.result, lab, root, manifest)
