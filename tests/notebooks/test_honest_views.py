"""The views are honest: a learner's wrong build_context shows as wrong, never as the chapter's."""

from __future__ import annotations

from pathlib import Path

from notebook_support import code_cells, create_workspace, errors, run_notebook, solve, texts

WHOLE_GROUPS = "    entries = [entry for group in reversed(kept) for entry in group]\n"
NEWEST_THREE = "    entries = [parse_message_entry(e) for group in groups for e in group][-3:]\n"
CHAPTER_KEPT = "u2, a2, u3, calls, r-test, r-read, a3"
WRONG_KEPT = "r-test, r-read, a3"


def test_a_build_context_keeping_the_newest_three_messages_is_shown_as_it_is(
    tmp_path: Path,
) -> None:
    workspace = solve(create_workspace(tmp_path / "practice-11"))
    context = workspace / "pi_course" / "context.py"
    source = context.read_text(encoding="utf-8")
    assert source.count(WHOLE_GROUPS) == 1
    context.write_text(source.replace(WHOLE_GROUPS, NEWEST_THREE), encoding="utf-8")

    probe = "print('explorer kept =', explorer.kept.value)"
    notebook = run_notebook(workspace / "notebooks" / "11-3-budget-projection.ipynb", [probe])
    # The copies cell looks for `calls` among the kept ids: with this bug it is not there.
    assert all("'calls' is not in list" in error for error in errors(notebook)), errors(notebook)
    shown = "\n".join(text for cell in code_cells(notebook) for text in texts(cell))
    assert "'keptEntryIds': ['r-test', 'r-read', 'a3']" in shown, "the result as returned"
    assert f"kept      {WRONG_KEPT}" in shown, "the projection view"
    assert "group 3 cut inside" in shown, "the group bars"
    assert f"explorer kept = {WRONG_KEPT}" in shown, "the explorer"
    assert f"kept      {CHAPTER_KEPT}" not in shown
    [lab] = [line for line in shown.splitlines() if line.startswith("✗ Lab 11.3  ")]
    assert lab.startswith("✗ Lab 11.3  budget projection  ") and "/3 tests · " in lab, lab
    assert lab.endswith(" cases  failed"), "and the lab's check fails"
