"""Per-lab credit: a bug costs the lab it is in, and no run that executes a lab's code can reach
that lab's reference.

The learner's own run (every lab on the learner's code) is what every door shows: each test's
status and message, each case, the evidence line's counts. Per-lab credit decides the labs that
own run leaves open, with runs that hold the reference's code for some labs (the run *holds*
them) and run the learner's for the rest (``sandboxed/isolation.py``). **The invariant: a run
decides only labs whose reference it does not hold**, and its graded copy holds nothing of
theirs (``isolation_files``: the reference's modules cut to the labs held, ``cut.py``), so
learner code that looks for the reference of the lab it is graded for, in memory or on disk,
finds none.

A written lab Y that does not pass on the learner's code is decided so:

1. If its own code fails it (a run with Y's functions the learner's and every other lab's the
   reference's fails it too), the own run's verdict stands.
2. If some other lab's code made the difference, that lab is found: the labs the learner has
   not written yet first (a run holding only their reference: a lab written before the one it
   builds on keeps its points, and no written lab is charged for it), then one written lab Z
   at a time (a run holding only the reference of Z and of the unwritten labs). The first Z,
   in ``suspects``' order, whose run passes Y is charged (``Credit.charged``: Z loses its
   points, Y's failing test named in Z's row) and Y keeps its points (``Credit.through``).
3. A Y that no single lab explains is graded as the learner's own run says: a grade is earned by
   the learner's own code or not at all.

``credit`` orders these runs so that one run settles as many labs as it can (a swap run
decides every lab still open that it does not hold), and tries the likeliest culprit before
running each open lab on its own.

Nothing a credit run says reaches a learner but which labs passed in it: no message, output or
answer of it is kept.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import replace
from pathlib import Path

from ...harness.kit import read_source
from ...harness.manifest import Lab, Manifest
from ...harness.results import Charge, CheckpointResult, Credit, LabResult
from ...locale import gettext as _
from ...sandboxed.isolation import SPEC_VARIABLE
from ...sandboxed.status import Status
from .cut import cut_module

SPEC = ".isolation.json"  # in a credit run's graded copy
REFERENCE = ".reference"  # the folder of the reference's lab modules there, cut

Run = Callable[[frozenset[str], Sequence[Lab]], CheckpointResult | None]
"""A credit run: ``labs`` graded with the reference's code for the labs held (never one of
``labs``) and the learner's for the rest; None when the grading's deadline left no time."""


class HeldLabError(ValueError):
    """A run was asked to decide a lab whose reference it holds (the message names it)."""


def open_labs(result: CheckpointResult, stubs: Collection[str]) -> list[LabResult]:
    """The labs ``result`` did not pass whose functions the learner has written (``stubs``: the
    labs still the starter's, ``forgery.stub_labs``: per-lab credit shows nothing new of them)."""
    return [lab for lab in result.labs if lab.status != Status.PASSED and lab.lab.id not in stubs]


def isolation_files(
    manifest: Manifest, kit: Path, held: Collection[str], decides: Collection[str]
) -> dict[str, bytes]:
    """A credit run's extra files: each learner module's reference cut to the functions of the
    labs ``held`` (``cut.py``), and the spec naming them. ``HeldLabError`` if the run would
    decide a lab it holds."""
    overlap = sorted(set(held) & set(decides))
    if overlap:
        said = "a run decides only labs whose reference it does not hold: {labs}"
        raise HeldLabError(said.format(labs=", ".join(overlap)))
    functions = [(lab.id, f) for lab in manifest.labs for f in lab.functions]
    holding = {f.module for lab, f in functions if lab in held}
    cut_away = {m: [f.function for lab, f in functions if f.module == m and lab not in held]
                for m in holding}  # fmt: skip
    files = {
        f"{REFERENCE}/{Path(file.path).name}": cut_module(
            read_source(kit, file.reference).decode("utf-8"), cut_away[Path(file.path).stem]
        ).encode("utf-8")
        for file in manifest.files_with_role("learner")
        if file.reference is not None and Path(file.path).stem in holding
    }
    spec = {
        "package": manifest.package,
        "reference": REFERENCE,
        "labs": {lab.id: [f.name for f in lab.functions] for lab in manifest.labs},
        "held": sorted(held),
        "decides": sorted(decides),
    }
    files[SPEC] = json.dumps(spec, sort_keys=True).encode("utf-8")
    return files


def isolation_environment() -> dict[str, str]:
    """What a credit run's children are told (the spec, relative to the graded copy)."""
    return {SPEC_VARIABLE: SPEC}


def _passes(ran: CheckpointResult | None, lab: str) -> bool:
    found = ran.lab(lab) if ran is not None else None
    return found is not None and found.status == Status.PASSED


def suspects(
    manifest: Manifest,
    own: CheckpointResult,
    opened: Sequence[LabResult],
    unwritten: Collection[str],
) -> tuple[list[str], list[str]]:
    """The written labs whose code may have failed the labs ``opened``, in the order they are
    tried: the likely ones (the labs of the code running where their tests raised, innermost
    first, a module's own code, ``<module>``, standing for every lab of that module; then the
    labs that did not pass) and the rest, each in the manifest's order. (Where a test hung is
    left out: a stack taken at a deadline can differ from one run to the next, and the same
    files must be tried in the same order.)"""
    framed = [
        found.id
        for lab in opened
        for test in lab.tests
        if test.status in (Status.FAILED, Status.ERROR)
        for frame in reversed(test.frames)
        for found in manifest.labs
        if f"{frame.module}.{frame.function}" in found.solution
        or (frame.function == "<module>" and frame.module in {f.module for f in found.functions})
    ]
    failing = [lab.lab.id for lab in own.labs if lab.status != Status.PASSED]
    likely = [lab for lab in dict.fromkeys([*framed, *failing]) if lab not in unwritten]
    rest = [lab.id for lab in manifest.labs if lab.id not in unwritten and lab.id not in likely]
    return likely, rest


def _reached_a_stub(lab: LabResult) -> bool:
    """Whether a test or case of the lab stopped at a lab not written yet."""
    probes = lab.probes.status if lab.probes is not None else Status.PASSED
    return probes == Status.PENDING or any(t.status == Status.PENDING for t in lab.tests)


def credit(
    manifest: Manifest, own: CheckpointResult, stubs: Collection[str], run: Run
) -> CheckpointResult:
    """``own`` with the labs per-lab credit decides decided; ``stubs``: every lab of the
    manifest still the starter's; ``run``: a credit run.

    Which runs, in order (each deciding every lab still open that it does not hold, so a run
    can settle several): the unwritten labs' reference, when an open lab stopped at one; the
    likeliest culprit's (``suspects``); each lab still open on its own (with every other lab's
    reference: one that fails there fails by its own code, and is settled); then one suspect
    at a time, until every open lab is explained."""
    every = frozenset(lab.id for lab in manifest.labs)
    unwritten = frozenset(stubs)
    opened = open_labs(own, unwritten)
    likely, rest = suspects(manifest, own, opened, unwritten)
    labs = [lab.lab for lab in opened]
    explained: dict[str, tuple[str, ...]] = {}
    forged = False

    def tried(held: frozenset[str], deciding: Sequence[Lab]) -> CheckpointResult | None:
        nonlocal forged
        ran = run(held, deciding) if deciding else None
        forged |= bool(ran and ran.flags)
        return ran

    def swap(held: frozenset[str], culprits: tuple[str, ...], among: Sequence[Lab]) -> bool:
        """A run holding ``held``; the labs of ``among`` it passes are ``culprits``' charge
        (False: no time left)."""
        deciding = [lab for lab in among if lab.id not in held and lab.id not in explained]
        ran = tried(held, deciding)
        explained.update({lab.id: culprits for lab in deciding if _passes(ran, lab.id)})
        return ran is not None or not deciding

    timely, starters = True, tuple(sorted(unwritten))
    stopped = any(map(_reached_a_stub, opened))
    if unwritten and stopped:
        timely = swap(unwritten, starters, labs)
    if timely and likely:
        timely = swap(unwritten | {likely[0]}, (likely[0],), labs)
    alone: list[Lab] = []
    for lab in labs:
        if not timely or lab.id in explained:
            continue
        ran = tried(every - {lab.id}, [lab])
        timely = ran is not None
        if _passes(ran, lab.id):
            alone.append(lab)
    for culprit in [*likely[1:], *rest]:
        if not timely or all(lab.id in explained for lab in alone):
            break
        timely = swap(unwritten | {culprit}, (culprit,), alone)
    charged = [lab for lab in labs if explained.get(lab.id, starters) != starters]
    if timely and unwritten and not stopped and charged:  # the starter's code alone may do
        ran = tried(unwritten, charged)
        explained |= {lab.id: starters for lab in charged if _passes(ran, lab.id)}
    unexplained = [lab.id for lab in alone if lab.id not in explained]
    return credited(own, explained, unexplained, unwritten, forged)


def _first_failure(lab: LabResult) -> str:
    """The lab's first failing test (its node id), else its first disagreeing case's id."""
    test = next((t for t in lab.tests if t.status != Status.PASSED), None)
    if test is not None:
        return test.nodeid
    failing = lab.probes.failing if lab.probes is not None else ()
    return failing[0] if failing else lab.lab.id


def credited(
    own: CheckpointResult,
    explained: Mapping[str, tuple[str, ...]],
    unexplained: Sequence[str],
    unwritten: Collection[str],
    forged: bool = False,
) -> CheckpointResult:
    """``own`` with each lab of ``explained`` passing through the labs it names (charged, each
    with the lab's first failing test, unless not written yet), a note for each, and one for
    each lab that passes only with the reference's other labs and no single one explains."""
    charges: dict[str, list[Charge]] = {}
    for lab_id, culprits in explained.items():
        lab = own.lab(lab_id)
        assert lab is not None  # a lab explained is a lab of the run
        for culprit in culprits:
            if culprit not in unwritten:
                charges.setdefault(culprit, []).append(Charge(lab_id, _first_failure(lab)))
    labs = []
    for lab in own.labs:
        through, charged = explained.get(lab.lab.id, ()), tuple(charges.get(lab.lab.id, ()))
        starters = bool(through) and all(culprit in unwritten for culprit in through)
        found = Credit(through, charged, starters) if through or charged else None
        labs.append(replace(lab, credit=found))
    notes = [_note(own, lab_id, culprits, unwritten) for lab_id, culprits in explained.items()]
    alone = _(
        "Lab {lab} passes with the reference's code for all your other labs, and no one of "
        "them alone makes the difference: it is graded as your own code's run says"
    )
    notes += [alone.format(lab=lab_id) for lab_id in unexplained]
    said = _(
        "a run that grades a lab with the reference's code for other labs reported tests the "
        "kit does not hold, or one test twice (its records are not shown: that run holds the "
        "reference's code)"
    )
    flags = own.flags + ((said,) if forged else ())
    return replace(own, labs=tuple(labs), notes=own.notes + tuple(notes), flags=flags)


def _note(
    own: CheckpointResult, lab_id: str, culprits: Sequence[str], unwritten: Collection[str]
) -> str:
    """Why a lab that failed with the learner's code keeps its points, and who is charged."""
    lab = own.lab(lab_id)
    first = Charge(lab_id, _first_failure(lab)).name if lab is not None else lab_id
    named = _(", ").join(f"Lab {culprit}" for culprit in culprits)
    if all(culprit in unwritten for culprit in culprits):
        said = _(
            "Lab {lab} passes with the reference's code for {culprits} (not written yet) and "
            "keeps its points; with the starter's code it fails. First to fail: {first}."
        )
        return said.format(lab=lab_id, culprits=named, first=first)
    said = _(
        "Lab {lab} passes with the reference's {culprits} and keeps its points; with your "
        "{culprits} it fails, so {culprits} loses its own. First to fail: {first}."
    )
    return said.format(lab=lab_id, culprits=named, first=first)
