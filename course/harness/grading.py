"""Grading one workspace: a pristine graded copy, run confined, decided from probes.

The graded copy holds the kit's own test files, test configuration, given modules and
fixture data, plus only the learner's editable modules (the manifest's ``learner`` files),
read without following links. Nothing else of the workspace exists there: a ``conftest.py``,
a ``sitecustomize.py``, a ``pytest/`` package or an edited test changes nothing and is
reported as a note. The focused tests and the probe driver run inside the confinement; a
lab's grade is decided here, on the grader's side, from the probes' answers compared with the
reference's (see ``results.LabResult``).
"""

from __future__ import annotations

import secrets
import tempfile
import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal, Protocol, TextIO

from . import probes as probing
from .hidden import HiddenTests
from .kit import read_source
from .manifest import Lab, Manifest
from .results import CheckpointResult, TestOutcome, attribute, summarize
from .runner import Limits, OnCollected, OnResult, RunTarget, run_focused_tests
from .safefs import Tree
from .sandbox import SandboxLimits, open_confinement, sandbox_status, user_site
from .snapshot import Snapshot, reference_snapshot, workspace_snapshot
from .workspace import MARKER, PYTEST_INI

SandboxMode = Literal["required", "auto", "off"]
"""``required``: refuse to run without the sandbox; ``auto``: use it when it starts (and say
so when it does not); ``off``: run unsandboxed (the instructor's ``--unsandboxed``)."""


class SandboxUnavailable(RuntimeError):
    """The sandbox is required but cannot start here; the message says why."""


@dataclass(frozen=True)
class GradingOptions:
    """How to grade: the sandbox, instructor tests, limits, and the probe cases."""

    sandbox: SandboxMode = "auto"
    hidden: HiddenTests | None = None
    limits: SandboxLimits = field(default_factory=SandboxLimits)
    probes: probing.ProbeSet | None = None
    """Cases and reference answers drawn once for many workspaces (else drawn per run)."""
    seed: int | None = None
    """The probes' seed when they are drawn per run (random when None)."""
    deadline_seconds: float | None = None
    """Wall-clock limit of the whole run; its processes are killed when it passes."""


@dataclass(frozen=True)
class Graded:
    """A graded run: its result and what was noticed on the way."""

    result: CheckpointResult
    snapshot: Snapshot
    enforced: tuple[str, ...]
    """What the run's confinement enforced, plainly (see ``sandbox.enforced``)."""
    seed: int | None


# --------------------------------------------------------------------------- the graded copy


def graded_files(
    manifest: Manifest, kit: Path, learner: Mapping[str, bytes], hidden: HiddenTests | None
) -> dict[str, bytes]:
    """Every file of the graded copy: the kit's, except the learner's editable modules."""
    files = {f.path: read_source(kit, f.parent) for f in manifest.files if f.role != "learner"}
    files |= {f.path: learner[f.path] for f in manifest.files_with_role("learner")}
    marker = f'chapter = "{manifest.chapter}"\npackage = "{manifest.package}"\n'
    files[MARKER] = marker.encode("utf-8")
    files["pytest.ini"] = PYTEST_INI.encode("utf-8")
    if manifest.probes is not None:
        files[manifest.probes] = read_source(kit, manifest.probes)
    if hidden is not None:
        files |= hidden.paths(manifest)
    return files


def grader_library() -> dict[str, bytes]:
    """The grader's own modules the graded run needs (the test reporter, the probe driver).

    Only the harness: none of the reference's modules.
    """
    harness = Path(__file__).parent
    files = {"course/__init__.py": (harness.parent / "__init__.py").read_bytes()}
    for path in sorted(harness.glob("*.py")):
        files[f"course/harness/{path.name}"] = path.read_bytes()
    return files


def write_files(root: Path, files: Mapping[str, bytes]) -> None:
    for relative, data in files.items():
        path = root / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)


# --------------------------------------------------------------------------- running


def _confinement_choice(manifest: Manifest, kit: Path, mode: SandboxMode) -> tuple[str | None, str]:
    """(bwrap to use or None, a note when running unsandboxed)."""
    if mode == "off":
        return None, "not sandboxed (--unsandboxed): the code ran with the grader's permissions"
    status = sandbox_status(kit, (manifest.reference,))
    if status.available:
        return status.bwrap, ""
    if mode == "required":
        raise SandboxUnavailable(status.reason)
    return None, f"not sandboxed: {status.reason}; the code ran with your own permissions"


def _filtered_collected(callback: OnCollected | None, keep: Callable[[str], bool]) -> OnCollected:
    def collected(tests: list[tuple[str, str, str | None]]) -> None:
        if callback is not None:
            callback([test for test in tests if keep(test[0])])

    return collected


def _filtered_result(callback: OnResult | None, keep: Callable[[str], bool]) -> OnResult:
    def result(outcome: TestOutcome) -> None:
        if callback is not None and keep(outcome.nodeid):
            callback(outcome)

    return result


