"""A workspace is judged against its own scaffold, and told plainly what the kit's changes mean.

An older scaffold is made here as a kit update leaves one behind: a workspace whose focused
tests, conftest and a given module differ from the kit's of today, its marker recording the
scaffold it began from (another starter fingerprint, and its own files' checksums). Before, every
such file was an edit: the learner was told, on every door and on Gradescope, that they had
edited the test files. Now a file is edited only on evidence.
"""

from __future__ import annotations

import json
import tomllib
from pathlib import Path

import pytest
from harness_support import cli, replace_in
from solutions import solve_lab

from course.grading.intake.safefs import Tree
from course.grading.intake.snapshot import workspace_snapshot
from course.harness.carry import carry
from course.harness.kit import digest, kit_root
from course.harness.manifest import Manifest
from course.harness.workspace import create_workspace
from course.sandboxed.marker import MARKER

OLD = "0123456789ab" + "0" * 52
TESTS = "tests/chapter11/test_11_context_compaction.py"
CONFTEST = "tests/chapter11/conftest.py"
GIVEN = "pi_course/tree.py"
LAB_11_3_TEST = "def test_lab_11_3_deducts_fixed_costs_before_choosing_groups("


def older_scaffold(manifest: Manifest, folder: Path, record: bool = True) -> Path:
    """A workspace as an older kit made it: a Lab 11.3 test and the conftest as they were, a
    given module's comment; its marker naming that scaffold (and, with ``record``, its files)."""
    create_workspace(manifest, kit_root(), folder)
    replace_in(folder / TESTS, LAB_11_3_TEST, "def test_lab_11_3_as_it_was(")
    with (folder / CONFTEST).open("a", encoding="utf-8") as conftest:
        conftest.write("# the older scaffold's conftest\n")
    with (folder / GIVEN).open("a", encoding="utf-8") as given:
        given.write("# the older scaffold's tree.py\n")
    marker = tomllib.loads((folder / MARKER).read_text(encoding="utf-8"))
    text = (folder / MARKER).read_text(encoding="utf-8")
    text = text.replace(marker["starter_fingerprint"], OLD)
    for path in (TESTS, CONFTEST, GIVEN):
        line = f"{json.dumps(path)} = {json.dumps(marker['checksums'][path])}"
        own = digest((folder / path).read_bytes())
        if record or path != GIVEN:
            text = text.replace(line, f"{json.dumps(path)} = {json.dumps(own)}")
        else:  # a marker of an older kit, which recorded the tests only
            text = text.replace(line + "\n", "")
    (folder / MARKER).write_text(text, encoding="utf-8")
    return folder


def _snapshot(manifest: Manifest, folder: Path) -> tuple[list[str], list[str]]:
    taken = workspace_snapshot(manifest, kit_root(), Tree(folder.parent, (folder.name,)))
    return list(taken.notes), list(taken.flags)


def test_an_older_scaffolds_own_files_are_not_edits(manifest: Manifest, tmp_path: Path) -> None:
    notes, flags = _snapshot(manifest, older_scaffold(manifest, tmp_path / "older"))
    assert flags == [], "no flag without evidence"
    assert not any("was edited" in note for note in notes), notes
    assert notes[0].startswith(f"begun from scaffold {OLD[:12]}; the kit's is now ")
    own = f"as the scaffold it began from made them, not edited: {GIVEN}, {CONFTEST}, {TESTS}"
    assert own in notes, notes
    changed = (
        "the kit changed the focused tests of Lab 11.3 since that scaffold: a lab right for its "
        "tests may fail with the kit's (ask the instructor)"
    )
    assert changed in notes, notes


def test_an_older_scaffold_without_a_record_of_a_file_is_not_accused(
    manifest: Manifest, tmp_path: Path
) -> None:
    older = older_scaffold(manifest, tmp_path / "older", record=False)
    notes, flags = _snapshot(manifest, older)
    assert flags == [], notes
    said = f"differ from the kit's, and the scaffold it began from kept no record of them: {GIVEN}"
    assert said in notes, notes


def test_a_file_changed_since_its_scaffold_recorded_it_is_an_edit(
    manifest: Manifest, tmp_path: Path
) -> None:
    older = older_scaffold(manifest, tmp_path / "older")
    with (older / TESTS).open("a", encoding="utf-8") as tests:
        tests.write("\n# an edit of my own\n")
    notes, flags = _snapshot(manifest, older)
    assert flags == ["edited test files"], flags
    assert f"{TESTS} was edited in the workspace; graded with the kit's copy" in notes
    fresh = tmp_path / "fresh"
    create_workspace(manifest, kit_root(), fresh)
    with (fresh / GIVEN).open("a", encoding="utf-8") as given:
        given.write("# mine\n")
    assert _snapshot(manifest, fresh)[1] == ["edited given files"], "the kit's own scaffold"


