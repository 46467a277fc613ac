"""A zh workspace speaks Chinese at every door whatever the shell's locale says.

Each test runs a door the way a learner would, in a fresh ``practice 11 --lang zh`` workspace,
under ``LANG=C.UTF-8`` with no other language variable set: the workspace's marker, not the
shell, chooses the edition (docs/editions.md).
"""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest
from harness_support import cli

from course.harness.manifest import Manifest
from course.harness.workspace import create_workspace
from course.locale.english import english_words

C_LOCALE = {"LANG": "C.UTF-8", "LC_ALL": "", "LC_MESSAGES": "", "LANGUAGE": "", "COURSE_LANG": ""}
"""The environment's language variables: an English shell, and no kit variable."""
COMMAND = re.compile(r"`((?:python3|checkpoint|practice) [^`]+)`")


@pytest.fixture
def zh_workspace(manifest: Manifest, kit: Path, tmp_path: Path) -> Path:
    target = tmp_path / "zh"
    create_workspace(manifest, kit, target, "zh")
    return target


def run_in(workspace: Path, command: str) -> subprocess.CompletedProcess[str]:
    """``command`` as LEARNING.md prints it, run in ``workspace`` with this interpreter."""
    words = shlex.split(command)
    tool, args = words[0], words[1:]
    if tool == "python3":
        return subprocess.run(
            [sys.executable, *args],
            cwd=workspace,
            env=_environment(),
            capture_output=True,
            text=True,
            timeout=300,
            check=False,
        )
    return cli(tool, *args, cwd=workspace, env=C_LOCALE)


def _environment() -> dict[str, str]:
    environment = {k: v for k, v in os.environ.items() if k not in C_LOCALE}
    environment["LANG"] = C_LOCALE["LANG"]
    return environment


def learning_commands(workspace: Path) -> list[str]:
    return COMMAND.findall((workspace / "LEARNING.md").read_text("utf-8"))


def test_plain_pytest_as_learning_md_prints_it_speaks_the_workspaces_edition(
    zh_workspace: Path,
) -> None:
    plain = next(c for c in learning_commands(zh_workspace) if c.startswith("python3 -m pytest"))
    run = run_in(zh_workspace, plain + " -q")
    assert run.returncode == 1, run.stdout + run.stderr
    assert "Lab 11.1 compaction entry 尚未实现" in run.stdout, run.stdout
    assert "not implemented yet" not in run.stdout, run.stdout


def test_a_given_modules_error_speaks_the_workspaces_edition(zh_workspace: Path) -> None:
    mine = zh_workspace / "tests" / "chapter11" / "test_mine.py"
    mine.write_text(
        "from pi_course.session import parse_session_entry\n\n\n"
        "def test_refused() -> None:\n"
        "    try:\n"
        "        parse_session_entry({'type': 'message', 'id': 'm1'})\n"
        "    except ValueError as error:\n"
        "        print('REFUSED', error)\n",
        encoding="utf-8",
    )
    run = run_in(zh_workspace, "python3 -m pytest tests/chapter11/test_mine.py -q -s")
    refused = [line for line in run.stdout.splitlines() if line.startswith("REFUSED")]
    assert refused, run.stdout + run.stderr
    said = refused[0].removeprefix("REFUSED").replace("m1", " ")
    assert re.search(r"[\u4e00-\u9fff]", said) and english_words(said) == [], refused[0]


def test_checkpoint_as_learning_md_prints_it_speaks_the_workspaces_edition(
    zh_workspace: Path,
) -> None:
    check = next(c for c in learning_commands(zh_workspace) if "--lab 11.1" in c)
    run = run_in(zh_workspace, check)
    assert "正在检查：练习目录" in run.stdout, run.stdout + run.stderr
    assert "Checking" not in run.stdout and "not implemented yet" not in run.stdout


