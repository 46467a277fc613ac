"""The Chinese edition of what a checkpoint prints and of LEARNING.md: no English left.

The curriculum's own text is replaced by Chinese here, so these tests hold the kit's words
(labels, lab lines, the summary, the next step, LEARNING.md) and not the curriculum's catalog.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from course.harness.kit import chapter_fingerprints
from course.harness.learning import render_learning
from course.harness.manifest import Manifest, translated
from course.harness.report import render_card, render_lab, render_short_card, render_summary
from course.harness.results import CheckpointResult, LabResult, ProbeSummary, TestOutcome
from course.harness.style import status_label
from course.locale.english import english_words
from course.sandboxed.commands import key_legend
from course.sandboxed.status import Status
from course.sandboxed.verdicts import NOT_RUN

PARENT = "0123456789abcdef" * 4


@pytest.fixture
def chinese(manifest: Manifest) -> Manifest:
    """The chapter with every curriculum text in Chinese (as its catalog will have it)."""
    return translated(manifest, lambda text: "中文说明")


def _result(manifest: Manifest, status: Status, message: str = "尚未实现") -> CheckpointResult:
    labs = tuple(
        LabResult(
            lab,
            tuple(
                TestOutcome(f"t{lab.id}-{n}", f"test_{n}", lab.id, status, message)
                for n in range(lab.tests)
            ),
            lab.tests,
        )
        for lab in manifest.labs
    )
    return CheckpointResult(manifest.chapter, "practice", labs)


def test_the_card_reads_as_the_chapters_chinese_card(
    zh: None, chinese: Manifest, kit: Path
) -> None:
    card = render_card(chinese, chapter_fingerprints(chinese, kit), in_workspace=True)
    labels = "模式 起点·parent 终点·target 教学文件 学习脚手架 动手前只需知道 第一步 第一次红灯"
    labels += " 聚焦测试 定位命令 练习目录 聚焦运行 通过证据"
    for label in labels.split():
        assert f"\n  {label.replace('·', ' ')} " in card
    assert "practice 11 --lang zh" in card, "run as printed, the line makes a zh workspace"
    assert english_words(card.replace("--lang zh", " ")) == []  # an option and its value
    assert english_words(render_short_card(chinese)) == []


def test_a_lab_line_and_its_failures_are_chinese(zh: None, chinese: Manifest) -> None:
    lab = chinese.labs[0]
    tests = (
        TestOutcome("a", "test_a", lab.id, Status.FAILED, "值不对"),
        TestOutcome("b", "test_b", lab.id, Status.FAILED, "值不对"),
        TestOutcome("c", "test_c", lab.id, Status.PENDING, "尚未实现"),
    )
    probes = ProbeSummary(10, 7, Status.FAILED, ("输入 1：值不同",))
    line = render_lab(LabResult(lab, tests, 3, probes))
    assert "失败" in line and "待实现" in line and "另有 2 个类似的探针用例" in line
    assert english_words(line) == []
    optional = next(lab for lab in chinese.labs if lab.optional)
    assert "（可选，不计分）" in render_lab(LabResult(optional, (), 0))


def test_the_summary_and_next_step_are_chinese(zh: None, chinese: Manifest) -> None:
    pending = render_summary(chinese, _result(chinese, Status.PENDING))
    assert "下一步：Lab" in pending
    assert english_words(pending) == []
    green = render_summary(chinese, _result(chinese, Status.PASSED, ""))
    assert "聚焦测试通过" in green
    assert english_words(green) == []
    stopped = render_summary(
        chinese, _result(chinese, Status.ERROR, NOT_RUN + "包在导入时失败：语法错误")
    )
    assert "未运行：包在导入时失败" in stopped
    assert english_words(stopped) == []


def test_status_words_and_keys_are_labels_the_ids_stay(zh: None) -> None:
    assert status_label(Status.PASSED) == "通过"
    assert str(Status.PASSED) == "passed"
    assert english_words(key_legend()) == []


def test_learning_md_is_written_in_the_workspaces_edition(chinese: Manifest) -> None:
    notebooks = ["notebooks/11-1.ipynb"]
    zh_page = render_learning(chinese, PARENT, notebooks, edition="zh")
    en_page = render_learning(chinese, PARENT, notebooks, edition="en")
    assert zh_page != en_page
    assert english_words(zh_page) == []
    assert "## 第一步" in zh_page and "## First step" in en_page
    for lab in chinese.labs:  # commands stay as they are
        assert f"`checkpoint {chinese.chapter} --lab {lab.id}`" in zh_page