def test_a_lab_file_without_what_the_kit_gives_says_so(manifest: Manifest, tmp_path: Path) -> None:
    """A context.py from before the kit gave ``open_context`` (moved into a fresh workspace, as
    the docs advised): the note names what is missing and how to keep it."""
    fresh = tmp_path / "moved"
    create_workspace(manifest, kit_root(), fresh)
    context = fresh / "pi_course" / "context.py"
    text = context.read_text(encoding="utf-8")
    start = text.index("def open_context(")
    end = text.index("\ndef ", start + 1)
    context.write_text(text[:start] + text[end + 1 :], encoding="utf-8")
    notes, flags = _snapshot(manifest, fresh)
    said = (
        "pi_course/context.py has no open_context, which the kit's scaffold gives: the kit's "
        "tests that use it fail; practice 11 NEW --from OLD moves your lab code into a fresh "
        "workspace and keeps it"
    )
    assert said in notes and flags == [], notes


@pytest.mark.parametrize("door", ["--practice"])
def test_a_door_grades_an_older_scaffold_without_accusing_it(
    manifest: Manifest, tmp_path: Path, door: str
) -> None:
    older = older_scaffold(manifest, tmp_path / "older")
    solve_lab(manifest, kit_root(), older, "11.1")
    report = tmp_path / "report.json"
    run = cli("checkpoint", "11", door, str(older), "--json", str(report), "--timeout", "5")
    assert run.returncode == 1, run.stdout + run.stderr
    data = json.loads(report.read_text(encoding="utf-8"))
    assert data["flags"] == [] and "was edited" not in run.stdout, run.stdout
    assert "as the scaffold it began from made them, not edited" in run.stdout


OLD_CONTEXT = '''"""My context.py, from an older scaffold (no open_context yet)."""

import math

from .groups import group_interactions

MARGIN = 2


def _cheapest(costs):
    return min(costs) if costs else math.inf


def select_groups(groups, available, estimate_tokens):
    """Mine."""
    return _cheapest([available])


def build_context(path, **options):
    """Lab 11.3."""
    raise LabNotImplemented("11.3", "build_context")
'''


def test_carrying_keeps_what_the_kit_gives_and_what_the_learner_wrote(kit: Path) -> None:
    starter = (kit / "starters" / "11-context.py").read_text(encoding="utf-8")
    carried = carry(OLD_CONTEXT, starter, {"select_groups", "build_context"}, "context.py")
    assert carried is not None
    text = carried.text
    assert carried.labs == ("select_groups",), "build_context was not written: the new stub"
    assert carried.added == ("group_interactions", "MARGIN", "_cheapest"), "math: the kit's"
    assert "def open_context(" in text and "class Opening" in text, "the kit's given code"
    assert "    return _cheapest([available])\n" in text
    assert text.count("def select_groups(") == 1 and text.count("def build_context(") == 1
    assert "def _cheapest(costs):" in text and "MARGIN = 2" in text
    assert text.index("from .groups import group_interactions") < text.index("def select_groups(")
    assert '"""Lab 11.3."""' not in text, "the stub keeps the new scaffold's words"
    compile(text, "context.py", "exec")
    assert carry("def broken(:\n", starter, set(), "context.py") is None


def test_practice_from_an_older_workspace_moves_its_lab_code_and_keeps_the_kits(
    manifest: Manifest, tmp_path: Path
) -> None:
    """Before, the docs said to move the four lab files into a fresh workspace: an older
    summary.py without the given ``summary_to_json`` then cost its labs (the kit's modules import
    it). ``practice 11 NEW --from OLD`` moves the lab code and keeps what the kit gives."""
    old = older_scaffold(manifest, tmp_path / "older")
    solve_lab(manifest, kit_root(), old, "11.1")
    summary = old / "pi_course" / "summary.py"
    text = summary.read_text(encoding="utf-8")
    start = text.index("def summary_to_json(")
    summary.write_text(text[:start] + text[text.index("\ndef ", start + 1) + 1 :], "utf-8")
    new = tmp_path / "fresh"
    run = cli("practice", "11", str(new), "--from", str(old))
    assert run.returncode == 0, run.stdout + run.stderr
    said = "pi_course/summary.py: your parse_summary, parse_compaction_entry moved in"
    assert said in run.stdout, run.stdout
    moved = (new / "pi_course" / "summary.py").read_text(encoding="utf-8")
    assert "def summary_to_json(" in moved
    graded = cli("checkpoint", "11", "--practice", str(new), "--lab", "11.1", "--timeout", "5")
    assert graded.returncode == 0, graded.stdout + graded.stderr
    notes, flags = _snapshot(manifest, new)
    assert flags == [] and not any("has no" in note for note in notes), notes
