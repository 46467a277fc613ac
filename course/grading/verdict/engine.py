"""The one verdict engine: a pristine graded copy, run confined, decided from probes.

Every door asks ``evaluate`` (or ``grade``) for a lab's verdict, so the same files get the same
status and counts everywhere. The graded copy holds the kit's own files plus only the learner's
editable modules, read without following links: a workspace's ``conftest.py``,
``sitecustomize.py``, ``pytest/`` package or edited test changes nothing (it is a note). The
tests and the probe driver run confined; the grade is decided here, on the grader's side.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Literal

from ...harness import webworker
from ...harness.catalog import Catalog, kit_catalog
from ...harness.kit import chapter_fingerprints, read_source
from ...harness.manifest import Lab, Manifest
from ...harness.results import (
    Charge,
    CheckpointResult,
    LabResult,
    ProbeSummary,
    TestOutcome,
    attribute,
    green_labs,
    summarize,
)
from ...harness.roots import carried
from ...harness.runner import Limits, RunTarget, run_focused_tests
from ...harness.supervisor import Wrap
from ...harness.webworker import in_a_browser
from ...harness.workspace import pytest_ini, render_marker
from ...locale import (
    BUILT_IN_CHAPTERS,
    EDITIONS,
    catalog_path,
    chapter_catalog_path,
    chapter_locales,
    compiled,
    current_edition,
)
from ...locale import gettext as _
from ...sandboxed.commands import BY_NAME, Commands
from ...sandboxed.marker import MARKER
from ...sandboxed.probecases import Answer
from ...sandboxed.status import Status, worst
from ..confinement.sandbox import (
    Confinement,
    SandboxLimits,
    drop_user_check,
    open_confinement,
    sandbox_status,
    user_site,
)
from ..intake.safefs import Tree
from ..intake.snapshot import Snapshot, reference_snapshot, workspace_snapshot
from . import forgery
from . import probes as probing
from .bytecode import bytecode
from .hidden import HiddenTests
from .isolated import credit, isolation_environment, isolation_files
from .kitcache import kept_catalog

SandboxMode = Literal["required", "container", "auto", "off"]
"""``required``: refuse to run without the sandbox; ``container``: where it cannot start (a
platform's container that makes no namespaces), learner code as an unprivileged host user who
can write neither the kit nor the results, else refuse; ``auto``: use it when it starts (and say
so when it does not); ``off``: run unsandboxed (the instructor's ``--unsandboxed``)."""


class SandboxUnavailable(RuntimeError):
    """The sandbox is required but cannot start here; the message says why."""


@dataclass(frozen=True)
class GradingOptions:
    """How to grade: the sandbox, instructor tests, limits, and the probe cases."""

    sandbox: SandboxMode = "auto"
    hidden: HiddenTests | None = None
    limits: SandboxLimits = field(default_factory=SandboxLimits)
    probes: probing.ProbeSet | None = None  # drawn once for many workspaces (else per run)
    seed: int | None = None  # of probes drawn per run (None: the manifest's ``probe_seed``)
    deadline_seconds: float | None = None  # the whole run's: its processes are killed after
    commands: Commands = BY_NAME  # how the door's reader runs the kit's (replay lines)
    audit: probing.ProbeSet | None = None  # a roster's seed: they can fail a lab, never count
    # A browser whose kernel cannot wait for a Web Worker (no JavaScript Promise Integration)
    # runs the tests and the probe cases in the kernel itself (``inprocess.py``), unsandboxed.
    in_process: bool = field(default_factory=lambda: in_a_browser() and not webworker.available())


@dataclass(frozen=True)
class Graded:
    """A graded run: its result and what was noticed on the way."""

    result: CheckpointResult
    enforced: tuple[str, ...]  # what the run's confinement enforced (``sandbox.enforced``)
    extra: tuple[TestOutcome, ...] = ()  # the outcomes of the ``uncounted`` test files
    own: CheckpointResult | None = None  # before per-lab credit decided (None: the same)


# --------------------------------------------------------------------------- the graded copy


def graded_files(
    manifest: Manifest,
    kit: Path,
    learner: Mapping[str, bytes],
    hidden: HiddenTests | None,
    starter: str | None = None,
) -> dict[str, bytes]:
    """Every file of the graded copy: the kit's, except the learner's editable modules
    (``starter``: the kit's starter fingerprint, when the snapshot carries it)."""
    files = {f.path: read_source(kit, f.starter) for f in manifest.files if f.role != "learner"}
    files |= {f.path: learner[f.path] for f in manifest.files_with_role("learner")}
    starter = starter or chapter_fingerprints(manifest, kit).starter
    # the copy is a workspace of the door's edition: its conftest speaks that one
    marker = render_marker(manifest, starter, {}, "graded copy", current_edition())
    files[MARKER] = marker.encode("utf-8")
    files["pytest.ini"] = pytest_ini(current_edition()).encode("utf-8")
    if manifest.probes is not None:  # where the probe set names it (``carried``)
        files[carried(manifest.probes)] = read_source(kit, manifest.probes)
    if hidden is not None:
        files |= hidden.paths(manifest)
    return files


def grader_library() -> dict[str, bytes]:
    """The kit's code the graded run needs: ``course.sandboxed`` whole, the editions (with the
    reference's refusals, said again in the learner's edition) and their catalogs, the kit's
    and every chapter's (the run speaks the learner's edition); nothing else
    (``test_sandboxed.py``) but their bytecode (``bytecode.py``)."""
    package = Path(__file__).resolve().parents[2]
    locale = package / "locale"
    shipped = [package / "__init__.py", locale / "__init__.py", locale / "refusals.py"]
    shipped += sorted((package / "sandboxed").glob("*.py"))
    files = {p.relative_to(package.parent).as_posix(): p.read_bytes() for p in shipped}
    for edition in EDITIONS[1:]:  # English, the source text, has no catalog
        mo = catalog_path(edition, ".mo")
        if (data := compiled(catalog_path(edition), mo)) is not None:
            files[mo.relative_to(package.parent).as_posix()] = data
        # each chapter's catalog where the child looks for a built-in chapter's: the focused
        # tests and the given modules speak the chapter's messages (``locale.translations``)
        for folder in chapter_locales():
            po = chapter_catalog_path(folder, edition)
            if (data := compiled(po, po.with_suffix(".mo"))) is not None:
                inside = chapter_catalog_path(BUILT_IN_CHAPTERS / folder.name, edition, ".mo")
                files.setdefault(inside.relative_to(package.parent).as_posix(), data)
    return files


def write_files(root: Path, files: Mapping[str, bytes]) -> None:
    for relative, data in files.items():
        path = root / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)


# --------------------------------------------------------------------------- running


@dataclass(frozen=True)
class Choice:
    """How a run confines learner code: bubblewrap, or else a note saying why not, and in the
    container fallback the host user learner code runs as."""

    bwrap: str | None
    unsandboxed: str
    dropped: tuple[str, int] | None = None


def confinement_choice(
    manifest: Manifest, kit: Path, options: GradingOptions, guarded: Sequence[Path] = ()
) -> Choice:
    """The run's confinement (``SandboxUnavailable`` when the mode allows none that works here;
    ``guarded``: what learner code must not write in the container fallback, besides the kit)."""
    bwrap, unsandboxed = _confinement_choice(manifest, kit, options)
    if bwrap is not None or options.sandbox != "container":
        return Choice(bwrap, unsandboxed)
    reason = sandbox_status(kit, (manifest.reference,))[1]
    dropped, why = drop_user_check(tuple(p.resolve() for p in (kit, *guarded)))
    if dropped is None:
        said = _("{reason}; and learner code cannot run as an unprivileged user here: {why}")
        raise SandboxUnavailable(said.format(reason=reason, why=why))
    said = _(
        "not sandboxed: {reason}; the code ran as an unprivileged host user (not root), who can "
        "write neither the kit nor the results (the platform's container is the boundary)"
    )
    return Choice(None, said.format(reason=reason), dropped)


def _confinement_choice(
    manifest: Manifest, kit: Path, options: GradingOptions
) -> tuple[str | None, str]:
    """(bwrap to use or None, a note when running unsandboxed)."""
    if options.in_process:
        return None, _(
            "graded in this kernel, not sandboxed (a browser tab starts no processes): each "
            "test and probe case is stopped past its time limit, unless it catches every exception"
        )
    if in_a_browser():
        return None, _(
            "graded in a Web Worker of this tab, not sandboxed by bubblewrap: the worker sees "
            "only the graded copy, and it is ended when a test or probe case runs past its time "
            "limit"
        )
    if options.sandbox == "off":
        return None, _("not sandboxed (--unsandboxed): the code ran with the grader's permissions")
    bwrap, reason = sandbox_status(kit, (manifest.reference,))
    if bwrap is not None:
        return bwrap, ""
    if options.sandbox == "required":
        raise SandboxUnavailable(reason)
    if options.sandbox == "container":
        return None, reason  # confinement_choice decides
    if os.geteuid() == 0:  # a learner's own code, but never as host root unconfined
        said = _("{reason}; as root, the code would run unconfined as host root")
        raise SandboxUnavailable(said.format(reason=reason))
    unsandboxed = _("not sandboxed: {reason}; the code ran with your own permissions")
    return None, unsandboxed.format(reason=reason)


def library_first(library: Path) -> Wrap:
    """A worker's only confinement: the grader's library first on its import path (the
    worker's Pyodide has none of the kit installed)."""

    def wrap(
        command: list[str], env: dict[str, str], writable: tuple[Path, ...]
    ) -> tuple[list[str], dict[str, str]]:
        paths = [str(library), *filter(None, env.get("PYTHONPATH", "").split(os.pathsep))]
        return command, env | {"PYTHONPATH": os.pathsep.join(paths)}

    return wrap


@dataclass(frozen=True)
class GradedRun:
    """A graded copy on disk and the confinement its processes start in (None: none)."""

    copy: Path
    library: Path
    wrap: Wrap | None
    unsandboxed: str  # why the run is not sandboxed ('' when it is)
    confinement: Confinement | None = None  # None in a tab: no cgroups or timers


@contextlib.contextmanager
def graded_run(
    manifest: Manifest,
    kit: Path,
    snapshot: Snapshot,
    options: GradingOptions,
    hide: Sequence[Path] = (),
    probes: probing.ProbeSet | None = None,
    extra: Mapping[str, bytes] | None = None,
) -> Iterator[GradedRun]:
    """The graded copy of ``snapshot`` (with ``extra`` files) and its confinement, for as long
    as the block runs."""
    choice = confinement_choice(manifest, kit, options, hide)
    bwrap, unsandboxed = choice.bwrap, choice.unsandboxed
    with tempfile.TemporaryDirectory(prefix="course-grade-") as scratch:
        base = Path(scratch)
        copy, library, run = base / "copy", base / "lib", base / "run"
        files = graded_files(manifest, kit, snapshot.learner, options.hidden, snapshot.starter)
        files |= extra or {}
        write_files(copy, files)
        run.mkdir()
        if probes is not None:
            probing.write_cases(probes, copy)
        if options.in_process:  # the grader's own modules are this process's
            yield GradedRun(copy, library, None, unsandboxed)
            return
        shipped = grader_library()
        write_files(library, shipped)
        if in_a_browser():  # a worker is its own confinement
            yield GradedRun(copy, library, library_first(library), unsandboxed)
            return
        # the kit's modules compiled once (the learner's are compiled where they run)
        write_files(copy, bytecode(files, skip=snapshot.learner.keys()))
        write_files(library, bytecode(shipped))
        confinement = open_confinement(
            sandboxed=bwrap is not None,
            graded=(copy, library),
            python_path=(copy, library, *user_site()),
            hidden=(kit, *hide),
            limits=options.limits,
            run_directory=run,
            bwrap=bwrap,
            dropped=choice.dropped,
        )
        with contextlib.ExitStack() as stack:
            stack.callback(confinement.close)
            if (seconds := options.deadline_seconds) is not None:
                said = _("grading took longer than {seconds}s").format(seconds=f"{seconds:g}")
                timer = threading.Timer(seconds, confinement.expire, (said,))
                timer.daemon = True
                timer.start()
                stack.callback(timer.cancel)
            yield GradedRun(copy, library, confinement.wrap, unsandboxed, confinement)


@dataclass(frozen=True)
class _Ran:
    """One graded copy's run: its outcomes, the probe summaries and what the run noticed."""

    outcomes: list[TestOutcome]
    extra: list[TestOutcome]
    summaries: dict[str, ProbeSummary]
    findings: list[probing.AuditFinding]  # what the audit cases showed (``probes.audited``)
    forged: list[str]  # records no reporter writes (``RunLog.forged``)
    problems: list[str]
    notes: list[str]
    enforced: tuple[str, ...]


def _run_copy(
    manifest: Manifest,
    kit: Path,
    snapshot: Snapshot,
    labs: Sequence[Lab],
    limits: Limits,
    options: GradingOptions,
    probes: probing.ProbeSet | None,
    audit: probing.ProbeSet | None,
    catalog: Catalog,
    *,
    selected: bool,
    hide: Sequence[Path],
    uncounted: Sequence[str],
    held: frozenset[str] | None = None,
) -> _Ran:
    """Run ``labs``' tests and probe cases on one graded copy of ``snapshot`` (``held``: a
    credit run's, the labs whose reference it holds, never one of ``labs``; ``isolated.py``)."""
    ids = [lab.id for lab in labs]
    asked = probing.with_audit_cases(probes, audit) if probes and audit else probes
    hidden = options.hidden
    extra_files = isolation_files(manifest, kit, held, ids) if held is not None else {}
    environment = tuple(isolation_environment().items()) if held is not None else ()
    with graded_run(manifest, kit, snapshot, options, hide, asked, extra_files) as run:
        modules = sorted({f.module for lab in labs for f in lab.functions})
        where = probing.ProbeTarget(
            run.copy,
            manifest.package,
            tuple(modules),
            (run.copy, run.library),
            run.wrap,
            environment,
        )
        files = manifest.test_files + tuple(hidden.paths(manifest) if hidden else ())
        tests = (*files, *uncounted)
        target = RunTarget(
            run.copy,
            tests,
            manifest.package,
            (run.copy,),
            run.wrap,
            catalog,
            tuple(uncounted),
            environment,
        )
        chosen = ids if selected else []
        attempt, answer, answer_alone = None, probing.run_probes, probing.run_alone
        if options.in_process:
            from . import inprocess  # pytest is imported only where the tests run here

            attempt, answer = inprocess.run_here, inprocess.answer_here
            answer_alone = inprocess.answer_here  # each call imports the package afresh
        # without a sandbox, a run's processes share a user and /tmp: the audit's cases are
        # asked once every other process of the run has ended (issue 53)
        now, later = probing.apart(asked) if asked and run.unsandboxed else (asked, None)

        def answered() -> dict[str, Answer]:
            return answer(now, where, limits) if now is not None else {}

        if options.in_process or in_a_browser():  # one at a time: a tab's kernel has no threads
            outcomes, log = run_focused_tests(target, labs=chosen, limits=limits, attempt=attempt)
            got = answered()
        else:
            with ThreadPoolExecutor(max_workers=1) as pool:
                answers = pool.submit(answered)  # the probes' process runs beside the tests'
                outcomes, log = run_focused_tests(target, labs=chosen, limits=limits)
            got = answers.result()
        if later is not None:
            if run.confinement is not None:
                run.confinement.kill()
            got |= answer(later, where, limits)
        alone: dict[str, Answer] = {}
        # a credit run's messages are never shown; a browser's worker has no standard input
        # to be handed one case on (its kernel's fallback, in_process, asks it afresh)
        asks_alone = options.in_process or not in_a_browser()
        if probes is not None and held is None and asks_alone:
            for case_id in probing.alone_suspects(probes, got):
                alone |= answer_alone(probes.case(case_id), where, limits)

        # The graded copy is a temporary folder: messages name its files as the learner does.
        def unprefixed(text: str) -> str:
            return text.replace(f"{run.copy}/", "")

        outcomes = [_each_text(o, unprefixed) for o in outcomes]
        extra = [o for o in outcomes if o.nodeid.partition("::")[0] in uncounted]
        outcomes = [o for o in outcomes if o not in extra]
        green = green_labs(outcomes)  # a green lab's function is never the one blamed
        outcomes = [attribute(manifest, o, green) for o in outcomes]
        summaries = {}
        findings: list[probing.AuditFinding] = []
        if probes is not None:
            summaries = probing.compare(probes, got, options.commands, alone=alone)
            if audit is not None:
                summaries, findings = probing.audited(
                    summaries, probes, audit, got, options.commands
                )
            summaries = {
                lab: replace(summary, failures=tuple(map(unprefixed, summary.failures)))
                for lab, summary in summaries.items()
            }
        confined = run.confinement
        out_of_memory = confined is not None and confined.out_of_memory()
        expired, enforced = (confined.expired, confined.enforced()) if confined else ("", ())
    problems = (log.collect_errors if not outcomes else []) + ([expired] if expired else [])
    killed = _("the run reached its {size} MB memory limit; the kernel killed a process")
    memory = [killed.format(size=options.limits.memory_mb)] if out_of_memory else []
    notes = [*memory, *filter(None, [run.unsandboxed, log.bounds])]
    forged = list(log.forged)
    return _Ran(outcomes, extra, summaries, findings, forged, problems, notes, tuple(enforced))


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
    uncounted: Sequence[str] = (),
) -> Graded:
    """Run ``labs`` on ``snapshot``'s graded copy and decide each lab from its probes.

    ``selected``: only ``labs`` run (else the whole chapter). ``hide``: more directories learner
    code must not see. ``uncounted``: more test files, counted in no lab (``Graded.extra``).
    A written lab that fails on the learner's code is decided by per-lab credit (``isolated.py``):
    one bug costs the lab it is in, and no run that executes a lab's code holds its reference.
    """
    started = time.monotonic()
    ids = [lab.id for lab in labs]
    if options.probes is None:
        seed = options.seed if options.seed is not None else manifest.probe_seed
        probes = probing.prepare(manifest, kit, labs, seed)
    else:
        probes = options.probes.only(ids)
    audit = options.audit.only(ids) if options.audit and probes else None
    hidden = options.hidden
    catalog = kit_catalog(manifest, kit, kept_catalog) + (hidden.catalog if hidden else Catalog())
    own = _run_copy(
        manifest,
        kit,
        snapshot,
        labs,
        limits,
        options,
        probes,
        audit,
        catalog,
        selected=selected,
        hide=hide,
        uncounted=uncounted,
    )

    def summarized(ran: _Ran, of: Sequence[Lab], notes: Sequence[str]) -> CheckpointResult:
        return summarize(
            manifest,
            of,
            ran.outcomes,
            catalog=catalog,
            target=snapshot.label,
            problems=ran.problems,
            notes=notes,
            probes=ran.summaries,
            seed=probes.seed if probes else None,
            flags=ran.forged,
        )

    result = summarized(own, labs, [*snapshot.notes, *own.notes])
    unwritten = forgery.stub_labs(manifest, kit, snapshot.learner, manifest.labs)
    stubs = [lab for lab in unwritten if lab in ids]
    impossible = forgery.forged_flags(result, stubs) + probing.audit_flags(own.findings, result)
    result = replace(result, flags=result.flags + impossible)
    if not snapshot.isolate or options.in_process:
        return Graded(result, own.enforced, tuple(own.extra))

    def run(held: frozenset[str], deciding: Sequence[Lab]) -> CheckpointResult | None:
        """A credit run (``isolated.Run``), within what is left of the grading's deadline."""
        left = options.deadline_seconds
        if left is not None:
            left -= time.monotonic() - started
            if left <= 0:
                return None
        ids = [lab.id for lab in deciding]
        ran = _run_copy(
            manifest,
            kit,
            snapshot,
            deciding,
            limits,
            replace(options, deadline_seconds=left),
            probes.only(ids) if probes else None,
            audit.only(ids) if audit else None,
            catalog,
            selected=True,
            hide=hide,
            uncounted=(),
            held=held,
        )
        return summarized(ran, deciding, ())

    decided = credit(manifest, result, unwritten, run)
    return Graded(decided, own.enforced, tuple(own.extra), result if decided != result else None)


