"""A Chinese learner's files (their own and the given ones): the kit's code, with docstrings and
stub words in Chinese."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from course.grading.safefs import Tree
from course.grading.snapshot import workspace_snapshot
from course.harness.docstrings import docstrings, localized
from course.harness.kit import kit_root, read_source
from course.harness.manifest import Manifest
from course.harness.workspace import create_workspace
from course.locale.english import english_words


def code_only(source: str) -> str:
    """The AST of ``source`` with every lone string statement emptied."""
    tree = ast.parse(source)
    for node in ast.walk(tree):
        if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant):
            node.value.value = ""
    return ast.dump(tree)


@pytest.fixture(scope="module")
def workspaces(tmp_path_factory: pytest.TempPathFactory, manifest: Manifest) -> dict[str, Path]:
    made = {}
    for edition in ("en", "zh"):
        made[edition] = tmp_path_factory.mktemp(edition) / "ws"
        create_workspace(manifest, kit_root(), made[edition], edition)
    return made


def test_the_english_workspace_holds_the_starters_as_they_are(
    workspaces: dict[str, Path], manifest: Manifest
) -> None:
    for file in manifest.files:
        if file.role == "test":
            continue
        written = (workspaces["en"] / file.path).read_bytes()
        assert written == read_source(kit_root(), file.starter), file.path


def test_a_zh_learner_file_is_the_starters_code_read_in_chinese(
    workspaces: dict[str, Path], manifest: Manifest
) -> None:
    for file in manifest.files_with_role("learner"):
        written = (workspaces["zh"] / file.path).read_text("utf-8")
        assert "尚未实现" not in written  # the stub's words, not the runtime message
        assert "LabNotImplemented(" in written


@pytest.mark.parametrize("role", ["learner", "given"])
def test_every_file_a_learner_reads_is_the_kits_code_with_chinese_docstrings(
    workspaces: dict[str, Path], manifest: Manifest, role: str
) -> None:
    files = [f for f in manifest.files if f.role == role and f.path.endswith(".py")]
    assert files
    for file in files:
        starter = read_source(kit_root(), file.starter).decode("utf-8")
        written = (workspaces["zh"] / file.path).read_text("utf-8")
        compile(written, file.path, "exec")
        assert code_only(written) == code_only(starter), f"{file.path}: the code changed"
        english = [(line, w) for line, text in docstrings(written) for w in english_words(text)]
        assert not english, f"{file.path}: English left in its docstrings: {english[:5]}"


def test_localized_keeps_the_shape_of_a_docstring() -> None:
    source = 'def f():\n    """One line.\n\n    More.\n    """\n    return 1\n'
    texts = {"One line.\n\nMore.": "一行。\n\n更多。"}
    out = localized(source, lambda text: texts.get(text, text))
    assert out == 'def f():\n    """一行。\n\n    更多。\n    """\n    return 1\n'


def test_localized_counts_a_lines_offsets_in_bytes() -> None:
    """ast's column offsets are UTF-8 bytes: a line already holding Chinese is cut right."""
    source = 'def f():\n    """Say ``数组``."""\n    return 1\n'
    out = localized(source, lambda text: "说“数组”。" if text.startswith("Say") else text)
    assert out == 'def f():\n    """说“数组”。"""\n    return 1\n'


def test_localized_leaves_what_it_cannot_hold() -> None:
    source = 'X = 1\n"""A constant."""\n'
    assert localized(source, lambda text: text) == source
    assert localized(source, lambda text: 'has """ inside') == source
    assert localized(source, lambda text: "单行") == 'X = 1\n"""单行"""\n'


def test_stub_words_stay_for_the_edition_that_raises() -> None:
    """A stub's title and to-do are msgids: ``LabNotImplemented`` translates them when it is
    raised, so ``--lang en`` in a zh workspace still reads English."""
    source = 'raise LabNotImplemented("11.1", "compaction entry", "f", "the to-do")\n'
    assert localized(source, lambda text: "译文") == source


def test_the_grader_takes_a_zh_workspaces_given_modules_as_the_kits_own(
    workspaces: dict[str, Path], manifest: Manifest
) -> None:
    snapshot = workspace_snapshot(manifest, kit_root(), Tree(workspaces["zh"]))
    assert snapshot.flags == () and snapshot.notes == ()


def test_an_edited_given_module_of_a_zh_workspace_is_still_noted(
    manifest: Manifest, tmp_path: Path
) -> None:
    root = tmp_path / "zh"
    create_workspace(manifest, kit_root(), root, "zh")
    fields = root / "pi_course" / "fields.py"
    fields.write_text(fields.read_text("utf-8") + "\nEXTRA = 1\n", "utf-8")
    snapshot = workspace_snapshot(manifest, kit_root(), Tree(root))
    assert snapshot.flags == ("edited given files",), snapshot.notes
