"""Shared set-up for the harness's own tests: the chapter 11 manifest, workspaces, runs."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import pytest
from harness_support import CHAPTER, DEFAULT_LIMITS, Check, MakeWorkspace

from course.grading.verdict import probes
from course.grading.verdict.engine import GradingOptions, evaluate, grade, take_snapshot
from course.harness.kit import kit_root
from course.harness.manifest import Manifest, load_manifest
from course.harness.results import CheckpointResult
from course.harness.runner import Limits
from course.harness.workspace import create_workspace


@pytest.fixture(scope="session")
def manifest() -> Manifest:
    return load_manifest(CHAPTER)


@pytest.fixture(scope="session")
def kit() -> Path:
    return kit_root()


@pytest.fixture(scope="session")
def make_workspace(
    manifest: Manifest, kit: Path, tmp_path_factory: pytest.TempPathFactory
) -> MakeWorkspace:
    """Lay out a fresh practice workspace named ``name`` in a new temporary directory (one
    factory for the session: each call makes its own directory, so module fixtures use it too)."""

    def make(name: str = "practice") -> Path:
        target = tmp_path_factory.mktemp("class") / name
        create_workspace(manifest, kit, target)
        return target

    return make


@pytest.fixture(scope="session")
def probe_set(manifest: Manifest, kit: Path) -> probes.ProbeSet | None:
    """One draw of every lab's probe cases, with the reference's answers, for the session."""
    return probes.prepare(manifest, kit, manifest.labs, seed=manifest.probe_seed)


@pytest.fixture
def check(manifest: Manifest, kit: Path, probe_set: probes.ProbeSet | None) -> Check:
    """The verdict every door shows, computed in-process (its tests still run in a child).

    A workspace is graded as ``checkpoint --practice`` grades it: a pristine copy in the
    sandbox (when it starts), decided by the chapter's probe cases.
    """

    def run(
        workspace: Path | None = None,
        labs: Sequence[str] = (),
        limits: Limits = DEFAULT_LIMITS,
    ) -> CheckpointResult:
        root = workspace.resolve() if workspace is not None else None
        return evaluate(manifest, kit, root, labs, limits, GradingOptions(probes=probe_set))

    return run


@pytest.fixture
def own_run(manifest: Manifest, kit: Path, probe_set: probes.ProbeSet | None) -> Check:
    """The learner's own run: every lab on the workspace's own code, before a lab that fails
    there is decided on its own (``isolated.py``); what the doors' messages come from."""

    def run(
        workspace: Path, labs: Sequence[str] = (), limits: Limits = DEFAULT_LIMITS
    ) -> CheckpointResult:
        snapshot = take_snapshot(manifest, kit, workspace.resolve())
        chosen = [manifest.lab(lab) for lab in labs] or list(manifest.labs)
        options = GradingOptions(probes=probe_set)
        graded = grade(manifest, kit, snapshot, chosen, limits, options, selected=bool(labs))
        return graded.own or graded.result

    return run
