"""A roster also draws probe cases no workspace holds, so answers keyed to the shipped ones earn
nothing, while honest code gets the same verdict as at every other door.

A workspace ships its seed's probe cases with the reference's answers (``probe_cases.json``).
``kev`` below reads them as a cheat would: its ``build_context`` is right on the chapter's own
path and on every input the shipped cases hold, and wrong on anything else. Its own
``checkpoint`` passes; the roster's audit cases (the assignment's seed, kept in
``assignment-11.toml`` beside the gradebook) fail it, flagged.
"""

from __future__ import annotations

import csv
import hashlib
import json
import re
import shutil
from pathlib import Path
from typing import Any

import pytest
from harness_support import cli, replace_in, roster_workspace
from mutants import MUTANTS

from course.curricula.ch11 import probes as ch11
from course.grading.verdict import probes as probing
from course.harness.kit import kit_root
from course.harness.manifest import Manifest

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
            elif "path" in call:
                path = call["path"]
            else:
                continue  # a case of another shape (its contract builds the call): never keyed
            if "budget" not in call:
                continue
            if not all(isinstance(entry, dict) and "id" in entry for entry in path):
                continue  # a broken history (an entry without an id): refused, never keyed
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
    rows = {
        r["learner"]: r
        for r in csv.DictReader((roster / "gradebook.csv").open(encoding="utf-8-sig"))
    }
    book = json.loads((roster / "gradebook.json").read_text(encoding="utf-8"))
    audit = book["probes"]["audit"]
    assert isinstance(audit["seed"], int) and audit["seed"] != book["probes"]["seed"]
    assert audit["cases"] > 0

    honest = rows["ada"]
    assert (honest["status"], honest["score"], honest["passed"]) == ("passed", "100", "14"), honest
    assert "keyed" not in honest["flags"] and "impossible" not in honest["flags"], honest

    keyed = rows["kev"]
    assert keyed["status 11.3"] == "failed", keyed
    assert "Lab 11.3: answers keyed to the shipped cases" in keyed["flags"], keyed
    assert f"(seed {audit['seed']})" in keyed["flags"], keyed
    assert book["probes"]["audit"]["assignment"] == str(roster / "assignment-11.toml")
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
    assert run.returncode == 2 and "--audit-seed and --assignment go with --roster" in run.stderr, (
        run.stderr
    )


AUDIT_PENDING = """

# --- right on every case the workspace ships, 'not implemented' on the grader's own cases ---
import json as _json
import sys as _sys

_honest_parse_summary = parse_summary


def _grader_cases():
    try:
        with open(".probe-cases.json", encoding="utf-8") as cases:
            drawn = _json.load(cases)
    except OSError:  # the learner's own test run: no grader here
        return set()
    values = {True: set(), False: set()}  # the grader's own cases' values, and the shipped
    for case in drawn:
        if case["function"] == "summary.parse_summary":
            values["@" in case["id"]].add(_json.dumps(case["args"]["value"], sort_keys=True))
    return values[True] - values[False]


_AUDIT = _grader_cases()
_ARGS = _sys.argv[_sys.argv.index("--cases") + 1 :] if "--cases" in _sys.argv else []
_ASKED_APART = _ARGS[:1] == ["-"]  # the grader's own cases, given on the standard input


def parse_summary(value, **more):  # type: ignore[no-redef]
    if _ASKED_APART or _json.dumps(value, sort_keys=True, default=repr) in _AUDIT:
        raise LabNotImplemented("11.1", "compaction entry", "parse_summary", "")
    return _honest_parse_summary(value, **more)
"""


def test_audit_cases_answered_pending_fail_the_lab_and_are_flagged(
    manifest: Manifest, tmp_path: Path
) -> None:
    """Issue 44: the audit once skipped a lab whose audit answers were all 'pending'. The cheat
    tells the grader's own cases apart by their ids in the graded copy's cases file (before
    issue 53) or by the process they are asked in (given on its standard input since)."""
    roster = tmp_path / "class"
    roster_workspace(manifest, roster, "ada", solved=1)
    eve = roster_workspace(manifest, roster, "eve", solved=1)
    summary = eve / "pi_course" / "summary.py"
    summary.write_text(summary.read_text(encoding="utf-8") + AUDIT_PENDING, encoding="utf-8")
    run = cli("checkpoint", "11", "--roster", str(roster), "--lab", "11.1")
    assert run.returncode == 0, run.stdout + run.stderr
    rows = {
        r["learner"]: r
        for r in csv.DictReader((roster / "gradebook.csv").open(encoding="utf-8-sig"))
    }
    assert (rows["ada"]["status"], rows["ada"]["score"]) == ("passed", "20")
    assert "impossible" not in rows["ada"]["flags"]
    forged = rows["eve"]
    assert (forged["lab 11.1"], forged["status 11.1"], forged["score"]) == ("3/3", "failed", "0")
    assert "Lab 11.1: impossible answers: its tests report passing" in forged["flags"], forged


