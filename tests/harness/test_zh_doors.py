"""The doors in the Chinese edition: what ``course/cli`` prints speaks the workspace's edition.

Lines the harness renders (the card, the lab lines, the hints) and the curriculum's texts are
translated elsewhere; these tests leave out what the zh catalog does not translate yet, so they
hold as the rest of the edition arrives.
"""

from __future__ import annotations

import io
import os
import queue
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from harness_support import cli

from course.cli import checkpoint, practice
from course.cli.watch import Event, Probe, WatchLoop, serve
from course.fixtures import chapter_path_json
from course.harness.catalog import Catalog, CatalogTest
from course.harness.editions import in_edition
from course.harness.manifest import Manifest, curriculum_texts
from course.harness.results import CheckpointResult, TestOutcome, summarize
from course.harness.workspace import create_workspace
from course.locale import EDITIONS, set_edition, translations
from course.locale.english import english_words
from course.locale.typography import rendered_problems
from course.sandboxed.columns import columns
from course.sandboxed.commands import key_legend
from course.sandboxed.status import Status

CHINESE = re.compile(r"[\u4e00-\u9fff]")


def untranslated(manifest: Manifest) -> list[str]:
    """The curriculum's texts the zh catalog leaves in English for now, longest first."""
    zh = translations("zh")
    texts = {text for text in curriculum_texts(manifest) if zh.gettext(text) == text}
    return sorted(texts, key=len, reverse=True)


def english_left(text: str, manifest: Manifest, cut: bool = False) -> list[str]:
    """English words of ``text`` once the curriculum's untranslated texts are taken out (with
    ``cut``, also their words: a wrapped line holds only part of one)."""
    text = " ".join(text.split())
    sources = untranslated(manifest)
    for source in sources:
        text = text.replace(" ".join(source.split()), " ")
    for separator in (", ", "\u3001"):  # the editions' ids, listed
        text = text.replace(separator.join(EDITIONS), " ")
    found = english_words(text)
    if cut:
        theirs = {word for source in sources for word in english_words(source)}
        found = [word for word in found if word not in theirs]
    return found


@pytest.fixture
def zh_workspace(manifest: Manifest, kit: Path, tmp_path: Path) -> Path:
    target = tmp_path / "zh"
    create_workspace(manifest, kit, target, "zh")
    return target


@pytest.fixture
def speaking_zh() -> Iterator[None]:
    set_edition("zh")
    try:
        yield
    finally:
        set_edition(None)


def test_practice_in_chinese_has_no_english_words(manifest: Manifest, tmp_path: Path) -> None:
    made = cli("practice", "11", str(tmp_path / "ws"), "--lang", "zh")
    assert made.returncode == 0, made.stderr
    assert "已在" in made.stdout and "练习目录" in made.stdout
    assert english_left(made.stdout, manifest) == [], made.stdout


def test_a_zh_workspace_speaks_chinese_in_the_lines_of_the_doors(
    manifest: Manifest, zh_workspace: Path
) -> None:
    run = cli("checkpoint", "11", "--lab", "11.1", "--no-card", cwd=zh_workspace)
    assert run.returncode == 1, run.stderr
    checking = [line for line in run.stdout.splitlines() if "zh" in line and "/" in line]
    assert checking and checking[0].startswith("正在检查：练习目录 "), run.stdout
    assert "Checking" not in run.stdout

    review = cli("checkpoint", "11", "--review", cwd=zh_workspace)
    assert review.returncode == 1, review.stderr
    mine = ("正在验收：", "各 Lab：", "  尚未编写：", "请说明：", "检查：", "本章验收：")
    for start in mine:
        lines = [line for line in review.stdout.splitlines() if line.startswith(start)]
        assert lines, f"no line starting {start!r}:\n{review.stdout}"
        assert english_left("\n".join(lines), manifest, cut=True) == [], lines
    for english in ("Reviewing", "Labs:", "Explain:", "Check:", "your code cannot", "Review:"):
        assert english not in review.stdout


def test_a_zh_workspace_elsewhere_is_spoken_to_in_its_edition(
    zh_workspace: Path, tmp_path: Path
) -> None:
    run = cli(
        "checkpoint", "11", "--lab", "11.1", "--no-card", "--unsandboxed",
        "--practice", str(zh_workspace), cwd=tmp_path,
    )  # fmt: skip
    assert f"正在检查：练习目录 {zh_workspace.resolve()}" in run.stdout, run.stderr