def test_argparse_speaks_the_workspaces_edition(zh_workspace: Path) -> None:
    helped = run_in(zh_workspace, "checkpoint 11 --help")
    assert helped.stdout.startswith("用法：checkpoint"), helped.stdout
    assert "选项：" in helped.stdout and "显示这份帮助并退出" in helped.stdout, helped.stdout
    for english in ("usage:", "options:", "show this help message and exit"):
        assert english not in helped.stdout
    wrong = run_in(zh_workspace, "checkpoint 11 --no-such-option")
    assert wrong.returncode == 2
    assert wrong.stderr.startswith("用法：checkpoint"), wrong.stderr
    assert "checkpoint：错误：无法识别的参数：--no-such-option" in wrong.stderr, wrong.stderr


def test_practice_speaks_the_edition_it_is_asked_for(tmp_path: Path) -> None:
    made = cli("practice", "11", str(tmp_path / "ws"), "--lang", "zh", cwd=tmp_path, env=C_LOCALE)
    assert made.returncode == 0, made.stderr
    assert "练习目录" in made.stdout and "Created" not in made.stdout, made.stdout
    helped = cli("practice", "--help", "--lang", "zh", cwd=tmp_path, env=C_LOCALE)
    assert helped.stdout.startswith("用法：practice"), helped.stdout


def test_every_practice_command_learning_md_prints_makes_the_same_edition(
    zh_workspace: Path, tmp_path: Path
) -> None:
    again = [c for c in learning_commands(zh_workspace) if c.startswith("practice")]
    assert again, "LEARNING.md says how to start over"
    for command in again:
        assert shlex.split(command)[-2:] == ["--lang", "zh"], command
    made = run_in(tmp_path, again[0] + f" {tmp_path / 'again'}")
    assert made.returncode == 0, made.stderr
    marker = (tmp_path / "again" / ".course-workspace.toml").read_text("utf-8")
    assert 'edition = "zh"' in marker


@pytest.mark.parametrize(
    ("args", "english"),
    [
        (["12"], "no curriculum for chapter"),
        (["11", "--lab", "11.9"], "has no lab"),
        (["11", "--replay", "foo"], "is not a probe case id"),
    ],
)
def test_an_unknown_chapter_or_lab_is_refused_in_the_workspaces_edition(
    zh_workspace: Path, args: list[str], english: str
) -> None:
    run = run_in(zh_workspace, shlex.join(["checkpoint", *args]))
    assert run.returncode == 2, run.stdout + run.stderr
    said = run.stderr.strip().removeprefix("checkpoint：")
    assert english not in run.stderr and re.search(r"[\u4e00-\u9fff]", said), run.stderr
    assert english_words(said.replace("11.opt", " ").replace("“foo”", " ")) == [], run.stderr
    assert said in USAGE_ERRORS, "the value as typed, no Python quotes; the ids as a list"


USAGE_ERRORS = (
    "没有第 12 章的课程数据（现有：第 11 章）",
    "第 11 章没有 Lab 11.9（现有：11.1、11.2、11.3、11.4、11.5、11.opt）",
    "“foo”不是探针用例 id：格式为 Lab 编号#用例编号，如 11.1#001",
)


def test_every_checkpoint_command_learning_md_prints_speaks_the_workspaces_edition(
    zh_workspace: Path,
) -> None:
    """Each ``checkpoint`` line of LEARNING.md but the watch (which stays open; the watch's
    edition is the same choice, tested in test_zh_doors.py)."""
    commands = sorted(
        {c for c in learning_commands(zh_workspace) if c.startswith("checkpoint")}
        - {c for c in learning_commands(zh_workspace) if "--watch" in c or "--lab" in c}
    )
    assert any("--review" in c for c in commands) and any("--replay" in c for c in commands)
    for command in commands:
        run = run_in(zh_workspace, command)
        said = run.stdout + run.stderr
        assert re.search(r"[\u4e00-\u9fff]", said), f"{command}:\n{said}"
        for english in ("Checking", "Reviewing", "not implemented yet", "usage:", "Replaying"):
            assert english not in said, f"{command}:\n{said}"
