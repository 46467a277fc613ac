"""The chapter contract: a parent's files inherited, defaults, and the checks on the kit's files,
each error naming the field (docs/chapters.md)."""

from __future__ import annotations

import json
import re
import shutil
from dataclasses import fields, replace
from pathlib import Path

import pytest

from course.harness.kit import kit_root
from course.harness.manifest import (
    CHAPTER_ROOTS,
    DEFAULT_NOTEBOOKS,
    Card,
    Manifest,
    ManifestError,
    available_chapters,
    checked_manifest,
    load_manifest,
    parse_manifest,
    with_parents,
)
from course.tools.contract import contract_problems, probe_problems
from course.tools.maintainer import main as course_kit

CARD = "\n".join(
    f'{field.name} = "{field.name} text"'
    for field in fields(Card)
    if field.name != "teaching_files"
)


def chapter(number: str, parent: str | None = None, *, learner: str = "") -> str:
    """A small chapter's manifest: one lab on one learner file of its own."""
    learner = learner or f"pkg/mod{number}.py"
    inherits = f'parent = "{parent}"\n' if parent else ""
    return f"""
chapter = "{number}"
{inherits}title = "Chapter {number}"
package = "pkg"
reference = "course"
focused_tests = "tests/chapter{number}/test_it.py"

[card]
teaching_files = ["course/mod{number}.py"]
{CARD}

[[labs]]
id = "{number}.1"
title = "the lab"
tests = 1
files = ["{learner}"]
heading = "Lab {number}.1"
notebook = "{number}-1.ipynb"
select = "lab_{number}_1"
goal = "a goal"
section = "a section"
hints = ["idea", "strategy", "steps"]

[[labs.functions]]
name = "mod{number}.solve"
todo = "solve it"

[[workspace]]
path = "{learner}"
starter = "starters/{number}-mod.py"
reference = "course/mod{number}.py"
role = "learner"

[[workspace]]
path = "tests/chapter{number}/test_it.py"
starter = "tests/chapter{number}/test_it.py"
role = "test"
"""


def read(number: str, parent: str | None = None, **options: str) -> Manifest:
    return parse_manifest(chapter(number, parent, **options), f"ch{number}/chapter.toml")


def test_a_child_inherits_its_parents_files_the_learner_files_given() -> None:
    parent, child = with_parents([read("11"), read("12", "11")])
    assert parent.files == read("11").files
    inherited = {file.path: file for file in child.files}
    given = inherited["pkg/mod11.py"]
    assert (given.role, given.starter, given.reference) == (
        "given",
        "course/mod11.py",
        "course/mod11.py",
    )
    assert "tests/chapter11/test_it.py" not in inherited, "the parent's tests stay the parent's"
    assert [file.path for file in child.files] == [
        "pkg/mod11.py",
        "pkg/mod12.py",
        "tests/chapter12/test_it.py",
    ]


def test_a_parent_of_a_parent_is_inherited_whatever_the_order() -> None:
    grandchild, _, _ = with_parents([read("13", "12"), read("12", "11"), read("11")])
    roles = {file.path: file.role for file in grandchild.files}
    assert roles == {
        "pkg/mod11.py": "given",
        "pkg/mod12.py": "given",
        "pkg/mod13.py": "learner",
        "tests/chapter13/test_it.py": "test",
    }


def test_a_path_the_child_lists_is_the_childs() -> None:
    _, child = with_parents([read("11"), read("12", "11", learner="pkg/mod11.py")])
    mine = [file for file in child.files if file.path == "pkg/mod11.py"]
    assert [(file.role, file.reference) for file in mine] == [("learner", "course/mod12.py")]


@pytest.mark.parametrize(
    ("manifests", "message"),
    [
        ([("12", "10"), ("11", None)], "ch12/chapter.toml: parent: no chapter '10' to inherit"),
        ([("12", "12")], "ch12/chapter.toml: parent: a cycle (12 -> 12)"),
        ([("12", "13"), ("13", "12")], "ch13/chapter.toml: parent: a cycle (12 -> 13 -> 12)"),
    ],
)
def test_an_unknown_parent_or_a_cycle_names_the_parent_field(
    manifests: list[tuple[str, str | None]], message: str
) -> None:
    with pytest.raises(ManifestError, match=re.escape(message)):
        with_parents([read(number, parent) for number, parent in manifests])