def test_the_help_speaks_the_edition(manifest: Manifest, speaking_zh: None) -> None:
    legend = key_legend()
    for parser in (checkpoint.parser(), practice.parser()):
        texts = [parser.description or ""]
        texts += [action.help or "" for action in parser._actions if action.dest != "help"]
        for text in texts:
            assert CHINESE.search(text), text
            code = text.replace(legend, " ").replace("practice-CHAPTER", " ")  # a folder's name
            assert english_left(code, manifest) == [], text


def test_lang_en_in_a_zh_workspace_speaks_english(zh_workspace: Path) -> None:
    run = cli("checkpoint", "11", "--lab", "11.1", "--no-card", "--lang", "en", cwd=zh_workspace)
    assert f"Checking workspace {zh_workspace.resolve()}" in run.stdout, run.stderr
    assert not CHINESE.search(run.stdout), run.stdout
    helped = cli("checkpoint", "11", "--help", "--lang", "en", cwd=zh_workspace)
    assert "Run a chapter's focused tests lab by lab" in helped.stdout
    assert not CHINESE.search(helped.stdout), helped.stdout
    zh_help = cli("checkpoint", "11", "--help", cwd=zh_workspace)
    assert "逐个 Lab 运行一章的聚焦测试" in zh_help.stdout


def test_an_unknown_lang_is_a_usage_error_naming_the_editions(
    zh_workspace: Path, tmp_path: Path
) -> None:
    english = {"COURSE_LANG": "en"}
    for tool, args in (("checkpoint", ["11"]), ("practice", ["11", str(tmp_path / "new")])):
        for lang in (["--lang", "xx"], ["--lang=xx"]):
            run = cli(tool, *args, *lang, cwd=tmp_path, env=english)
            assert run.returncode == 2, run.stdout
            assert run.stderr.startswith(f"usage: {tool}"), run.stderr
            assert f'{tool}: error: no edition "xx" (editions: en, zh)' in run.stderr
    assert not (tmp_path / "new").exists()
    here = cli("checkpoint", "11", "--lang", "xx", cwd=zh_workspace, env=english)
    assert here.returncode == 2
    assert "没有语言版本“xx”（可选：en、zh）" in here.stderr, here.stderr


def test_the_watch_speaks_the_edition(
    manifest: Manifest, tmp_path: Path, speaking_zh: None
) -> None:
    shown = in_edition(manifest)
    catalog = Catalog(
        tuple(
            CatalogTest(lab.id, f"test_{n}", lab.id) for lab in shown.labs for n in range(lab.tests)
        )
    )

    def run() -> CheckpointResult:
        outcomes = [
            TestOutcome(
                f"{test.file}::{test.function}",
                test.function,
                test.lab,
                Status.PENDING,
                f"Lab {test.lab} not implemented yet",
            )
            for test in catalog.tests
        ]
        return summarize(shown, shown.labs, outcomes, catalog=catalog, target="")

    out = io.StringIO()
    events: queue.Queue[Event] = queue.Queue()
    for key in ("n", "?", "q"):
        events.put(("key", key))
    assert serve(WatchLoop(shown, run, out), events, Probe(tmp_path), lambda: None) == 0
    text = out.getvalue()
    legend = key_legend()
    mine = [
        line
        for line in text.splitlines()
        if line.startswith(("进度", "当前：", "按键：", "Lab 11.5 是最后"))
    ]
    assert any(line.startswith("当前：Lab 11.2") for line in mine), text
    assert any(line.startswith("按键：") for line in mine), text
    for line in mine:
        assert english_left(line.replace(legend, " "), manifest) == [], line
    for english in ("progress", "Now:", "keys:"):
        assert english not in text
    assert typography_left(text) == [], text


# --------------------------------------------------------------------------- every door, as printed

PLAIN_ENVIRONMENT = {
    "LANG": "C.UTF-8",
    "COURSE_LANG": "",
    "LANGUAGE": "",
    "LC_ALL": "",
    "LC_MESSAGES": "",
}
"""A terminal that says nothing about Chinese: the workspace alone chooses."""


def typography_left(text: str) -> list[str]:
    """What a zh reader would stumble on in rendered ``text``: a backtick, a space inside a
    Chinese phrase, an ASCII colon or ``; `` after Latin text in a Chinese line, a bad break."""
    return [str(problem) for problem in rendered_problems(text)]


