"""Hints on request: three levels per lab, opened one at a time, recorded in the workspace, and
shown to the instructor as information; a red run says where the next hint is, never the hint."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from harness_support import CHAPTER, MakeWorkspace, cli

from course.cli.review import ReviewResult, render_review
from course.display.notebook import hint
from course.grading.intake.safefs import Tree
from course.grading.intake.snapshot import workspace_snapshot
from course.grading.records.gradebook import Grade, gradebook_csv, gradebook_json
from course.harness.editions import in_edition
from course.harness.hints import (
    HINTS_FILE,
    Hint,
    HintsError,
    hint_pointer,
    labs_by_id,
    open_next_hint,
    parse_hints,
    read_hints,
    render_hint,
)
from course.harness.kit import kit_root
from course.harness.learning import render_learning
from course.harness.manifest import Lab, Manifest
from course.harness.report import render_summary
from course.harness.results import CheckpointResult, LabResult, TestOutcome
from course.locale import set_edition
from course.sandboxed.status import Status


def test_every_lab_has_three_levels_the_steps_last(manifest: Manifest) -> None:
    for lab in manifest.labs:
        assert len(lab.hints) == 3, lab.id
        idea, strategy, steps = lab.hints
        assert idea.startswith("The idea:") and strategy.startswith("A strategy:"), lab.id
        assert steps.startswith("The steps:"), lab.id
        assert lab.goal and lab.section, lab.id


def test_each_level_is_labelled_in_zh_and_the_last_says_it_is_the_last(
    manifest: Manifest,
) -> None:
    set_edition("zh")
    try:
        shown = in_edition(manifest)
        for lab in shown.labs:
            assert [hint[:3] for hint in lab.hints] == ["思路：", "策略：", "做法："], lab.id
        lab = shown.lab("11.2")
        first = render_hint(Hint(lab, 1, lab.hints[0]), "hint(“11.2”)")
        last = render_hint(Hint(lab, 3, lab.hints[2]), "hint(“11.2”)")
    finally:
        set_edition(None)
    assert "最后一级" not in "".join(first) and first[-1].startswith("还是卡住？")
    assert last[1].startswith("  做法："), last
    assert last[-1] == "这是最后一级提示：再次打开，显示的仍是这一级。"
    learning = render_learning(manifest, "0" * 64, [], edition="zh")
    assert "3 具体做法" in learning and "具体步骤" not in learning
    assert "3. 具体做法" in (Path(__file__).parents[2] / "docs/zh/learners.md").read_text("utf-8")


def test_levels_open_one_at_a_time_and_are_recorded(
    manifest: Manifest, make_workspace: MakeWorkspace
) -> None:
    workspace = make_workspace("hinted")
    labs, lab = labs_by_id(manifest.labs), manifest.lab("11.3")
    shown = [open_next_hint(workspace, labs, lab) for _ in range(4)]
    assert [h.level for h in shown] == [1, 2, 3, 3], "the last level again once all are open"
    assert [h.text for h in shown] == [*lab.hints, lab.hints[-1]]
    open_next_hint(workspace, labs, manifest.lab("11.1"))
    assert read_hints(workspace, labs) == {"11.1": 1, "11.3": 3}
    text = (workspace / HINTS_FILE).read_text("utf-8")
    assert text.index('"11.1"') < text.index('"11.3"'), "lab order"


@pytest.mark.parametrize(
    ("record", "names"),
    [
        ('[opened]\n"11.9" = 1\n', "opened.11.9"),
        ('[opened]\n"11.3" = 4\n', "opened.11.3"),
        ('[opened]\n"11.3" = 0\n', "opened.11.3"),
        ('[opened]\n"11.3" = true\n', "opened.11.3"),
        ('[opened]\n"11.3" = "2"\n', "opened.11.3"),
        ("[opened]\n[other]\n", "other"),
        ("opened = [", HINTS_FILE),
    ],
)
def test_a_bad_record_is_refused_naming_the_key(
    manifest: Manifest, record: str, names: str
) -> None:
    with pytest.raises(HintsError, match=f"{HINTS_FILE}: .*{names}|{names}.*"):
        parse_hints(record.encode(), HINTS_FILE, labs_by_id(manifest.labs))


def _failing(manifest: Manifest, lab_id: str) -> CheckpointResult:
    """Every lab run: ``lab_id``'s tests fail, every other lab's pass."""

    def outcome(lab: Lab, n: int) -> TestOutcome:
        status = Status.FAILED if lab.id == lab_id else Status.PASSED
        return TestOutcome(f"t::{lab.select}_{n}", f"test_{n}", lab.id, status, "assert 1 == 2")

    labs = tuple(
        LabResult(lab, tuple(outcome(lab, n) for n in range(lab.tests)), lab.tests)
        for lab in manifest.labs
    )
    return CheckpointResult(manifest.chapter, "practice", labs)


def test_a_red_run_ends_with_where_the_next_hint_is_never_the_hint(manifest: Manifest) -> None:
    lab = manifest.lab("11.3")
    for opened, level in (({}, 1), ({"11.3": 1}, 2)):
        summary = render_summary(manifest, _failing(manifest, "11.3"), opened=opened)
        last = summary.splitlines()[-1]
        assert last == f"stuck? checkpoint 11 --hint shows hint {level} of 3 for Lab 11.3"
        for text in lab.hints:  # no level's words, however wrapped
            assert " ".join(text.split()[:8]) not in " ".join(summary.split())
    every = hint_pointer(lab, {"11.3": 3}, "checkpoint 11 --hint")
    assert every.startswith("All 3 hints for Lab 11.3 are open")


def test_checkpoint_hint_opens_the_next_level_for_the_lab_at_hand(
    manifest: Manifest, make_workspace: MakeWorkspace
) -> None:
    workspace = make_workspace("asks")
    first = cli("checkpoint", CHAPTER, "--hint", cwd=workspace)
    assert first.returncode == 0, first.stderr
    assert first.stdout.startswith("Hint 1 of 3 · Lab 11.1 compaction entry"), first.stdout
    # the English edition points to the English notebook's section, not the Chinese chapter's
    lab = manifest.lab("11.1")
    said = f"In the notebook notebooks/{lab.notebook}: the section “{lab.heading}”"
    assert said in " ".join(first.stdout.split()), first.stdout
    assert lab.section not in first.stdout, first.stdout
    assert "checkpoint 11 --hint shows hint 2 of 3." in first.stdout
    chosen = cli("checkpoint", CHAPTER, "--lab", "11.4", "--hint", cwd=workspace)
    assert chosen.stdout.startswith("Hint 1 of 3 · Lab 11.4"), chosen.stdout
    again = cli("checkpoint", CHAPTER, "--lab", "11.4", "--hint", cwd=workspace)
    assert again.stdout.startswith("Hint 2 of 3 · Lab 11.4"), again.stdout
    assert read_hints(workspace, labs_by_id(manifest.labs)) == {"11.1": 1, "11.4": 2}
    outside = cli("checkpoint", CHAPTER, "--hint", cwd=workspace.parent)
    assert outside.returncode == 2 and "--practice DIR" in outside.stderr
    refused = cli("checkpoint", CHAPTER, "--hint", "--json", "x.json", cwd=workspace)
    assert refused.returncode == 2 and "--hint" in refused.stderr


def test_a_notebook_asks_for_a_hint_the_same_way(
    manifest: Manifest, make_workspace: MakeWorkspace
) -> None:
    workspace = make_workspace("notebook-asks")
    view = hint("11.2", start=workspace / "notebooks")
    assert view.text.startswith("Hint 1 of 3 · Lab 11.2"), view.text
    assert 'hint("11.2") shows hint 2 of 3.' in view.text
    assert read_hints(workspace, labs_by_id(manifest.labs)) == {"11.2": 1}
    assert hint("11.9", start=workspace).text.startswith("✗")


def test_the_record_is_part_of_the_layout_and_the_snapshot_reads_it(
    manifest: Manifest, kit: Path, make_workspace: MakeWorkspace
) -> None:
    workspace = make_workspace("recorded")
    open_next_hint(workspace, labs_by_id(manifest.labs), manifest.lab("11.2"))
    snapshot = workspace_snapshot(manifest, kit, Tree(workspace))
    assert snapshot.hints == {"11.2": 1}
    assert "files outside the curriculum" not in snapshot.flags
    (workspace / HINTS_FILE).write_text('[opened]\n"11.2" = 9\n', encoding="utf-8")
    broken = workspace_snapshot(manifest, kit, Tree(workspace))
    assert broken.hints == {}
    assert any("hint record" in note and "opened.11.2" in note for note in broken.notes)


def test_the_gradebook_shows_the_levels_opened_as_information(manifest: Manifest) -> None:
    row = Grade("ada", "ada", Status.PASSED, 14, 14, (), hints={"11.2": 1, "11.3": 3})
    plain = Grade("bob", "bob", Status.PASSED, 14, 14, ())
    assert row.score == plain.score, "never a penalty"
    head, ada, bob = gradebook_csv([], [row, plain]).splitlines()
    column = head.split(",").index("hints")
    assert ada.split(",")[column] == "11.2:1 11.3:3" and bob.split(",")[column] == ""
    learners = json.loads(gradebook_json(CHAPTER, [row, plain], {}))["learners"]
    assert [learner["hints"] for learner in learners] == [{"11.2": 1, "11.3": 3}, {}]


def test_the_review_shows_the_levels_opened(manifest: Manifest) -> None:
    assert manifest.review is not None
    verdict = _failing(manifest, "none")
    result = ReviewResult(manifest.review, {}, verdict)
    assert "Hints opened: none." in render_review(result)
    shown = render_review(result, opened={"11.3": 2})
    assert "Hints opened (information, never a penalty): Lab 11.3 2 of 3." in shown


def test_learning_md_gives_each_labs_goal_and_section_not_its_steps(manifest: Manifest) -> None:
    page = " ".join(render_learning(manifest, "0" * 64, ["notebooks"], edition="en").split())
    zh = " ".join(render_learning(manifest, "0" * 64, ["notebooks"], edition="zh").split())
    for lab in manifest.labs:
        assert " ".join(lab.goal.split()) in page, lab.id
        # English: the English notebook's section (the chapter is Chinese); Chinese: the chapter's
        assert f"- in the notebook: the section “{lab.heading}”" in page, lab.id
        assert lab.section not in page and f"本章对应小节：“{lab.section}”" in zh, lab.id
        for text in lab.hints:
            assert " ".join(text.split()[:8]) not in page, lab.id
        assert f"checkpoint 11 --lab {lab.id} --hint" in page


def test_each_labs_notebook_holds_the_section_a_door_points_to(manifest: Manifest) -> None:
    """The section an edition without the chapter is sent to is a heading of the lab's
    notebook in that edition."""
    root = kit_root()
    for edition, folder in manifest.notebooks.items():
        set_edition(edition)
        try:
            labs = in_edition(manifest).labs
        finally:
            set_edition(None)
        for lab in labs:
            if lab.chapter_section(edition) is not None:
                continue
            notebook = json.loads((root / folder / lab.notebook).read_text(encoding="utf-8"))
            headings = {
                line.lstrip("#").strip()
                for cell in notebook["cells"]
                if cell["cell_type"] == "markdown"
                for line in "".join(cell["source"]).splitlines()
                if line.startswith("#")
            }
            assert lab.heading in headings, (edition, lab.id, sorted(headings))
