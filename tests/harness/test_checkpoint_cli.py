"""``checkpoint CHAPTER``: the card, lab lines, evidence, exit codes, --lab and --json."""

from __future__ import annotations

import json
import shlex
import subprocess
from pathlib import Path

from harness_support import MakeWorkspace, cli, solved_workspace

from course.harness.learning import lab_command
from course.harness.manifest import Manifest
from course.sandboxed.commands import shell_commands


def lab_line(manifest: Manifest, lab_id: str) -> str:
    return f"Lab {lab_id:<5} {manifest.lab(lab_id).title}"


def test_checkpoint_prints_the_card_labs_and_evidence_for_the_reference(
    manifest: Manifest,
) -> None:
    run = cli("checkpoint", manifest.chapter)
    assert run.returncode == 0, run.stdout + run.stderr
    out = run.stdout
    assert out.startswith(manifest.card.title)
    for label in ("mode", "parent", "target", "first red light", "evidence"):
        assert f"  {label} " in out
    for lab in manifest.labs:
        line = next(x for x in out.splitlines() if x.startswith(lab_line(manifest, lab.id)))
        assert f"{lab.tests}/{lab.tests}" in line.split() and "passed" in line.split()
        assert ("optional" in line) == lab.optional, line
    lines = out.splitlines()
    evidence = " → ".join(f"{lab.tests}/{lab.tests}" for lab in manifest.required_labs)
    assert evidence == "3/3 → 3/3 → 3/3 → 2/2 → 3/3"
    at = lines.index(evidence)
    assert lines[at + 1 : at + 3] == ["14/14", "grade 100/100"]
    assert out.index(manifest.card.title) < out.index("Lab 11.1") < out.index(evidence)
    after = "\n".join(lines[at + 2 :])
    assert "All 14 focused tests pass. Next: the chapter's closing review" in after
    assert after.rstrip().endswith("checkpoint 11 --review")


def test_one_lab_with_json_results(manifest: Manifest, tmp_path: Path) -> None:
    report = tmp_path / "out" / "lab.json"
    run = cli("checkpoint", manifest.chapter, "--lab", "11.3", "--json", str(report), "--no-card")
    assert run.returncode == 0, run.stdout + run.stderr
    assert manifest.card.title not in run.stdout
    data = json.loads(report.read_text(encoding="utf-8"))
    assert {"chapter", "labs", "tests", "passed", "total"} <= set(data)
    assert data["chapter"] == manifest.chapter
    cases = data["labs"][0]["probes"]["cases"]
    assert cases > 0
    assert data["labs"] == [
        {
            "id": "11.3",
            "title": "budget projection",
            "passed": 3,
            "total": 3,
            "agreed": cases,
            "cases": cases,
            "earned": 3,
            "points": 20,
            "score": 20,
            "status": "passed",
            "optional": False,
            "probes": {
                "cases": cases,
                "agreed": cases,
                "status": "passed",
                "failures": [],
                "failing": [],
            },
        }
    ]
    assert [t["lab"] for t in data["tests"]] == ["11.3"] * 3
    for test in data["tests"]:
        assert set(test) == {"lab", "name", "nodeid", "status", "message", "duration"}
        assert test["name"].startswith("test_lab_11_3_") and test["status"] == "passed"
    assert (data["passed"], data["total"], data["earned"]) == (3, 3, 3)
    assert (data["score"], data["max_score"]) == (20, 20)
    assert (data["agreed"], data["cases"]) == (cases, cases)


def test_a_fresh_workspace_fails_with_every_lab_pending(
    manifest: Manifest, make_workspace: MakeWorkspace, tmp_path: Path
) -> None:
    workspace = make_workspace("learner")
    report = tmp_path / "fresh.json"
    run = cli("checkpoint", manifest.chapter, "--practice", str(workspace), "--json", str(report))
    assert run.returncode == 1
    out = run.stdout
    assert out.splitlines()[0] == manifest.card.title
    for lab in manifest.labs:
        line = next(x for x in out.splitlines() if x.startswith(lab_line(manifest, lab.id)))
        assert f"0/{lab.tests}" in line.split() and "pending" in line.split()
        detail = " ".join(out.split(line, 1)[1].splitlines()[1:3])  # wrapped at 100 columns
        assert "not implemented yet" in " ".join(detail.split())
    assert "pending  3 tests stop at: Lab 11.1 compaction entry not implemented yet" in out
    assert "pending  3 tests need Lab 11.3 first and stop at: Lab 11.3 budget" in out, "11.5"
    rows = [row for row in out.splitlines() if row.startswith("Lab 11.")]
    assert len({row.index(" 0/") for row in rows}) == 1, "11.opt's counts line up too"
    probes = out.split("\nprobes", 1)[1].split("\n\n", 1)[0].splitlines()
    assert probes[-1] == " " * 9 + "agree with the reference (seed 11)", "wrapped between parts"
    assert max(len("probes" + line) for line in probes) <= 100, probes
    assert "0/3 → 0/3 → 0/3 → 0/2 → 0/3\n0/14\ngrade 0/100\n" in out
    first = manifest.labs[0]
    assert f"Next: Lab {first.id} {first.title}" in out
    assert f"checkpoint 11 --practice {shlex.quote(str(workspace))} --lab {first.id}" in out
    assert "Traceback" not in out
    data = json.loads(report.read_text(encoding="utf-8"))
    assert {t["status"] for t in data["tests"]} == {"pending"}
    assert (data["passed"], data["total"], data["score"], data["max_score"]) == (0, 14, 0, 100)