def test_practice_speaks_the_workspace_it_stands_in(zh_workspace: Path, tmp_path: Path) -> None:
    helped = cli("practice", "--help", cwd=zh_workspace, env=PLAIN_ENVIRONMENT)
    assert helped.returncode == 0 and helped.stdout.startswith("用法：practice"), helped.stdout
    bare = cli("practice", cwd=zh_workspace, env=PLAIN_ENVIRONMENT)
    assert bare.returncode == 2 and "缺少必需的参数" in bare.stderr, bare.stderr
    taken = cli("practice", "11", str(zh_workspace), cwd=zh_workspace, env=PLAIN_ENVIRONMENT)
    assert taken.returncode == 2 and "不是空目录" in taken.stderr, taken.stderr
    for run in (helped, bare, taken):
        assert typography_left(run.stdout + run.stderr) == [], run.stdout + run.stderr
        assert "usage:" not in run.stdout + run.stderr
    made = cli("practice", "11", str(tmp_path / "again"), cwd=zh_workspace, env=PLAIN_ENVIRONMENT)
    assert made.returncode == 0 and "已在" in made.stdout, made.stderr
    assert 'edition = "zh"' in (tmp_path / "again" / ".course-workspace.toml").read_text()
    assert typography_left(made.stdout) == [], made.stdout


