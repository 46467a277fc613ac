"""A roster also draws probe cases no workspace holds, so answers keyed to the shipped ones earn
nothing, while honest code gets the same verdict as at every other door.

A workspace ships its seed's probe cases with the reference's answers (``probe_cases.json``).
``kev`` below reads them as a cheat would: its ``build_context`` is right on the chapter's own
path and on every input the shipped cases hold, and wrong on anything else. Its own
``checkpoint`` passes; the roster's audit cases (a new seed each run, recorded in the
gradebook) fail it, flagged.
"""

from __future__ import annotations

import csv
import json
from pathlib import Path
from typing import Any

import pytest
from harness_support import cli, roster_workspace

from course.harness.kit import kit_root
from course.harness.manifest import Manifest
from course.probes import ch11

KEYED = """

# --- keyed to the shipped probe cases: right where the answers are known, wrong elsewhere ---
import dataclasses as _dataclasses

_SHIPPED = {shipped!r}
_honest_build_context = build_context


def build_context(path, **options):  # type: ignore[no-redef]
    result = _honest_build_context(path, **options)
    ids = [entry.id for entry in path]
    key = repr([ids, options["max_tokens"], options["reserved_output"], options["safety_margin"]])
    if (ids and ids[0] in ("u1", "u0")) or key in _SHIPPED:  # the focused tests' paths
        return result
    wrong = "within_budget" if result.reason != "within_budget" else "trimmed"
    return _dataclasses.replace(result, reason=wrong)
"""


def shipped_keys() -> set[str]:
    """What the cheat recognises: every shipped ``build_context`` case's ids and budget."""
    data = json.loads((kit_root() / "starters" / "11-probes.json").read_text(encoding="utf-8"))
    impl = ch11.Implementation("course")
    keys = set()
    for case in data["cases"]:
        if case["function"] != "context.build_context":
            continue
        args: dict[str, Any] = impl.fixture(case["args"])
        for call in args.get("calls", [args]):  # a case of calls in turn: each call's
            if "interactions" in call:  # a long path, made where the case is answered
                path = ch11.long_path(call["interactions"], call.get("compact_at", ()))
            else:
                path = call["path"]
            ids = [entry["id"] for entry in path]
            budget = call["budget"]
            numbers = [budget["max_tokens"], budget["reserved_output"], budget["safety_margin"]]
            keys.add(repr([ids, *numbers]))
    return keys


@pytest.fixture(scope="module")
def roster(manifest: Manifest, tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("audit") / "class"
    roster_workspace(manifest, folder, "ada", solved=5)
    kev = roster_workspace(manifest, folder, "kev", solved=5)
    context = kev / "pi_course" / "context.py"
    context.write_text(
        context.read_text(encoding="utf-8") + KEYED.format(shipped=sorted(shipped_keys())),
        encoding="utf-8",
    )
    return folder


def test_keyed_answers_pass_the_learners_own_checkpoint(roster: Path) -> None:
    """The cheat is one a learner's doors cannot see: every shipped case agrees."""
    run = cli("checkpoint", "11", "--lab", "11.3", "--no-card", cwd=roster / "kev")
    assert run.returncode == 0, run.stdout + run.stderr


def test_the_roster_fails_keyed_answers_and_flags_them(roster: Path) -> None:
    run = cli("checkpoint", "11", "--roster", str(roster), "--jobs", "2")
    assert run.returncode == 0, run.stdout + run.stderr
    rows = {r["learner"]: r for r in csv.DictReader((roster / "gradebook.csv").open())}
    book = json.loads((roster / "gradebook.json").read_text(encoding="utf-8"))
    audit = book["probes"]["audit"]
    assert isinstance(audit["seed"], int) and audit["seed"] != book["probes"]["seed"]
    assert audit["cases"] > 0

    honest = rows["ada"]
    assert (honest["status"], honest["score"], honest["passed"]) == ("passed", "100", "14"), honest
    assert "drawn for this roster" not in honest["flags"]

    keyed = rows["kev"]
    assert keyed["status 11.3"] == "failed", keyed
    assert "Lab 11.3: every shipped probe case agrees" in keyed["flags"], keyed
    assert f"(seed {audit['seed']})" in keyed["flags"], keyed
    # its counts are the shipped cases', the same as at every door: all of them agree
    agreed, cases = keyed["cases 11.3"].split("/")
    assert keyed["lab 11.3"] == "3/3" and agreed == cases, keyed
    assert int(keyed["score"]) <= 100 - 20, "a failed lab earns nothing"


def test_an_instructor_may_fix_the_audit_seed(manifest: Manifest, tmp_path: Path) -> None:
    """A class of one learner who has done Lab 11.1, graded on that lab: the seed is the
    instructor's."""
    roster_workspace(manifest, tmp_path / "class", "ada", solved=1)
    book = tmp_path / "book"
    run = cli(
        "checkpoint", "11", "--roster", str(tmp_path / "class"), "--audit-seed", "4242",
        "--gradebook", str(book), "--lab", "11.1",
    )  # fmt: skip
    assert run.returncode == 0, run.stdout + run.stderr
    data = json.loads((book / "gradebook.json").read_text(encoding="utf-8"))
    assert data["probes"]["audit"]["seed"] == 4242


def test_the_audit_seed_goes_with_the_roster_only(roster: Path) -> None:
    run = cli("checkpoint", "11", "--audit-seed", "5", cwd=roster / "ada")
    assert run.returncode == 2 and "--audit-seed go with --roster" in run.stderr, run.stderr