def test_a_child_of_another_package_names_the_package_field() -> None:
    child = parse_manifest(chapter("12", "11").replace('"pkg"', '"other"'), "ch12/chapter.toml")
    with pytest.raises(ManifestError, match=r"ch12/chapter.toml: package: must be 'pkg'"):
        with_parents([read("11"), child])


def test_the_parent_must_be_a_chapter_id() -> None:
    text = chapter("12").replace('chapter = "12"', 'chapter = "12"\nparent = 11')
    with pytest.raises(ManifestError, match=r"parent: must be a non-empty string, got 11"):
        parse_manifest(text, "ch12/chapter.toml")


def test_optional_fields_take_their_defaults() -> None:
    manifest = read("12")
    assert manifest.default_workspace == "practice-12"
    assert manifest.notebooks == DEFAULT_NOTEBOOKS
    assert (manifest.parent, manifest.probes, manifest.probe_seed, manifest.review) == (
        None,
        None,
        0,
        None,
    )
    lab = manifest.labs[0]
    assert (lab.optional, lab.points, lab.test_file) == (False, 1, manifest.focused_tests)
    assert manifest.files[1].reference == manifest.files[1].starter
    assert not manifest.files[1].optional


REQUIRED = ["chapter", "title", "package", "reference", "focused_tests"]


@pytest.mark.parametrize("field", REQUIRED)
def test_each_required_field_is_named_when_missing(field: str) -> None:
    text = re.sub(rf"(?m)^{field} = .*\n", "", chapter("12"), count=1)
    with pytest.raises(ManifestError, match=rf"ch12/chapter.toml: {field}: missing field"):
        parse_manifest(text, "ch12/chapter.toml")


@pytest.mark.parametrize(
    ("table", "problem"),
    [
        ("[card]", "card: missing field"),
        ("[[labs]]", "labs: must be a non-empty array of tables"),
        ("[[workspace]]", "workspace: missing field"),
    ],
)
def test_each_required_table_is_named_when_missing(table: str, problem: str) -> None:
    blocks = re.split(r"(?m)^(?=\[)", chapter("12"))
    text = "".join(block for block in blocks if not block.startswith(table))
    with pytest.raises(ManifestError, match=rf"ch12/chapter.toml: {re.escape(problem)}"):
        parse_manifest(text, "ch12/chapter.toml")


# ------------------------------------------------------------------ the checks on the kit's files


def small_kit(root: Path, probes: str | None = None) -> Manifest:
    """A kit holding every file of chapter 12's manifest (and ``probes`` as its probe module)."""
    text = chapter("12")
    if probes is not None:
        text = text.replace('reference = "course"', 'reference = "course"\nprobes = "probes12.py"')
        (root / "probes12.py").write_text(probes, encoding="utf-8")
    manifest = parse_manifest(text, "ch12/chapter.toml")
    paths = [f.starter for f in manifest.files] + [f.reference for f in manifest.files]
    paths += [f"{folder}/12-1.ipynb" for folder in manifest.notebooks.values()]
    for path in [*paths, *manifest.card.teaching_files]:
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_text("", encoding="utf-8")
    return manifest


PROBES = "def cases(seed, labs):\n    return []\n\ndef evaluate(package, case):\n    return 0\n"


def test_a_complete_small_kit_meets_the_contract(tmp_path: Path) -> None:
    assert contract_problems(small_kit(tmp_path, PROBES), tmp_path) == []


def test_a_labs_notebook_missing_in_one_edition_names_the_field(tmp_path: Path) -> None:
    manifest = small_kit(tmp_path)
    (tmp_path / "notebooks" / "zh" / "12-1.ipynb").unlink()
    assert contract_problems(manifest, tmp_path) == [
        "ch12/chapter.toml: labs[0].notebook: no zh notebook 'notebooks/zh/12-1.ipynb' in the kit"
    ]


def test_another_notebook_missing_names_the_field(tmp_path: Path) -> None:
    manifest = replace(small_kit(tmp_path), other_notebooks=("12-0.ipynb",))
    (tmp_path / "notebooks" / "12-0.ipynb").write_text("", encoding="utf-8")
    assert contract_problems(manifest, tmp_path) == [
        "ch12/chapter.toml: other_notebooks[0]: no zh notebook 'notebooks/zh/12-0.ipynb' in the kit"
    ]


def test_a_missing_starter_names_its_workspace_file(tmp_path: Path) -> None:
    manifest = small_kit(tmp_path)
    (tmp_path / "starters" / "12-mod.py").unlink()
    assert contract_problems(manifest, tmp_path) == [
        "ch12/chapter.toml: workspace 'pkg/mod12.py' starter: no file 'starters/12-mod.py' in "
        "the kit"
    ]


