"""``checkpoint 11 --replay 11.3#007``: one probe case, again, on the saved code, frames and all.

The case is drawn as the grader draws it, answered by the reference, then run here on the
workspace's saved package: unsandboxed, as it is the learner's own code.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any, TextIO

from ..grading import probes as probing
from ..harness.kit import KitError
from ..harness.manifest import Manifest, ManifestError
from ..locale import gettext as _
from ..sandboxed import probecases
from ..sandboxed.commands import BY_NAME, Commands
from ..sandboxed.frames import learner_frames, render_frames, traceback_triples
from ..sandboxed.probe_driver import load_module
from ..sandboxed.status import Status
from .locate import Where


def find_case(
    manifest: Manifest, kit: Path, case_id: str, seed: int
) -> tuple[probing.ProbeSet, dict[str, Any]]:
    """The drawn set of ``case_id``'s lab and the case; a ``ManifestError`` says what is wrong."""
    lab = manifest.lab(case_id.partition("#")[0])
    probes = probing.prepare(manifest, kit, [lab], seed)
    if probes is None:
        raise ManifestError(
            _("chapter {chapter} has no probe cases").format(chapter=manifest.chapter)
        )
    for case in probes.cases:
        if str(case["id"]) == case_id:
            return probes, case
    first, last = probes.cases[0]["id"], probes.cases[-1]["id"]
    missing = _("no probe case {case} (Lab {lab} has {first} to {last})")
    raise ManifestError(missing.format(case=case_id, lab=lab.id, first=first, last=last))


def replay(
    manifest: Manifest,
    kit: Path,
    where: Where,
    case_id: str,
    seed: int | None,
    out: TextIO,
    commands: Commands = BY_NAME,
) -> int:
    """Replay one case on ``where``'s code; 0 when it agrees with the reference, else 1."""
    if manifest.probes is None:
        raise KitError(_("chapter {chapter} has no probe cases").format(chapter=manifest.chapter))
    probes, case = find_case(manifest, kit, case_id, manifest.probe_seed if seed is None else seed)
    root = where.root
    package = manifest.package if root is not None else manifest.reference
    said = _("Replaying probe case {case} on {where}").format(case=case_id, where=where.label)
    print(said, file=out, flush=True)
    chapter = load_module(kit / manifest.probes, "course_probes_replay")
    frames: list[str] = []
    if root is not None:
        sys.path.insert(0, str(root))
    try:
        got: probecases.Answer = {"value": probecases.to_data(chapter.evaluate(package, case))}
    except Exception as error:
        got = probecases.raised(error)
        triples = traceback_triples(error.__traceback__)
        found = learner_frames(triples, where.package_dir)
        frames = render_frames(found, limit=len(found))
    expected = probes.expected[case_id]
    if probecases.agreement(expected, got) == Status.PASSED:
        agrees = _("{case}: agrees with the reference")
        print(agrees.format(case=probecases.case_label(case)), file=out)
        return 0
    print(probing.describe_case(probes, case, got, commands), file=out)
    if frames:
        print(_("raised in your code:"), file=out)
        print("\n".join(f"  {line}" for line in frames), file=out)
    return 1