def test_the_zh_cards_practice_line_makes_a_zh_workspace_as_printed(
    zh_workspace: Path, tmp_path: Path
) -> None:
    card = cli("checkpoint", "11", "--card", cwd=zh_workspace, env=PLAIN_ENVIRONMENT)
    line = next(line for line in card.stdout.splitlines() if line.startswith("  练习目录"))
    command = line.removeprefix("  练习目录").strip()
    assert command.endswith("practice 11 --lang zh"), line
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    ran = subprocess.run(
        ["bash", "-c", command],
        cwd=elsewhere,
        env={**os.environ, **{k: v for k, v in PLAIN_ENVIRONMENT.items() if v}},
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert ran.returncode == 0, ran.stderr
    made = elsewhere / "practice-11" / ".course-workspace.toml"
    assert 'edition = "zh"' in made.read_text(encoding="utf-8")
    english = cli("checkpoint", "11", "--card", "--lang", "en", cwd=zh_workspace)
    assert any(line.endswith("practice 11") for line in english.stdout.splitlines())


ZH_DOORS = [
    ("checkpoint", "11"),
    ("checkpoint", "11", "--card"),
    ("checkpoint", "11", "--help"),
    ("checkpoint", "11", "--lab", "11.1"),
    ("checkpoint", "11", "--lab", "11.2", "--hint"),
    ("checkpoint", "11", "--review"),
    ("checkpoint", "11", "--replay", "11.1#001"),
    ("practice", "--help"),
]


@pytest.mark.parametrize("door", ZH_DOORS, ids=" ".join)
def test_each_door_of_a_fresh_zh_workspace_keeps_the_chapters_typography(
    manifest: Manifest, zh_workspace: Path, door: tuple[str, ...]
) -> None:
    tool, *args = door
    run = cli(tool, *args, cwd=zh_workspace, env=PLAIN_ENVIRONMENT)
    shown = run.stdout + run.stderr
    assert CHINESE.search(shown), shown
    assert typography_left(shown) == [], shown


def plain_pytest(workspace: Path, lab: str) -> subprocess.CompletedProcess[str]:
    """``python -m pytest tests/chapter11 -k lab_11_2 -q`` in ``workspace`` on a plain terminal."""
    environment = {**os.environ, **{k: v for k, v in PLAIN_ENVIRONMENT.items() if v}}
    for name in ("COURSE_LANG", "LANGUAGE", "LC_ALL", "LC_MESSAGES"):
        environment.pop(name, None)
    return subprocess.run(
        [sys.executable, "-m", "pytest", "tests/chapter11", "-k", f"lab_{lab}", "-q"],
        cwd=workspace,
        env=environment,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )


def test_plain_pytest_in_a_zh_workspace_keeps_the_chapters_typography(
    zh_workspace: Path,
) -> None:
    run = plain_pytest(zh_workspace, "11_2")
    assert "交互分组尚未实现" in run.stdout, run.stdout
    said = [line for line in run.stdout.splitlines() if line.startswith(("E ", "FAILED"))]
    kit_lines = "\n".join(line for line in said if CHINESE.search(line))  # not pytest's code
    assert kit_lines, run.stdout
    assert typography_left(kit_lines) == [], kit_lines


def test_plain_pytest_shows_a_zh_failure_as_the_checkpoint_does(
    zh_workspace: Path, kit: Path
) -> None:
    """No Markdown backtick, a fact of a probe's answer in words, the edition's colons."""
    groups = (kit / "course" / "groups.py").read_text("utf-8")
    copied = "InteractionGroup([parse_message_entry(entry) for entry in group])"
    assert copied in groups
    shared = groups.replace(copied, "InteractionGroup(list(group))")
    (zh_workspace / "pi_course" / "groups.py").write_text(shared, encoding="utf-8")
    run = plain_pytest(zh_workspace, "11_2")
    # pytest's own summary lines (FAILED … - AssertionError: …, whole where CI is set) are not ours
    ours = [line for line in run.stdout.splitlines() if not line.startswith(("FAILED ", "ERROR "))]
    said = "\n".join(line for line in ours if CHINESE.search(line))
    assert "记录 calls：组中必须是副本，不能直接使用路径上的记录对象" in said, run.stdout
    assert "与路径共享消息对象：应为否，实际为是" in said, run.stdout
    assert "\n  path：u1 user 3 · a1 assistant 7" in run.stdout, run.stdout
    assert "`" not in said and "shares" not in said, said
    assert typography_left(said) == [], said


def test_the_actions_workflow_of_a_zh_workspace_names_its_labs_and_steps_in_chinese(
    manifest: Manifest, tmp_path: Path
) -> None:
    made = cli("practice", "11", str(tmp_path / "zh"), "--lang", "zh", "--actions")
    assert made.returncode == 0, made.stderr
    assert "自动评分：.github/workflows/checkpoint.yml（GitHub Actions）" in made.stdout
    assert typography_left(made.stdout) == [], made.stdout
    text = (tmp_path / "zh" / ".github" / "workflows" / "checkpoint.yml").read_text("utf-8")
    document = pytest.importorskip("yaml").safe_load(text)
    job = document["jobs"]["lab"]
    set_edition("zh")
    try:
        titles = [{"id": lab.id, "title": lab.title} for lab in in_edition(manifest).required_labs]
    finally:
        set_edition(None)
    assert job["strategy"]["matrix"]["lab"] == titles, "a check run per lab, named in Chinese"
    assert titles[1]["title"] == "交互分组"
    names = [step["name"] for step in document["jobs"]["grade"]["steps"]]
    assert names == [
        "检出代码",
        "允许 bubblewrap 创建命名空间",
        "安装课程",
        "checkpoint 11",
        "为各 Lab 的作业保存课程和评分结果",
    ]
    names = [step["name"] for step in job["steps"]]
    assert names == ["检出代码", "取回这次推送的课程和评分结果", "解包课程", "报告这个 Lab"]
    comments = "\n".join(line[2:] for line in text.splitlines() if line.startswith("# "))
    assert CHINESE.search(comments) and typography_left(comments) == [], comments


def test_a_reference_refusal_and_a_pending_note_reach_a_zh_notebook_in_chinese(
    manifest: Manifest, speaking_zh: None
) -> None:
    from course.curricula.ch11 import show
    from course.display.notebook import PendingCells
    from course.groups import InteractionError, check_tool_pairs
    from course.labs import LabNotImplemented
    from course.session import parse_session_entry

    path = [parse_session_entry(value) for value in chapter_path_json()]
    broken = [entry for entry in path if entry.id != "r-test"]
    with pytest.raises(InteractionError) as raised:
        check_tool_pairs(broken[4:])
    view = show.refused(raised.value)
    assert "tool call test-1 仍没有 result" in view.text, view.text
    assert english_left(view.text, manifest) == [], view.text
    assert typography_left(view.text) == [], view.text

    stub = LabNotImplemented("11.2", "interaction groups", "group_interactions", "")
    cells = PendingCells()
    note = cells.note_for(stub)
    assert note is not None and "交互分组尚未实现" in note.text, note
    cells.waiting["groups"] = cells._waits_for(stub)
    waiting = cells.note_for(NameError("name 'groups' is not defined", name="groups"))
    assert waiting is not None
    assert "`" not in waiting.text and "<code>groups</code>" in waiting.html, waiting.html
    assert typography_left(waiting.text) == [], waiting.text


def test_the_zh_usage_lines_up_under_the_first_option_by_columns(zh_workspace: Path) -> None:
    helped = cli("checkpoint", "--help", cwd=zh_workspace, env=PLAIN_ENVIRONMENT)
    first, *rest = helped.stdout.split("\n\n")[0].splitlines()
    assert first.startswith("用法：checkpoint [-h]") and rest, helped.stdout
    option = columns(first[: first.index("[-h]")])
    assert all(columns(line) - columns(line.lstrip()) == option for line in rest), helped.stdout