def grade(
    manifest: Manifest,
    kit: Path,
    snapshot: Snapshot,
    labs: Sequence[Lab],
    limits: Limits,
    options: GradingOptions,
    *,
    selected: bool = True,
    hide: Sequence[Path] = (),
    announce: Callable[[str], None] | None = None,
    on_collected: OnCollected | None = None,
    on_result: OnResult | None = None,
) -> Graded:
    """Run ``labs`` on ``snapshot``'s graded copy and decide each lab from its probes.

    ``selected``: only ``labs`` were asked for (else the whole chapter runs). ``hide``: more
    directories learner code must not see (the roster, the gradebook). ``on_collected`` and
    ``on_result`` hear about the focused tests only, never about instructor tests.
    """
    bwrap, unsandboxed = _confinement_choice(manifest, kit, options.sandbox)
    probes = options.probes
    if probes is None:
        seed = options.seed if options.seed is not None else secrets.randbelow(2**31)
        probes = probing.prepare(manifest, kit, labs, seed)
    else:
        probes = probes.only([lab.id for lab in labs])
    hidden = options.hidden

    def focused(nodeid: str) -> bool:
        return hidden is None or not hidden.holds(manifest, nodeid)

    with tempfile.TemporaryDirectory(prefix="course-grade-") as scratch:
        base = Path(scratch)
        copy, library, run = base / "copy", base / "lib", base / "run"
        write_files(copy, graded_files(manifest, kit, snapshot.learner, hidden))
        write_files(library, grader_library())
        run.mkdir()
        if probes is not None:
            probing.write_cases(probes, copy)
        confinement = open_confinement(
            sandboxed=bwrap is not None,
            graded=(copy, library),
            python_path=(copy, library, *user_site()),
            hidden=(kit, *hide),
            limits=options.limits,
            run_directory=run,
            bwrap=bwrap,
        )
        timer = None
        if options.deadline_seconds is not None:
            reason = f"grading took longer than {options.deadline_seconds:g}s"
            timer = threading.Timer(options.deadline_seconds, confinement.expire, (reason,))
            timer.daemon = True
            timer.start()
        try:
            if announce is not None:
                announce(f"Checking {snapshot.label}")
                if unsandboxed:
                    announce(f"note: {unsandboxed}")
            files = manifest.test_files + tuple(hidden.paths(manifest) if hidden else ())
            target = RunTarget(copy, files, manifest.package, (copy,), wrap=confinement.wrap)
            outcomes, log = run_focused_tests(
                target,
                labs=[lab.id for lab in labs] if selected else [],
                limits=limits,
                on_collected=_filtered_collected(on_collected, focused),
                on_result=_filtered_result(
                    None if on_result is None else _attributed(manifest, on_result), focused
                ),
            )
            outcomes = [attribute(manifest, outcome) for outcome in outcomes]
            summaries = {}
            if probes is not None:
                modules = sorted({f.module for lab in labs for f in lab.functions})
                where = probing.ProbeTarget(
                    copy, manifest.package, tuple(modules), (copy, library), confinement.wrap
                )
                summaries = probing.compare(probes, probing.run_probes(probes, where, limits))
            out_of_memory = confinement.out_of_memory()
            expired = confinement.expired
        finally:
            if timer is not None:
                timer.cancel()
            confinement.close()
    problems = list(log.collect_errors if not outcomes else [])
    if expired:
        problems.append(expired)
    notes = list(snapshot.notes)
    if out_of_memory:
        notes.append(
            f"the run reached its {options.limits.memory_mb} MB memory limit; "
            "the kernel killed a process"
        )
    if unsandboxed:
        notes.append(unsandboxed)
    counts = hidden.counts if hidden is not None else {}
    result = summarize(
        manifest,
        labs,
        outcomes,
        target=snapshot.label,
        problems=problems,
        notes=notes,
        expected={lab.id: lab.tests + counts[lab.id] for lab in labs if lab.id in counts},
        probes=summaries,
    )
    return Graded(result, snapshot, confinement.enforced(), probes.seed if probes else None)


def render_probes(result: CheckpointResult, seed: int | None) -> list[str]:
    """The probes' verdict per lab, and each disagreement behind a lab that is not pending."""
    labs = [lab for lab in result.labs if lab.probes is not None]
    if not labs:
        return []
    counts = " · ".join(
        f"{lab.lab.id} {lab.probes.agreed}/{lab.probes.cases}" for lab in labs if lab.probes
    )
    lines = [f"probes   {counts} agree with the reference (seed {seed})"]
    for lab in labs:
        if lab.probes is not None and lab.probes.status not in ("passed", "pending"):
            lines.append(f"probes   Lab {lab.lab.id} {lab.probes.status}: {lab.probes.difference}")
    return lines


class LabPrinter(Protocol):
    """Prints each lab's line as its focused tests finish (the checkpoint's printer)."""

    def on_collected(self, tests: list[tuple[str, str, str | None]]) -> None: ...
    def on_result(self, outcome: TestOutcome) -> None: ...
    def flush(self, final: Sequence[TestOutcome] | None = None) -> None: ...


def _attributed(manifest: Manifest, on_result: OnResult) -> OnResult:
    """``on_result`` told each outcome with the lab whose code it stopped in."""
    return lambda outcome: on_result(attribute(manifest, outcome))


def check_graded(
    manifest: Manifest,
    kit: Path,
    root: Path | None,
    labs: Sequence[Lab],
    selected: bool,
    limits: Limits,
    options: GradingOptions,
    out: TextIO,
    printer: LabPrinter,
) -> CheckpointResult:
    """Grade the workspace at ``root`` (None: the reference) and print as a checkpoint does."""
    if root is not None:
        snapshot = workspace_snapshot(manifest, kit, Tree(root))
    else:
        snapshot = reference_snapshot(manifest, kit)
    graded = grade(
        manifest,
        kit,
        snapshot,
        labs,
        limits,
        options,
        selected=selected,
        announce=lambda line: print(line, file=out, flush=True),
        on_collected=printer.on_collected,
        on_result=printer.on_result,
    )
    hidden = options.hidden
    printer.flush(
        final=[t for t in graded.result.tests if not hidden or not hidden.holds(manifest, t.nodeid)]
    )
    for line in render_probes(graded.result, graded.seed):
        print(line, file=out)
    for note in graded.result.notes:
        print(f"note: {note}", file=out)
    return graded.result
