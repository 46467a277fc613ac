"""``checkpoint 11 --replay 11.3#007``: one probe case, again, on the saved code, frames and all.

The case is drawn as the grader draws it, answered by the reference, then run here on the
workspace's saved package: unsandboxed, as it is the learner's own code.
"""

from __future__ import annotations

import sys
from typing import TextIO

from ..grading import probes as probing
from ..grading.door import Door
from ..harness.kit import KitError
from ..harness.manifest import ManifestError
from ..locale import gettext as _
from ..sandboxed import probecases
from ..sandboxed.commands import Commands
from ..sandboxed.frames import learner_frames, render_frames, traceback_triples
from ..sandboxed.probe_driver import load_module
from ..sandboxed.status import Status
from .locate import Where


def replay(
    door: Door, where: Where, case_id: str, seed: int | None, out: TextIO, commands: Commands
) -> int:
    """Replay one case on ``where``'s code; 0 when it agrees with the reference, else 1."""
    manifest, kit, root = door.manifest, door.kit, door.root
    if manifest.probes is None:
        raise KitError(_("chapter {chapter} has no probe cases").format(chapter=manifest.chapter))
    lab = manifest.lab(case_id.partition("#")[0])
    probes = probing.prepare(manifest, kit, [lab], manifest.probe_seed if seed is None else seed)
    assert probes is not None  # the manifest names a probe module
    case = next((case for case in probes.cases if str(case["id"]) == case_id), None)
    if case is None:
        first, last = probes.cases[0]["id"], probes.cases[-1]["id"]
        missing = _("no probe case {case} (Lab {lab} has {first} to {last})")
        raise ManifestError(missing.format(case=case_id, lab=lab.id, first=first, last=last))
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
        found = learner_frames(traceback_triples(error.__traceback__), where.package_dir)
        frames = render_frames(found, limit=len(found))
    if probecases.agreement(probes.expected[case_id], got) == Status.PASSED:
        agrees = _("{case}: agrees with the reference")
        print(agrees.format(case=probecases.case_label(case)), file=out)
        return 0
    print(probing.describe_case(probes, case, got, commands), file=out)
    if frames:
        print(_("raised in your code:"), file=out)
        print("\n".join(f"  {line}" for line in frames), file=out)
    return 1
