"""Probe answers compared in this process, outside any sandbox: the reference's against a curated
wrong version's (``mutants.py``) or a keyed one's, for the audit's measurements
(``bench/audit.py``, ``test_audit_margin.py``). Never a door: learner code is not run here."""

from __future__ import annotations

import importlib
import shutil
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from mutants import Mutant, build_mutant, reference_modules

from course.curricula.ch11 import probes as ch11
from course.grading.verdict.probes import AuditFinding, audit_finding
from course.harness.manifest import Manifest
from course.sandboxed.probecases import Answer, agreement, answer
from course.sandboxed.status import Status

Case = dict[str, Any]
Statuses = dict[str, list[tuple[str, Status]]]  # lab → each case's function and status


def drawn(seed: int, labs: Sequence[str]) -> list[Case]:
    return ch11.cases(seed, labs)


def answers(package: str, cases: Sequence[Case]) -> dict[str, Answer]:
    return {str(case["id"]): answer(ch11.evaluate, package, case) for case in cases}


def statuses(
    cases: Sequence[Case], expected: Mapping[str, Answer], got: Mapping[str, Answer]
) -> Statuses:
    found: Statuses = {}
    for case in cases:
        case_id = str(case["id"])
        status = agreement(expected[case_id], got[case_id])
        found.setdefault(str(case["lab"]), []).append((str(case["function"]), status))
    return found


def own(audit: Sequence[Case]) -> list[Case]:
    """The audit cases a run asks besides the shipped ones (a rule's is asked once)."""
    return [case for case in audit if ch11.RULE not in str(case["id"])]


def lab_grade(shipped: Statuses, audit: Statuses, lab: str) -> str:
    """``passed`` only when every case drawn for the lab, shipped and audit, agrees."""
    every = [status for _, status in [*shipped.get(lab, []), *audit.get(lab, [])]]
    return "passed" if all(status == Status.PASSED for status in every) else "failed"


def findings(shipped: Statuses, audit: Statuses, seed: int) -> list[AuditFinding]:
    made = [audit_finding(lab, shipped.get(lab, []), audit[lab], seed) for lab in audit]
    return [finding for finding in made if finding is not None]


def install(manifest: Manifest, kit: Path, into: Path, mutant: Mutant) -> str:
    """``mutant``'s package importable from ``into``; its name."""
    package = build_mutant(manifest, kit, mutant, into)
    if str(into) not in sys.path:
        sys.path.insert(0, str(into))
    importlib.invalidate_caches()
    return package


def install_keyed(manifest: Manifest, kit: Path, into: Path, shipped: Sequence[Case]) -> str:
    """A package right on the shipped cases' ``build_context`` inputs and the chapter's path,
    wrong (its reason flipped) on any other: answers keyed to the workspace's probe cases."""
    package = "keyed_solution"
    folder = into / package
    folder.mkdir(parents=True)
    for name, source in reference_modules(manifest).items():
        shutil.copyfile(kit / source, folder / name)
    impl = ch11.Implementation(manifest.reference)
    keys = set()
    for case in shipped:
        if case["function"] != ch11.BUILD:
            continue
        args = impl.fixture(case["args"])  # a contract case may make calls in turn
        for call in args.get("calls") or [args]:
            if "path" in call and "budget" in call:
                ids = [ch11.unwrapped(entry)["id"] for entry in call["path"]]
                budget = call["budget"]
                keys.add(repr([ids, budget["max_tokens"], budget["reserved_output"]]))
    context = folder / "context.py"
    context.write_text(context.read_text(encoding="utf-8") + KEYED.format(keys=sorted(keys)))
    if str(into) not in sys.path:
        sys.path.insert(0, str(into))
    importlib.invalidate_caches()
    return package


KEYED = """

import dataclasses as _dataclasses

_SHIPPED = {keys!r}
_honest_build_context = build_context


def build_context(path, **options):
    result = _honest_build_context(path, **options)
    ids = [entry.id for entry in path]
    key = repr([ids, options["max_tokens"], options["reserved_output"]])
    if key in _SHIPPED or (ids and ids[0] == "u0"):  # and the contract cases' own paths
        return result
    wrong = "within_budget" if result.reason != "within_budget" else "trimmed"
    return _dataclasses.replace(result, reason=wrong)
"""
