"""``checkpoint 11 --replay 11.3#007``: one probe case, again, on the saved code, frames and all.

The case is drawn as the grader draws it and answered by the reference; a workspace's saved
package answers it in the probe driver, confined as every door confines learner code (the
sandbox, required for someone else's folder, ``--practice DIR``), never in this process. Only
the kit's own reference (no workspace found) is run here.
"""

from __future__ import annotations

from dataclasses import replace
from typing import TextIO

from ..grading.intake.door import Door
from ..grading.verdict import probes as probing
from ..grading.verdict.engine import GradingOptions, graded_run
from ..harness.kit import KitError
from ..harness.manifest import Lab, ManifestError
from ..harness.reference import import_reference
from ..harness.supervisor import Limits
from ..locale import gettext as _
from ..locale import unquoted
from ..sandboxed import probecases
from ..sandboxed.commands import Commands
from ..sandboxed.frames import Frame, learner_frames, render_frames, traceback_triples
from ..sandboxed.probe_driver import load_module
from ..sandboxed.status import Status
from ..sandboxed.untrusted import safe_text
from .locate import Where


def replay(
    door: Door,
    where: Where,
    case_id: str,
    out: TextIO,
    commands: Commands,
    grading: GradingOptions,
    limits: Limits,
) -> int:
    """Replay one case on ``where``'s code; 0 when it agrees with the reference, else 1
    (``grading``: the door's sandbox and seed; ``limits``: the case's time limit)."""
    seed = grading.seed
    manifest, kit, root = door.manifest, door.kit, door.root
    if manifest.probes is None:
        raise KitError(_("chapter {chapter} has no probe cases").format(chapter=manifest.chapter))
    lab_id, mark, number = case_id.partition("#")
    if not (mark and number):
        said = _("{case} is not a probe case id: write LAB#NUMBER, such as {example}")
        example = f"{manifest.labs[0].id}#001"
        raise ManifestError(said.format(case=safe_text(case_id, 40), example=example))
    lab = manifest.lab(lab_id)
    probes = probing.prepare(manifest, kit, [lab], manifest.probe_seed if seed is None else seed)
    assert probes is not None  # the manifest names a probe module
    case = next((case for case in probes.cases if str(case["id"]) == case_id), None)
    if case is None:
        first, last = probes.cases[0]["id"], probes.cases[-1]["id"]
        missing = _("no probe case {case} (Lab {lab} has {first} to {last})")
        raise ManifestError(missing.format(case=case_id, lab=lab.id, first=first, last=last))
    said = _("Replaying probe case {case} on {where}").format(case=case_id, where=where.label)
    print(said, file=out, flush=True)
    if root is None:
        got, found = _by_the_reference(door, where, case)
    else:
        got, found, unsandboxed = _confined(door, lab, probes, case_id, grading, limits)
        if unsandboxed:
            print(unsandboxed, file=out)
    frames = render_frames(found, limit=len(found))
    if probecases.agreement(probes.expected[case_id], got) == Status.PASSED:
        if root is not None and _fails_after_others(door, case_id, grading, limits, probes.seed):
            alone = _(
                "{case}: passes alone; failed after other cases — look for state kept between "
                "calls (a module-level cache, a counter, a default argument that is changed)"
            )
            print(alone.format(case=unquoted(probecases.case_label(case))), file=out)
            return 1
        agrees = _("{case}: agrees with the reference")
        print(agrees.format(case=unquoted(probecases.case_label(case))), file=out)
        return 0
    print(probing.describe_case(probes, case, got, commands), file=out)
    if frames:
        print(_("raised in your code:"), file=out)
        print("\n".join(f"  {line}" for line in frames), file=out)
    return 1


def _by_the_reference(
    door: Door, where: Where, case: probecases.Case
) -> tuple[probecases.Answer, list[Frame]]:
    """The kit's own reference answering ``case`` in this process (no learner code runs)."""
    manifest = door.manifest
    chapter = load_module(door.kit / str(manifest.probes), "course_probes_replay")
    import_reference(manifest, door.kit)
    try:
        return {"value": probecases.to_data(chapter.evaluate(manifest.reference, case))}, []
    except Exception as error:
        found = learner_frames(traceback_triples(error.__traceback__), where.package_dir)
        return probecases.raised(error), found


def _confined(
    door: Door,
    lab: Lab,
    probes: probing.ProbeSet,
    case_id: str,
    grading: GradingOptions,
    limits: Limits,
) -> tuple[probecases.Answer, list[Frame], str]:
    """The workspace's answer to one case and its frames, from the probe driver in a graded
    copy, confined as ``grading`` says; and why it was not sandboxed ('' when it was)."""
    manifest = door.manifest
    one = replace(probes, cases=tuple(c for c in probes.cases if str(c["id"]) == case_id))
    modules = tuple(sorted({f.module for f in lab.functions}))
    with graded_run(manifest, door.kit, door.snapshot, grading, probes=one) as run:
        target = probing.ProbeTarget(
            run.copy, manifest.package, modules, (run.copy, run.library), run.wrap
        )
        answers, frames = probing.answers_and_frames(one, target, limits)
    return answers[case_id], list(frames.get(case_id, ())), run.unsandboxed


def _fails_after_others(
    door: Door, case_id: str, grading: GradingOptions, limits: Limits, seed: int
) -> bool:
    """Whether the workspace's code disagrees on ``case_id`` when it answers, in one process,
    every case as the run asks them (every lab's, in draw order and again in reverse)."""
    manifest = door.manifest
    before = probing.prepare(manifest, door.kit, list(manifest.labs), seed)
    assert before is not None  # the manifest names a probe module
    modules = tuple(sorted({f.module for lab in manifest.labs for f in lab.functions}))
    with graded_run(manifest, door.kit, door.snapshot, grading, probes=before) as run:
        target = probing.ProbeTarget(
            run.copy, manifest.package, modules, (run.copy, run.library), run.wrap
        )
        answers = probing.run_probes(before, target, limits)
    return probecases.agreement(before.expected[case_id], answers[case_id]) != Status.PASSED