def _each_text(outcome: TestOutcome, change: Callable[[str], str]) -> TestOutcome:
    """``outcome`` with ``change`` made to its message and to each line it shows."""
    return replace(
        outcome,
        message=change(outcome.message),
        shown=tuple(map(change, outcome.shown)),
        output=tuple(map(change, outcome.output)),
    )


def take_snapshot(manifest: Manifest, kit: Path, root: Path | None) -> Snapshot:
    """What is graded: the workspace at ``root``, or the reference (``None``)."""
    if root is None:
        return reference_snapshot(manifest, kit)
    return workspace_snapshot(manifest, kit, Tree(root))


def evaluate(
    manifest: Manifest,
    kit: Path,
    root: Path | None,
    lab_ids: Sequence[str],
    limits: Limits,
    options: GradingOptions,
    snapshot: Snapshot | None = None,
) -> CheckpointResult:
    """The verdict of ``lab_ids`` (every lab when empty) on a workspace (None: the reference),
    or on the ``snapshot`` the door took of it."""
    labs = [manifest.lab(lab_id) for lab_id in lab_ids] or list(manifest.labs)
    snapshot = snapshot or take_snapshot(manifest, kit, root)
    return grade(manifest, kit, snapshot, labs, limits, options, selected=bool(lab_ids)).result


