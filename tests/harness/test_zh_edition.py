"""A Chinese learner's workspace, door by door: no English sentence outside code names and ids.

Each state a learner meets (fresh, one lab done, a failure, a timeout, 14/14, the review) runs
``checkpoint 11`` as a learner types it inside a workspace made by ``practice 11 --lang zh``.
The English words a Chinese reader would meet are counted with ``course.locale.english``: Latin
words that are not in backticks, not identifiers, ids, paths, options or acronyms, and not on
the glossary's short ``[english]`` list of words the chapter itself keeps in English. What the
learner's own code prints is theirs, not the kit's: the code lines a stack dump quotes are left
out of the count (they are marked by their ``file:line`` frame above them), and so are the ids
the chapter's data holds (reasons such as ``trimmed``, tool names such as ``read``, hyphenated
entry ids such as ``r-test``) where the review shows what the learner's code returned, and the
input lines of a probe case a failure names (its arguments as the shipped probe data holds them).
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any, get_args

import pytest
from harness_support import CHAPTER, HANGS, cli, replace_in, sabotage
from solutions import solve_lab

from course.context import GroupStatus, Reason
from course.fixtures import chapter_path
from course.harness.kit import kit_root
from course.harness.manifest import Manifest
from course.locale import set_edition
from course.locale.english import english_words
from course.sandboxed.probecases import shown_input

FRAME = re.compile(r"^(\s*)\S+\.py:\d+\W")


def tool_names(path: list[Any]) -> set[str]:
    """The tools the chapter's path calls (``read``, ``bash``…), as its messages name them."""
    names = set()
    for entry in path:
        message = getattr(entry, "message", {})
        content = message.get("content") if isinstance(message, dict) else None
        for part in content if isinstance(content, list) else []:
            if isinstance(part, dict) and isinstance(part.get("name"), str):
                names.add(part["name"])
        if isinstance(message, dict) and isinstance(message.get("toolName"), str):
            names.add(message["toolName"])
    return names


DATA = {*get_args(Reason), *get_args(GroupStatus), *tool_names(chapter_path())}
"""Ids the learner's code returns and the review shows as data: reasons, statuses, tools."""
COMMAND_WORDS = {"zh", "starters"}
"""Words of commands a terminal shows without Markdown's backticks: ``practice 11 --lang zh``
(the card's line), ``course-kit starters`` (the scaffold's)."""


def reader_text(output: str) -> str:
    """``output`` without the learner's own code lines quoted under a stack frame (each is
    indented deeper than the ``file.py:line`` frame above it)."""
    kept, frame_indent = [], None
    for line in output.splitlines():
        indent = len(line) - len(line.lstrip())
        if frame_indent is not None and indent > frame_indent:
            continue
        found = FRAME.match(line)
        frame_indent = len(found.group(1)) if found else None
        kept.append(line)
    return "\n".join(kept)


SHIPPED = json.loads((kit_root() / "starters" / "11-probes.json").read_text(encoding="utf-8"))
CASE_ID = re.compile(r"[（(](\d+\.\w+#[\w-]+)[）)]")


def probe_inputs(text: str) -> set[str]:
    """The input lines of every probe case ``text`` names: its arguments as the case holds
    them (``value: {"goal": …}``, ``path: u1 user 3 · …``), data and not the kit's words."""
    return {
        shown.strip()
        for case in CASE_ID.findall(text)
        for line in SHIPPED["inputs"].get(case, ())
        for shown in (line, shown_in_zh(line))  # as the case holds it, as the edition shows it
    }


def shown_in_zh(line: str) -> str:
    set_edition("zh")
    try:
        return shown_input(line)
    finally:
        set_edition(None)


def prose_words(line: str) -> list[str]:
    found = english_words(line)
    return [w for w in found if w not in DATA and w not in COMMAND_WORDS and "-" not in w]


