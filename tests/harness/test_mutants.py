"""Every curated wrong implementation is caught by the focused tests of its lab, legibly.

Caught means failed by an assertion of one of its lab's tests, with a message that holds what
the mutant's author wrote down (the case, the entry or field, expected against got). No
message anywhere says ``DID NOT RAISE`` or shows text as ``\\u`` escapes.
"""

from __future__ import annotations

import re
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from mutants import MUTANTS, Mutant, build_mutant

from course.harness.manifest import Manifest
from course.harness.results import TestOutcome
from course.harness.runner import RunTarget, run_focused_tests


@pytest.fixture(scope="module")
def outcomes(
    manifest: Manifest, kit: Path, tmp_path_factory: pytest.TempPathFactory
) -> dict[str, list[TestOutcome]]:
    """Every lab's tests run against every mutant (two at a time: each run is a process)."""
    folder = tmp_path_factory.mktemp("mutants")

    def run(mutant: Mutant) -> list[TestOutcome]:
        package = build_mutant(manifest, kit, mutant, folder)
        return run_focused_tests(RunTarget(kit, manifest.test_files, package, (folder,)))[0]

    with ThreadPoolExecutor(max_workers=2) as pool:
        return dict(zip([m.name for m in MUTANTS], pool.map(run, MUTANTS), strict=True))


def test_there_are_enough_mutants_for_every_lab(manifest: Manifest) -> None:
    assert len(MUTANTS) >= 25
    assert {m.lab for m in MUTANTS} == {lab.id for lab in manifest.labs}
    assert len({m.name for m in MUTANTS}) == len(MUTANTS)
    assert all(m.says for m in MUTANTS), "each mutant says what a learner should read"


ESCAPED = re.compile(r"\\u[0-9a-fA-F]{4}")


@pytest.mark.parametrize("mutant", MUTANTS, ids=[m.name for m in MUTANTS])
def test_the_focused_tests_kill_the_mutant(
    mutant: Mutant, manifest: Manifest, outcomes: dict[str, list[TestOutcome]]
) -> None:
    results = outcomes[mutant.name]
    assert len(results) == sum(lab.tests for lab in manifest.labs)
    assert not [t for t in results if t.status in ("pending", "timeout", "error")], (
        "a mutant must be caught by an assertion, not crash the run"
    )
    killers = [t.name for t in results if t.status == "failed"]
    assert killers, f"mutant {mutant.name} survived: {mutant.why}"
    own = [t.message for t in results if t.status == "failed" and t.lab == mutant.lab]
    assert own, f"mutant {mutant.name} should be caught by Lab {mutant.lab}; killed by {killers}"
    assert any(all(part in message for part in mutant.says) for message in own), (
        f"mutant {mutant.name}: no failure of Lab {mutant.lab} says all of {mutant.says}; "
        f"they say:\n" + "\n---\n".join(own)
    )
    for test in results:
        assert "DID NOT RAISE" not in test.message, f"{test.name}: {test.message}"
        assert not ESCAPED.search(test.message), f"{test.name} shows escapes: {test.message}"