def for_learners(
    result: CheckpointResult, manifest: Manifest, hidden: HiddenTests | None
) -> CheckpointResult:
    """``result`` as the terminal and the CSV show it: each lab with the chapter's own tests
    and counts (its instructor tests' outcome only decides its status: ``withheld``), and no
    message quoting an instructor test (the JSON report keeps it all)."""
    if hidden is None:
        return result

    def redacted(texts: Iterable[str]) -> tuple[str, ...]:
        return tuple(map(hidden.redact, texts))

    def charge_shown(charge: Charge) -> Charge:
        instructor = _("an instructor test")  # its name is the instructor's
        return replace(charge, test=instructor) if hidden.holds(manifest, charge.test) else charge

    def lab_shown(lab: LabResult) -> LabResult:
        probes = lab.probes and replace(lab.probes, failures=redacted(lab.probes.failures))
        if lab.credit is not None:
            charged = tuple(map(charge_shown, lab.credit.charged))
            lab = replace(lab, credit=replace(lab.credit, charged=charged))
        theirs = [t for t in lab.tests if hidden.holds(manifest, t.nodeid)]
        ours = tuple(
            _each_text(t, hidden.redact) for t in lab.tests if not hidden.holds(manifest, t.nodeid)
        )
        count = hidden.catalog.count(lab.lab.id)
        if not count:
            return replace(lab, tests=ours, probes=probes)
        statuses = {test.status for test in theirs}
        whole = statuses == {Status.PASSED} and len(theirs) == count
        withheld = Status.PASSED if whole else worst(statuses - {Status.PASSED})
        return replace(lab, tests=ours, total=lab.total - count, probes=probes, withheld=withheld)

    labs = tuple(map(lab_shown, result.labs))
    problems, notes, flags = map(redacted, (result.problems, result.notes, result.flags))
    return replace(result, labs=labs, problems=problems, notes=notes, flags=flags)
