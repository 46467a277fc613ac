"""A Chinese learner's files (their own and the given ones): the kit's code, with docstrings and
stub words in Chinese."""

from __future__ import annotations

import ast
import itertools
from pathlib import Path

import pytest

from course.grading.intake.safefs import Tree
from course.grading.intake.snapshot import workspace_snapshot
from course.harness.docstrings import comments, docstrings, localized
from course.harness.hints import HINTS_FILE, labs_by_id, open_next_hint, read_hints
from course.harness.kit import kit_root, read_source
from course.harness.manifest import Manifest
from course.harness.workspace import create_workspace
from course.labs import stub_message
from course.locale import set_edition
from course.locale.english import english_words
from course.sandboxed.columns import columns
from course.sandboxed.marker import read_workspace


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


def test_a_zh_learner_file_says_above_each_stub_what_it_raises(
    workspaces: dict[str, Path], manifest: Manifest
) -> None:
    """The stub's words stay msgids (the edition that raises says them), and a comment above
    each ``raise`` says in Chinese what it raises; an English file needs none."""
    for file in manifest.files_with_role("learner"):
        written = (workspaces["zh"] / file.path).read_text("utf-8").splitlines()
        raises = [n for n, line in enumerate(written) if line.strip() == "raise LabNotImplemented("]
        assert raises, file.path
        for at in raises:
            above = itertools.takewhile(
                lambda line: line.strip().startswith("# "), reversed(written[:at])
            )
            said = "".join(line.strip().removeprefix("# ") for line in reversed(list(above)))
            args = [line.strip().strip('",') for line in written[at + 1 : at + 5]]
            wanted = stub_message(*args, edition="zh")
            assert said.replace(" ", "") == wanted.replace(" ", ""), (file.path, said, wanted)
            assert wanted.startswith(f"Lab {args[0]} ") and "尚未实现" in wanted, wanted
        english = (workspaces["en"] / file.path).read_text("utf-8")
        assert "# Lab " not in english


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


def test_every_comment_of_a_given_module_is_chinese(
    workspaces: dict[str, Path], manifest: Manifest
) -> None:
    """The given modules' comments through the catalog, as their docstrings (a tool's pragma
    stays as the tool reads it)."""
    files = [f for f in manifest.files_with_role("given") if f.path.endswith(".py")]
    read = {f.path: comments((workspaces["zh"] / f.path).read_text("utf-8")) for f in files}
    english = [
        (path, c.text) for path, found in read.items() for c in found if english_words(c.text)
    ]
    assert not english, english[:5]
    assert sum(map(len, read.values())) >= 13
    pragma = (workspaces["zh"] / "pi_course" / "logfile.py").read_text("utf-8")
    assert "# pragma: no cover" in pragma and "# type: ignore[assignment]" in pragma


def test_a_translated_comment_block_is_wrapped_again_at_its_column() -> None:
    source = "def f():\n    # One comment\n    # in two lines.\n    return 1  # inline\n"
    texts = {"One comment in two lines.": "一条" * 60, "inline": "行内"}
    out = localized(source, lambda text: texts.get(text, text)).splitlines()
    assert out[0] == "def f():" and out[-1] == "    return 1  # 行内"
    block = out[1:-1]
    assert len(block) == 3 and all(line.startswith("    # ") for line in block), block
    assert "".join(line[6:] for line in block) == "一条" * 60
    assert all(columns(line) <= 100 for line in block) and columns(block[0]) >= 98
    assert localized(source, lambda text: text) == source


def test_a_zh_workspaces_own_files_comment_in_chinese(
    workspaces: dict[str, Path], manifest: Manifest
) -> None:
    """The marker, pytest.ini and the hint record a zh workspace holds: comments in Chinese;
    what pytest and the kit read from them stays as it was."""
    root = workspaces["zh"]
    set_edition("zh")  # as a door in the workspace speaks (the hint door writes the record)
    try:
        open_next_hint(root, labs_by_id(manifest.labs), manifest.lab("11.2"))
    finally:
        set_edition(None)
    for name in (".course-workspace.toml", "pytest.ini", HINTS_FILE):
        text = (root / name).read_text("utf-8")
        said = [line[2:] for line in text.splitlines() if line.startswith("# ")]
        assert said and not english_words(" ".join(said).replace("hint()", " ")), (name, said)
    assert "lab(id): 聚焦测试所属的 Lab" in (root / "pytest.ini").read_text("utf-8")
    assert read_hints(root, labs_by_id(manifest.labs)) == {"11.2": 1}
    assert read_workspace(root).edition == "zh"
    english = (workspaces["en"] / "pytest.ini").read_text("utf-8")
    assert "# The focused tests need no plugin" in english