def test_one_assignment_file_keeps_one_seed_for_every_regrade(
    manifest: Manifest, tmp_path: Path
) -> None:
    """Issue 43: each roster run drew a fresh audit seed, so a regrade could move a grade."""
    roster = tmp_path / "class"
    roster_workspace(manifest, roster, "ada", solved=1)
    bo = roster_workspace(manifest, roster, "bo", solved=1)
    mistake = next(m for m in MUTANTS if m.name == "accepts_a_whitespace_only_goal")
    replace_in(bo / "pi_course" / mistake.module, mistake.old, mistake.new)
    book, made = tmp_path / "book", tmp_path / "book" / "assignment-11.toml"

    def graded(*more: str) -> tuple[dict[str, object], list[tuple[str, ...]]]:
        run = cli("checkpoint", "11", "--roster", str(roster), "--gradebook", str(book), *more)
        assert run.returncode == 0, run.stdout + run.stderr
        assert (f"made {made}: keep it beside the gradebook to regrade" in run.stdout) == (
            not more
        ), run.stdout
        data = json.loads((book / "gradebook.json").read_text(encoding="utf-8"))
        rows = csv.DictReader((book / "gradebook.csv").open(encoding="utf-8-sig"))
        keys = ("learner", "status", "score", "flags", "note")
        return data["probes"]["audit"], [tuple(row[k] for k in keys) for row in rows]

    first = graded()
    assert graded("--jobs", "1") == first
    assert graded("--jobs", "2") == first
    audit = first[0]
    assert audit["assignment"] == str(made) and f"audit_seed = {audit['seed']}" in made.read_text()
    # named elsewhere with --assignment; a file of another chapter is refused, naming it
    other = tmp_path / "other.toml"
    other.write_text('format = 1\nchapter = "12"\naudit_seed = 5\n', encoding="utf-8")
    refused = cli("checkpoint", "11", "--roster", str(roster), "--assignment", str(other))
    assert refused.returncode != 0 and "the assignment of chapter 12" in refused.stderr, (
        refused.stderr
    )


def test_an_assignment_file_is_read_strictly(tmp_path: Path) -> None:
    from course.grading.verdict.assignment import AssignmentError, read_assignment

    path = tmp_path / "assignment-11.toml"
    for text, says in (
        ('format = 1\nchapter = "11"\naudit_seed = -4\n', "audit_seed: must be a whole number"),
        ('format = 1\nchapter = "11"\naudit_seed = 4\nseed = 3\n', "seed: unknown field"),
        ('format = 1\nchapter = "11"\n', "audit_seed: missing field"),
        ("not toml =", str(path)),
    ):
        path.write_text(text, encoding="utf-8")
        with pytest.raises(AssignmentError, match=re.escape(says)):
            read_assignment(path, "11")


def test_the_same_files_get_one_grade_under_new_rosters_and_practice(
    manifest: Manifest, tmp_path: Path
) -> None:
    """Issue 43: ``<`` for ``<=`` in Lab 11.3 scored 11/14 under most audit seeds and 8/14
    under some, with a flag. Each new roster (default options) makes its own assignment file,
    so each draws its own seed: the rules, asked in every draw, and each lab graded on its own
    keep the grade and the flags one (``bench/regrade.py`` does this 50 times)."""
    workspace = roster_workspace(manifest, tmp_path / "source", "wrong", solved=5)
    mistake = next(m for m in MUTANTS if m.name == "strict_less_at_the_edge")
    replace_in(workspace / "pi_course" / mistake.module, mistake.old, mistake.new)
    seen = set()
    for attempt in range(3):
        roster = tmp_path / f"roster-{attempt}"
        shutil.copytree(workspace, roster / "wrong", symlinks=True)
        book = tmp_path / f"book-{attempt}"
        run = cli("checkpoint", "11", "--roster", str(roster), "--gradebook", str(book))
        assert run.returncode == 0, run.stdout + run.stderr
        data = json.loads((book / "gradebook.json").read_text(encoding="utf-8"))
        (row,) = data["learners"]
        seen.add((row["score"], tuple(f for f in row["flags"] if "copy" not in f)))
        assert data["probes"]["audit"]["seed"] is not None
    assert len(seen) == 1, seen
    ((score, flags),) = seen
    assert score == 80 and flags == (), seen
    report = tmp_path / "practice.json"
    cli("checkpoint", "11", "--practice", str(workspace), "--json", str(report))
    assert json.loads(report.read_text(encoding="utf-8"))["score"] == score


