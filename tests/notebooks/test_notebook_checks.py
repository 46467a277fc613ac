"""check() in a notebook: a fresh checkpoint process, rendered without timings or paths."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from course.display.checkreport import parse_report, report_html, report_text
from course.display.notebook import check, check_command, check_environment

LAB_2 = [
    "test_lab_11_2_groups_the_chapter_path_into_three_interactions",
    "test_lab_11_2_pairs_results_by_call_id_not_position",
    "test_lab_11_2_rejects_broken_tool_facts",
]


def fake_report(statuses: list[str], messages: list[str] | None = None) -> dict[str, Any]:
    messages = messages or [""] * len(statuses)
    tests = [
        {"lab": "11.2", "name": name, "status": status, "message": message, "duration": 1.2345}
        for name, status, message in zip(LAB_2, statuses, messages, strict=True)
    ]
    passed = statuses.count("passed")
    return {
        "chapter": "11",
        "target": "the reference (course) in /somewhere/on/disk",
        "labs": [
            {
                "id": "11.2",
                "title": "interaction groups",
                "passed": passed,
                "total": 3,
                "status": "passed" if passed == 3 else statuses[-1],
            }
        ],
        "tests": tests,
        "passed": passed,
        "total": 3,
        "problems": [],
    }


class FakeCheckpoint:
    """Writes a given report where the command asks for it, and records the command."""

    def __init__(self, report: dict[str, Any] | None, returncode: int = 1) -> None:
        self.report = report
        self.returncode = returncode
        self.commands: list[list[str]] = []
        self.folders: list[Path] = []
        self.environments: list[dict[str, str]] = []

    def __call__(
        self, command: list[str], cwd: Path, env: dict[str, str], timeout: float
    ) -> subprocess.CompletedProcess[str]:
        self.commands.append(command)
        self.folders.append(cwd)
        self.environments.append(env)
        if self.report is not None:
            Path(command[command.index("--json") + 1]).write_text(json.dumps(self.report))
        return subprocess.CompletedProcess(command, self.returncode, "", "boom: no such lab\n")


def test_a_lab_report_lists_each_test_with_its_status(tmp_path: Path) -> None:
    runner = FakeCheckpoint(
        fake_report(
            ["passed", "pending", "failed"],
            [
                "",
                "Lab 11.2 interaction groups not implemented yet (x): y",
                "AssertionError: groups must hold copies\nassert 1 == 2",
            ],
        )
    )
    report = check("11.2", start=tmp_path, runner=runner)
    text = report.text
    assert text.splitlines()[0] == (
        "✗ Lab 11.2 · interaction groups: 1/3 passed (1 pending, 1 failed)"
    )
    assert f"✓ passed  {LAB_2[0]}" in text
    assert f"… pending {LAB_2[1]} — Lab 11.2 interaction groups not implemented yet" in text
    assert f"✗ failed  {LAB_2[2]} — AssertionError: groups must hold copies" in text
    assert "1.2345" not in text and "1.2345" not in report.html, "no durations"
    assert "/somewhere" not in text and "/somewhere" not in report.html, "no paths"
    assert "\n            assert 1 == 2" in text, "a message's next lines, indented under it"


def test_the_command_runs_the_checkpoint_for_one_lab(tmp_path: Path) -> None:
    runner = FakeCheckpoint(fake_report(["passed"] * 3))
    check("11.2", start=tmp_path, runner=runner)
    command = runner.commands[0]
    assert command[1:4] == ["-m", "course.harness.checkpoint", "11"]
    assert command[command.index("--lab") + 1] == "11.2"
    assert "--json" in command and "--practice" not in command


def test_a_chapter_check_runs_every_lab(tmp_path: Path) -> None:
    runner = FakeCheckpoint(fake_report(["passed"] * 3))
    check("11", start=tmp_path, runner=runner)
    assert "--lab" not in runner.commands[0]


def test_the_kernels_colour_switches_do_not_reach_the_check(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("FORCE_COLOR", "1")
    monkeypatch.setenv("PY_COLORS", "1")
    runner = FakeCheckpoint(fake_report(["passed"] * 3))
    check("11.2", start=tmp_path, runner=runner)
    env = runner.environments[0]
    assert "FORCE_COLOR" not in env and "PY_COLORS" not in env and env["NO_COLOR"] == "1"
    assert "FORCE_COLOR" not in check_environment()


def test_inside_a_workspace_the_check_names_it_and_hides_its_path(tmp_path: Path) -> None:
    workspace = tmp_path / "practice-11"
    (workspace / "notebooks").mkdir(parents=True)
    (workspace / ".course-workspace.toml").write_text(
        'chapter = "11"\npackage = "pi_course"\nparent_fingerprint = "x"\n'
    )
    report = fake_report(
        ["failed", "passed", "passed"],
        [f"AssertionError: {workspace}/pi_course/context.py broke", "", ""],
    )
    runner = FakeCheckpoint(report)
    shown = check("11.2", start=workspace / "notebooks", runner=runner)
    command = runner.commands[0]
    assert command[command.index("--practice") + 1] == str(workspace.resolve())
    assert runner.folders[0] == workspace.resolve()
    assert "<workspace>/pi_course/context.py broke" in shown.text
    assert str(workspace) not in shown.text


def test_identical_pending_messages_are_shown_once(tmp_path: Path) -> None:
    message = "Lab 11.2 interaction groups not implemented yet (group_interactions): hint"
    runner = FakeCheckpoint(fake_report(["pending"] * 3, [message] * 3))
    text = check("11.2", start=tmp_path, runner=runner).text
    assert text.count("not implemented yet") == 1
    assert text.splitlines()[0] == "… Lab 11.2 · interaction groups: 0/3 passed (3 pending)"


def test_a_missing_report_or_a_timeout_is_a_message(tmp_path: Path) -> None:
    silent = check("11.2", start=tmp_path, runner=FakeCheckpoint(None))
    assert silent.problem == "the check wrote no report (boom: no such lab)"
    assert "no result" in silent.text

    def too_slow(command: list[str], cwd: Path, env: dict[str, str], timeout: float) -> Any:
        raise subprocess.TimeoutExpired(command, timeout)

    late = check("11.2", start=tmp_path, runner=too_slow, timeout=7)
    assert "did not finish within 7 seconds" in late.text


@pytest.mark.parametrize(
    "broken",
    [
        [],
        {"labs": "x"},
        {"tests": [{"name": "t"}]},
        {"labs": [{"id": "11.1", "title": "t", "passed": -1, "total": 3, "status": "passed"}]},
    ],
)
def test_a_malformed_report_is_refused(broken: Any) -> None:
    with pytest.raises(ValueError):
        parse_report(broken)


def test_a_chapter_report_summarises_labs_and_lists_only_failures() -> None:
    data = fake_report(
        ["passed", "pending", "error"],
        ["", "Lab 11.2 … not implemented yet", "RuntimeError: crashed"],
    )
    report = parse_report(data)
    text = report_text(report)
    assert text.splitlines()[1] == "  Lab 11.2 interaction groups: 1/3 error"
    assert LAB_2[0] not in text and LAB_2[1] not in text
    assert f"✗ error   {LAB_2[2]} — RuntimeError: crashed" in text
    assert "Lab 11.2" in report_html(report)


def test_the_real_checkpoint_grades_the_reference() -> None:
    report = check("11.2", start=Path(__file__).parent)
    assert not report.problem
    assert [(t.name, t.status) for t in report.tests] == [(n, "passed") for n in LAB_2]
    assert report.text.splitlines()[0] == "✓ Lab 11.2 · interaction groups: 3/3 passed"


def test_the_real_checkpoint_reports_a_fresh_workspace_as_pending(
    fresh_workspace: Path,
) -> None:
    report = check("11.3", start=fresh_workspace / "notebooks")
    assert [t.status for t in report.tests] == ["pending"] * 3
    assert "Lab 11.3 budget projection not implemented yet" in report.text
    assert str(fresh_workspace) not in report.text


def test_the_command_for_a_whole_chapter_has_no_lab(tmp_path: Path) -> None:
    command = check_command("11", tmp_path / "r.json", None)
    assert "--lab" not in command and command[3] == "11"