def test_a_missing_probe_module_names_the_probes_field(tmp_path: Path) -> None:
    manifest = small_kit(tmp_path, PROBES)
    (tmp_path / "probes12.py").unlink()
    assert contract_problems(manifest, tmp_path) == [
        "ch12/chapter.toml: probes: no probe module 'probes12.py' in the kit"
    ]


def test_a_probe_module_without_the_interface_names_the_probes_field(tmp_path: Path) -> None:
    broken = "def cases(seed):\n    return []\n\ndef summarize(package):\n    return []\n"
    assert contract_problems(small_kit(tmp_path, broken), tmp_path) == [
        "ch12/chapter.toml: probes: probes12.py cases must take 2 arguments: cases(seed, labs)",
        "ch12/chapter.toml: probes: probes12.py defines no top-level function "
        "evaluate(package, case)",
        "ch12/chapter.toml: probes: probes12.py summarize must take 2 arguments: "
        "summarize(package, case)",
    ]


@pytest.mark.parametrize(
    ("source", "problems"),
    [
        (PROBES, []),
        (PROBES + "def summarize(package, case, width=60):\n    return []\n", []),
        (PROBES.replace("(seed, labs)", "(*args)"), []),
        (PROBES.replace("(seed, labs)", "(seed, labs, *, fast)"), ["cases must take 2"]),
        ("def cases(", ["is not valid Python (line 1"]),
        ("from course.locale import N_\nimport json\n" + PROBES, []),
        ("import hypothesis\n" + PROBES, ["imports hypothesis at its top level"]),
        ("from course.harness import kit\n" + PROBES, ["imports course.harness at its top"]),
        ("try:\n    import numpy\nexcept ImportError:\n    pass\n" + PROBES, ["numpy"]),
        ("if TYPE_CHECKING:\n    import hypothesis\n" + PROBES, []),
        (PROBES + "def later():\n    import hypothesis\n", []),
    ],
)
def test_the_probe_interface_is_read_from_the_source(source: str, problems: list[str]) -> None:
    found = probe_problems(source)
    assert len(found) == len(problems)
    assert all(p in f for p, f in zip(problems, found, strict=True))


def test_every_chapter_of_the_kit_meets_the_contract() -> None:
    kit = kit_root()
    for number in available_chapters():
        assert contract_problems(load_manifest(number), kit) == []


def test_course_kit_chapters_checks_every_chapter(capsys: pytest.CaptureFixture[str]) -> None:
    assert course_kit(["chapters"]) == 0
    assert "meet the contract" in capsys.readouterr().out


def test_a_chapter_found_elsewhere_inherits_a_built_in_parent(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "ch98").mkdir()
    text = chapter("98", "11").replace('package = "pkg"', 'package = "pi_course"')
    (tmp_path / "ch98" / "chapter.toml").write_text(text.replace("pkg/", "pi_course/"), "utf-8")
    monkeypatch.setenv(CHAPTER_ROOTS, str(tmp_path))
    eleven, child = load_manifest("11"), load_manifest("98")
    assert child.parent == "11"
    modules = [f for f in eleven.files if f.role != "test"]
    inherited = child.files[: len(modules)]
    assert [f.path for f in inherited] == [f.path for f in modules]
    assert [f.path for f in child.files_with_role("test")] == ["tests/chapter98/test_it.py"]
    learner = {f.path: f.reference for f in eleven.files_with_role("learner")}
    assert {f.path: f.starter for f in inherited if f.path in learner} == learner
    assert all(f.role == "given" for f in inherited if f.path in learner)
    assert [f.path for f in child.files_with_role("learner")] == ["pi_course/mod98.py"]


def test_course_kit_chapters_names_what_a_chapter_lacks(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "ch98").mkdir()
    (tmp_path / "ch98" / "chapter.toml").write_text(chapter("98"), "utf-8")
    monkeypatch.setenv(CHAPTER_ROOTS, str(tmp_path))
    assert course_kit(["chapters"]) == 1
    err = capsys.readouterr().err
    assert "ch98/chapter.toml: labs[0].notebook: no en notebook 'notebooks/98-1.ipynb'" in err
    assert "ch98/chapter.toml: workspace 'pkg/mod98.py' starter: no file" in err


# ------------------------------------------------------------------ a chapter's folder, anywhere