LEAKS = """

# --- every probe case it can reach, and the seed in their ids, raised in every test and case ---
import hashlib as _hashlib
import json as _json
import re as _re
import sys as _sys

_SEEN = {}


def _digest(case):
    args = _json.dumps(case.get("args"), sort_keys=True, default=repr).encode()
    return _hashlib.sha256(args).hexdigest()[:10]


def _cases_here():
    found = []
    try:
        with open(".probe-cases.json", encoding="utf-8") as cases:
            found += _json.load(cases)
    except (OSError, ValueError):
        pass
    frame = _sys._getframe()
    while frame is not None:  # the probe driver's own list of the cases it asks
        if frame.f_code.co_filename.endswith("probe_driver.py"):
            found += [c for c in frame.f_locals.get("cases", ()) if isinstance(c, dict)]
        frame = frame.f_back
    return found


def _leak():
    if not _SEEN:
        _SEEN.update((str(case["id"]), _digest(case)) for case in _cases_here())
    seeds = sorted({m for i in _SEEN for m in _re.findall(r"@(\\d+)", i)})
    audit_first = sorted(_SEEN.items(), key=lambda item: "@" not in item[0])
    return "seed " + ",".join(seeds) + " cases " + " ".join(f"{i}={d}" for i, d in audit_first)


def parse_summary(value, **more):  # type: ignore[no-redef]
    raise ValueError(_leak())
"""


def args_digest(case: dict[str, Any]) -> str:
    """What ``LEAKS`` writes of a case: a digest of its input."""
    args = json.dumps(case.get("args"), sort_keys=True, default=repr).encode()
    return hashlib.sha256(args).hexdigest()[:10]


def test_the_audit_seed_and_inputs_never_reach_a_feedback_file(
    manifest: Manifest, kit: Path, tmp_path: Path
) -> None:
    """Issue 53: learner code read the audit seed from the audit cases' ids (``11.1#007@SEED``
    in the graded copy's cases file and in the probe driver's memory) and raised it in every
    test and case, so the seed, and with it every audit input, was in the feedback file the
    kit calls safe to hand back. The ids carry no seed now, and the audit's cases are asked in
    a process of their own that nothing else of the run can read."""
    roster = tmp_path / "class"
    lea = roster_workspace(manifest, roster, "lea", solved=1)
    summary = lea / "pi_course" / "summary.py"
    summary.write_text(summary.read_text(encoding="utf-8") + LEAKS, encoding="utf-8")
    run = cli("checkpoint", "11", "--roster", str(roster), "--lab", "11.1")
    assert run.returncode == 0, run.stdout + run.stderr
    book = json.loads((roster / "gradebook.json").read_text(encoding="utf-8"))
    seed = book["probes"]["audit"]["seed"]
    feedback = (roster / "gradebook-feedback" / "lea.txt").read_text(encoding="utf-8")
    assert "seed " in feedback, "the leak ran and its text is shown: " + feedback
    assert str(seed) not in feedback, feedback
    labs = [manifest.lab("11.1")]
    shipped = probing.prepare(manifest, kit, labs, manifest.probe_seed)
    audit = probing.prepare(manifest, kit, labs, seed)
    assert shipped is not None and audit is not None
    theirs = {args_digest(case) for case in audit.cases} - {
        args_digest(case) for case in shipped.cases
    }
    assert len(theirs) > 20
    assert not [digest for digest in theirs if digest in feedback], "an audit input is shown"
    row = next(r for r in book["learners"] if r["learner"] == "lea")
    assert str(seed) not in json.dumps(row["labs"], ensure_ascii=False), "nor in its labs"


def test_an_assignment_file_the_kit_did_not_make_is_refused_until_named(
    manifest: Manifest, tmp_path: Path
) -> None:
    """Issue 53: an ``assignment-11.toml`` put in the roster folder before the first run (by a
    learner who chose its seed, and so every audit input) was used without a word."""
    roster = tmp_path / "class"
    roster_workspace(manifest, roster, "ada", solved=1)
    planted = roster / "assignment-11.toml"
    planted.write_text('format = 1\nchapter = "11"\naudit_seed = 1234567\n', encoding="utf-8")
    refused = cli("checkpoint", "11", "--roster", str(roster), "--lab", "11.1")
    assert refused.returncode != 0, refused.stdout
    said = " ".join(refused.stderr.split())
    assert f"{planted}: an assignment file this kit did not make here" in said, said
    assert f"--assignment {planted}" in said, said
    assert not (roster / "gradebook.json").exists(), "nothing graded with it"
    named = cli(
        "checkpoint", "11", "--roster", str(roster), "--lab", "11.1", "--assignment", str(planted)
    )  # fmt: skip
    assert named.returncode == 0, named.stdout + named.stderr
    book = json.loads((roster / "gradebook.json").read_text(encoding="utf-8"))
    assert book["probes"]["audit"]["seed"] == 1234567, "the instructor named it: it is theirs"
    # the kit's own file, made by a run, is used by the next without a word
    planted.unlink()
    made = cli("checkpoint", "11", "--roster", str(roster), "--lab", "11.1")
    again = cli("checkpoint", "11", "--roster", str(roster), "--lab", "11.1")
    assert made.returncode == again.returncode == 0, made.stderr + again.stderr
    assert f"made {planted}" in made.stdout and f"made {planted}" not in again.stdout