def test_inside_a_workspace_the_workspace_is_the_default(
    manifest: Manifest, make_workspace: MakeWorkspace
) -> None:
    workspace = make_workspace("here")
    run = cli("checkpoint", manifest.chapter, "--lab", "11.2", "--no-card", cwd=workspace / "tests")
    assert run.returncode == 1
    assert f"Checking workspace {workspace}" in run.stdout
    rerun = lab_command(manifest, "11.2", commands=shell_commands())
    assert "0/3" in run.stdout and f"re-run just it   {rerun}" in run.stdout


def test_the_cards_focused_run_works_as_printed_without_the_kit_on_path(
    manifest: Manifest, kit: Path, make_workspace: MakeWorkspace
) -> None:
    """A fresh machine: the kit's .venv/bin is not on PATH, so ``python3`` is not the kit's."""
    workspace = solved_workspace(manifest, kit, make_workspace, "plain-run")
    bare = {"PATH": "/usr/bin:/bin"}
    card = cli("checkpoint", manifest.chapter, "--card", "--lab", "11.1", cwd=workspace, env=bare)
    printed = [line for line in card.stdout.splitlines() if line.startswith("  focused run ")]
    assert len(printed) == 1, card.stdout
    command = printed[0].removeprefix("  focused run ").strip()
    run = subprocess.run(
        ["bash", "-c", command],
        cwd=workspace,
        env=bare,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert run.returncode == 0, f"{command}\n{run.stdout}{run.stderr}"
    lab = manifest.labs[0]
    cases = sum(
        case["lab"] == lab.id
        for case in json.loads((kit / "starters" / "11-probes.json").read_text(encoding="utf-8"))[
            "cases"
        ]
    )
    # the lab's focused tests, then its probe cases (counted in no lab), all passing
    assert f" {lab.tests + cases} passed" in run.stdout, f"{command}\n{run.stdout}"


def test_edited_focused_tests_are_noted_and_graded_from_the_kits_copy(
    manifest: Manifest, make_workspace: MakeWorkspace, tmp_path: Path
) -> None:
    workspace = make_workspace("trimmed")
    tests = workspace / manifest.focused_tests
    text = tests.read_text(encoding="utf-8")
    assert text.count('@pytest.mark.lab("11.4")') == manifest.lab("11.4").tests
    tests.write_text(text.replace('@pytest.mark.lab("11.4")', '@pytest.mark.lab("11.9")'))
    report = tmp_path / "trimmed.json"
    run = cli(
        "checkpoint", "11", "--practice", str(workspace), "--lab", "11.4", "--json", str(report)
    )
    assert run.returncode == 1
    data = json.loads(report.read_text(encoding="utf-8"))
    assert data["labs"][0]["status"] == "pending", "the kit's copy still holds Lab 11.4's tests"
    assert [t["status"] for t in data["tests"]] == ["pending"] * manifest.lab("11.4").tests
    assert any("was edited in the workspace" in note for note in data["notes"])
    assert "note: tests/chapter11/test_11_context_compaction.py was edited" in run.stdout


def test_bad_requests_exit_2_with_a_clear_message(tmp_path: Path) -> None:
    unknown_lab = cli("checkpoint", "11", "--lab", "11.9")
    assert unknown_lab.returncode == 2
    assert "no lab 11.9 (labs: 11.1, 11.2, 11.3, 11.4, 11.5, 11.opt)" in unknown_lab.stderr
    unknown_chapter = cli("checkpoint", "99")
    assert unknown_chapter.returncode == 2 and "chapters: 11" in unknown_chapter.stderr
    not_a_workspace = cli("checkpoint", "11", "--practice", str(tmp_path))
    assert not_a_workspace.returncode == 2
    assert "not a practice workspace" in not_a_workspace.stderr


def test_a_broken_test_setup_is_reported_not_passed(
    manifest: Manifest, make_workspace: MakeWorkspace, tmp_path: Path
) -> None:
    workspace = make_workspace("broken-setup")
    with (workspace / "pi_course" / "summary.py").open("a", encoding="utf-8") as f:
        f.write("import a_module_that_is_not_there\n")
    with (workspace / "tests" / "chapter11" / "conftest.py").open("a", encoding="utf-8") as f:
        f.write("import pytest_that_skips_everything\n")
    report = tmp_path / "broken.json"
    run = cli("checkpoint", "11", "--practice", str(workspace), "--json", str(report))
    assert run.returncode == 1
    data = json.loads(report.read_text(encoding="utf-8"))
    assert {lab["status"] for lab in data["labs"]} == {"error"} and data["passed"] == 0
    assert all("a_module_that_is_not_there" in test["message"] for test in data["tests"])
    assert any("conftest.py was edited" in note for note in data["notes"])