def chapter_copy(root: Path) -> Path:
    """The test chapter 12 copied to ``root/ch12`` (outside the kit), no compiled catalog."""
    source = kit_root() / "tests" / "chapters" / "ch12"
    shutil.copytree(source, root / "ch12", ignore=shutil.ignore_patterns("__pycache__", "*.mo"))
    return root / "ch12"


def edit(path: Path, old: str, new: str) -> None:
    text = path.read_text(encoding="utf-8")
    assert old in text, old
    path.write_text(text.replace(old, new, 1), encoding="utf-8")


def chapters_said(capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    status = course_kit(["chapters"])
    return status, capsys.readouterr().err


def test_a_chapters_paths_are_read_from_its_folder_never_the_kits(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """The conftest a chapter names (``tests/conftest.py``) is its folder's: where the folder
    lacks it, the check says so, and the kit's own ``tests/conftest.py`` never stands in."""
    folder = chapter_copy(tmp_path)
    monkeypatch.setenv(CHAPTER_ROOTS, str(tmp_path))
    conftest = next(f for f in load_manifest("12").files if f.path.endswith("conftest.py"))
    assert conftest.starter == f"{folder}/tests/conftest.py"
    assert chapters_said(capsys) == (0, "")
    (folder / "tests" / "conftest.py").unlink()
    assert (kit_root() / "tests" / "conftest.py").is_file()
    status, said = chapters_said(capsys)
    assert status == 1
    assert (
        f"{folder}/chapter.toml: workspace 'tests/chapter12/conftest.py' starter: no file "
        "'tests/conftest.py' in the chapter's folder"
    ) in said


def test_a_file_linked_out_of_the_folder_is_named(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = chapter_copy(tmp_path / "elsewhere")
    (folder / "tests" / "conftest.py").unlink()
    (folder / "tests" / "conftest.py").symlink_to(kit_root() / "tests" / "conftest.py")
    monkeypatch.setenv(CHAPTER_ROOTS, str(tmp_path / "elsewhere"))
    status, said = chapters_said(capsys)
    assert status == 1
    outside = kit_root() / "tests" / "conftest.py"
    assert (
        f"workspace 'tests/chapter12/conftest.py' starter: 'tests/conftest.py' is {outside}, "
        "outside the chapter's folder (a link?)"
    ) in said


def test_only_a_built_in_chapter_may_write_its_paths_from_the_kit(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = chapter_copy(tmp_path)
    edit(folder / "chapter.toml", 'title = "Token estimation"', 'paths = "kit"\ntitle = "T"')
    monkeypatch.setenv(CHAPTER_ROOTS, str(tmp_path))
    said = f'{folder}/chapter.toml: paths: must be "chapter" for a chapter found through'
    with pytest.raises(ManifestError, match=re.escape(said)):
        load_manifest("12")
    monkeypatch.delenv(CHAPTER_ROOTS)
    assert load_manifest("11").paths == "kit"


@pytest.mark.parametrize(
    ("old", "new", "problem"),
    [
        ('probes = "probes.py"', 'probes = "../probes.py"', "probes: must be a relative path"),
        ('reference = "tokens.py"', 'reference = "/tmp/tokens.py"', "reference: must be a rel"),
        ('path = "pi_course/tokens.py"', 'path = "../tokens.py"', "inside the workspace"),
        ('teaching_files = ["tokens.py"]', 'teaching_files = ["../x.py"]', "teaching_files[0]"),
        ("probe_seed = 12", 'probe_seed = 12\nnotebooks = { en = ".." }', "notebooks.en: must"),
    ],
)
def test_a_path_out_of_its_place_names_the_field(old: str, new: str, problem: str) -> None:
    text = (kit_root() / "tests" / "chapters" / "ch12" / "chapter.toml").read_text("utf-8")
    assert old in text
    with pytest.raises(ManifestError, match=re.escape(problem)):
        parse_manifest(text.replace(old, new, 1), "ch12/chapter.toml")


def test_every_bad_field_is_named_at_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """``course-kit chapters`` names each problem of a manifest, not the first alone, and the
    problems of the other chapters' files as well."""
    folder = chapter_copy(tmp_path)
    manifest = folder / "chapter.toml"
    edit(manifest, "tests = 3", "tests = 0")
    edit(manifest, 'select = "lab_12_2"', 'select = "lab_12_2"\nmood = "sunny"')
    edit(manifest, 'role = "test"', 'role = "tests"')
    monkeypatch.setenv(CHAPTER_ROOTS, str(tmp_path))
    _, problems = checked_manifest(manifest.read_text("utf-8"), "ch12/chapter.toml")
    assert [problem.partition(": ")[2].partition(":")[0] for problem in problems] == [
        "labs[0].tests",
        "labs[1].mood",
        "workspace[1].role",
    ], problems
    with pytest.raises(ManifestError, match=re.escape("labs[0].tests")):
        parse_manifest(manifest.read_text("utf-8"), "ch12/chapter.toml")  # a command: the first
    status, said = chapters_said(capsys)
    assert status == 1
    for field in ("labs[0].tests", "labs[1].mood: unknown field", "workspace[1].role"):
        assert f"{folder}/chapter.toml: {field}" in said, field
    assert "chapters: 3 problem(s) to fix" in said


def test_a_stray_notebook_source_is_named(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = chapter_copy(tmp_path)
    shutil.copy(folder / "notebooks" / "12-token-estimation.md", folder / "notebooks" / "x.md")
    monkeypatch.setenv(CHAPTER_ROOTS, str(tmp_path))
    status, said = chapters_said(capsys)
    assert status == 1
    assert f"notebook_sources: {folder}/notebooks/x.md: x.ipynb is not a notebook of" in said


def test_a_babel_pattern_that_finds_nothing_is_named(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """A catalog whose pattern finds no file would hold none of its messages, silently (a
    pattern written from the kit, in a folder outside it)."""
    folder = chapter_copy(tmp_path)
    edit(folder / "babel.cfg", "[lesson: tokens.py]", "[lesson: tests/chapters/ch12/tokens.py]")
    monkeypatch.setenv(CHAPTER_ROOTS, str(tmp_path))
    status, said = chapters_said(capsys)
    assert status == 1
    assert (
        f"{folder}/babel.cfg: [tests/chapters/ch12/tokens.py] finds no file in the chapter's folder"
    ) in said


@pytest.mark.parametrize(
    ("shown", "named"),
    [
        ("Lab 12.1 · Count a message's tokens from its characters", None),  # the lab's heading
        ("Lab 12.1  character estimate  3/3 tests · 20/20 cases", "Lab 12.1  character estimate"),
    ],
)
def test_zh_outputs_stored_before_the_translation_are_named(
    shown: str,
    named: str | None,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """A zh notebook whose stored outputs show English its catalog translates (a long message,
    or a lab's line with its title) was stored before the translation: nbval would fail its
    cells, and the check says to refresh it."""
    folder = chapter_copy(tmp_path)
    monkeypatch.setenv(CHAPTER_ROOTS, str(tmp_path))
    notebook = folder / "notebooks" / "zh" / "12-token-estimation.ipynb"
    data = json.loads(notebook.read_text(encoding="utf-8"))
    code = next(cell for cell in data["cells"] if cell["cell_type"] == "code")
    code["outputs"].append({"name": "stdout", "output_type": "stream", "text": [shown]})
    english = named or shown
    notebook.write_text(json.dumps(data, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    status, said = chapters_said(capsys)
    assert status == 1
    assert (
        f"notebooks.zh: notebooks/zh/12-token-estimation.ipynb's stored outputs show {english!r} "
        f"in English, which its catalog translates: run `course-kit nbrefresh {notebook}`"
    ) in said


def test_a_section_may_head_each_edition_and_a_door_shows_its_own() -> None:
    from course.harness.editions import in_edition
    from course.locale import set_edition

    text = (kit_root() / "tests" / "chapters" / "ch12" / "chapter.toml").read_text("utf-8")
    manifest = parse_manifest(text, "ch12/chapter.toml")
    shown = {}
    try:
        for edition in ("en", "zh"):
            set_edition(edition)
            shown[edition] = in_edition(manifest).labs[0].section
    finally:
        set_edition(None)
    assert shown == {"en": "Estimating tokens by characters", "zh": "用字符数估算 token"}
    one = text.replace(
        'section = { en = "Estimating tokens by characters", zh = "用字符数估算 token" }',
        'section = "用字符数估算 token"',
    )
    assert parse_manifest(one, "ch12/chapter.toml").labs[0].in_edition("en").section == (
        "用字符数估算 token"
    ), "one heading: the same in every edition"
    for wrong in ('{ fr = "Estimer" }', "{ en = 3 }", "{}"):
        bad = text.replace(
            '{ en = "Estimating tokens by characters", zh = "用字符数估算 token" }', wrong
        )
        with pytest.raises(ManifestError, match=re.escape("labs[0].section: must be a heading")):
            parse_manifest(bad, "ch12/chapter.toml")
