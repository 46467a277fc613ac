"""Keyed answers are flagged only by a margin no honest single mistake reaches.

Every curated wrong version (``mutants.py``) answers the shipped cases and one assignment's audit
cases here, in process, as the grader compares them: none is flagged. A solution keyed to the
shipped ``build_context`` inputs is. A lab whose audit cases answer 'pending' while its shipped
ones all agree is a finding of its own; a lab whose shipped cases show the mistake is none.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from inprocess_probes import answers, drawn, findings, install, install_keyed, own, statuses
from mutants import MUTANTS

from course.grading.verdict.probes import audit_finding
from course.harness.manifest import Manifest
from course.sandboxed.status import Status

AUDIT_SEED = 4242
P, F, W = Status.PASSED, Status.FAILED, Status.PENDING


def test_no_curated_mistake_is_flagged_and_a_keyed_solution_is(
    manifest: Manifest, kit: Path, tmp_path: Path
) -> None:
    labs = [lab.id for lab in manifest.required_labs]
    shipped, audit = drawn(manifest.probe_seed, labs), own(drawn(AUDIT_SEED, labs))
    expected = answers(manifest.reference, shipped)
    expected_audit = answers(manifest.reference, audit)

    def found(package: str) -> list[tuple[str, str]]:
        mine = statuses(shipped, expected, answers(package, shipped))
        # A lab whose shipped cases show a mistake has no finding, whatever its audit cases
        # answer (``audit_finding``): only the labs whose shipped cases all agree are audited.
        clean = {lab for lab, seen in mine.items() if all(s == P for _, s in seen)}
        asked = [case for case in audit if str(case["lab"]) in clean]
        theirs = statuses(asked, expected_audit, answers(package, asked))
        return [(f.lab, f.kind) for f in findings(mine, theirs, AUDIT_SEED)]

    flagged = {}
    for mutant in MUTANTS:
        folder = tmp_path / mutant.name
        folder.mkdir()
        result = found(install(manifest, kit, folder, mutant))
        if result:
            flagged[mutant.name] = result
    assert flagged == {}, "honest single mistakes read as keyed answers"
    keyed = tmp_path / "keyed"
    keyed.mkdir()
    assert ("11.3", "keyed") in found(install_keyed(manifest, kit, keyed, shipped))


@pytest.mark.parametrize(
    ("shipped", "audit", "kind"),
    [
        ([("f", P)] * 4, [("f", P)] * 9 + [("f", F)], None),  # one honest miss in ten
        ([("f", P)] * 4, [("f", P)] * 6 + [("f", F)] * 4, "keyed"),
        ([("f", P)] * 4 + [("g", F)], [("f", F)] * 4, None),  # the shipped cases show it
        ([("f", P)] * 4, [("g", F)] * 5 + [("f", P)] * 3, None),  # g is shipped nowhere
        ([("f", P)] * 4, [("f", P)] * 9 + [("f", W)], "pending"),
        ([("f", W)] * 4, [("f", W)] * 9, None),  # a lab not done yet
        ([("f", P)] * 4, [("f", P)] * 2 + [("f", Status.TIMEOUT)] * 8, None),  # a hang: no answer
    ],
)
def test_what_the_audit_cases_show(
    shipped: list[tuple[str, Status]], audit: list[tuple[str, Status]], kind: str | None
) -> None:
    finding = audit_finding("11.3", shipped, audit, 7)
    assert (finding.kind if finding else None) == kind