def assert_chinese(output: str, what: str) -> None:
    text = reader_text(output)
    inputs = probe_inputs(text)
    lines = [line for line in text.splitlines() if line.strip() not in inputs and prose_words(line)]
    assert not lines, f"{what}: English a Chinese reader would meet:\n" + "\n".join(lines[:12])


def practice_zh(folder: Path) -> tuple[Path, str]:
    """``practice 11 FOLDER/练习 --lang zh``: the workspace and what ``practice`` said."""
    run = cli("practice", CHAPTER, str(folder / "练习"), "--lang", "zh")
    assert run.returncode == 0, run.stderr
    return folder / "练习", run.stdout


@pytest.fixture
def zh_workspace(tmp_path: Path) -> tuple[Path, str]:
    """A fresh zh workspace of the test's own, to edit."""
    return practice_zh(tmp_path)


@pytest.fixture(scope="module")
def read_only_zh(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    """One fresh zh workspace for the tests that only read it (``checkpoint`` writes nothing
    into a workspace)."""
    return practice_zh(tmp_path_factory.mktemp("read-only"))


def checkpoint(workspace: Path, *args: str) -> str:
    run = cli("checkpoint", CHAPTER, *args, cwd=workspace, env={"LANG": "", "COURSE_LANG": ""})
    assert "Traceback" not in run.stderr, run.stderr
    return run.stdout + run.stderr


def test_practice_speaks_chinese(read_only_zh: tuple[Path, str]) -> None:
    workspace, said = read_only_zh
    assert_chinese(said, "practice")
    assert 'edition = "zh"' in (workspace / ".course-workspace.toml").read_text("utf-8")


def test_learning_md_is_the_workspaces_edition(
    read_only_zh: tuple[Path, str], tmp_path: Path
) -> None:
    workspace, _ = read_only_zh
    assert cli("practice", CHAPTER, str(tmp_path / "en"), "--lang", "en").returncode == 0
    chinese = (workspace / "LEARNING.md").read_text("utf-8")
    english = (tmp_path / "en" / "LEARNING.md").read_text("utf-8")
    assert chinese != english
    assert_chinese(chinese, "LEARNING.md")


def test_fresh_and_one_lab_done(zh_workspace: tuple[Path, str], manifest: Manifest) -> None:
    workspace, _ = zh_workspace
    assert_chinese(checkpoint(workspace), "fresh")
    assert_chinese(checkpoint(workspace, "--lab", "11.1"), "fresh, one lab")
    solve_lab(manifest, kit_root(), workspace, "11.1")
    assert_chinese(checkpoint(workspace), "Lab 11.1 done")


def test_a_failure_and_a_timeout(zh_workspace: tuple[Path, str], manifest: Manifest) -> None:
    workspace, _ = zh_workspace
    for lab in ("11.1", "11.2"):
        solve_lab(manifest, kit_root(), workspace, lab)
    replace_in(workspace / "pi_course" / "summary.py", "non_blank=True", "non_empty=True")
    sabotage(workspace, "groups", "split_interactions", HANGS)
    out = checkpoint(workspace, "--timeout", "2")
    assert_chinese(out, "a failure and a timeout")


def test_all_done_and_the_review(zh_workspace: tuple[Path, str], manifest: Manifest) -> None:
    workspace, _ = zh_workspace
    for lab in manifest.labs:
        solve_lab(manifest, kit_root(), workspace, lab.id)
    out = checkpoint(workspace)
    assert "14/14" in out
    assert_chinese(out, "14/14")
    assert_chinese(checkpoint(workspace, "--review"), "the review")
    # the full card is the same whatever lab is graded below it: one lab is enough
    assert_chinese(checkpoint(workspace, "--card", "--lab", "11.1"), "the full card")


def test_lang_en_overrides_the_workspace(read_only_zh: tuple[Path, str]) -> None:
    workspace, _ = read_only_zh
    out = checkpoint(workspace, "--lang", "en", "--lab", "11.1")
    assert "Checking" in out and english_words(out)
