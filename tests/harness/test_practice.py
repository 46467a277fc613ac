"""``practice CHAPTER [DIR]``: the workspace layout, its marker, LEARNING.md and refusals."""

from __future__ import annotations

import shlex
import tomllib
from dataclasses import replace
from pathlib import Path

from harness_support import Check, MakeWorkspace, cli, replace_in

from course.harness.kit import chapter_fingerprints, digest, notebook_sources, read_source
from course.harness.learning import lab_command
from course.harness.manifest import Manifest
from course.harness.workspace import REUSE_REFUSED, WORKSPACE_NOTEBOOKS, workspace_layout
from course.sandboxed.commands import shell_commands
from course.sandboxed.marker import MARKER


def test_practice_lays_out_the_manifest_files_and_says_what_to_run(
    manifest: Manifest, kit: Path, tmp_path: Path
) -> None:
    target = tmp_path / "alice"
    run = cli("practice", manifest.chapter, str(target))
    assert run.returncode == 0, run.stderr
    for file in manifest.files:
        assert (target / file.path).read_bytes() == read_source(kit, file.starter), file.path
    for notebook in notebook_sources(manifest, kit):
        assert (target / notebook).read_bytes() == read_source(kit, notebook)
    marker = tomllib.loads((target / MARKER).read_text(encoding="utf-8"))
    parent = chapter_fingerprints(manifest, kit).starter
    assert marker["chapter"] == manifest.chapter and marker["package"] == manifest.package
    assert marker["starter_fingerprint"] == parent
    assert marker["checksums"] == {  # every shipped file, as its scaffold made it
        f.path: digest(read_source(kit, f.starter)) for f in manifest.files if f.role != "learner"
    }
    first = lab_command(manifest, "11.1", commands=shell_commands())
    assert f"cd {shlex.quote(str(target.resolve()))} && {first}" in run.stdout
    assert parent[:12] in run.stdout


def test_a_workspace_gets_only_its_chapters_notebooks(manifest: Manifest, kit: Path) -> None:
    """The labs' notebooks and the manifest's ``other_notebooks``, never the rest of the
    edition's folder (which another chapter's notebooks share)."""
    labs_only = replace(manifest, other_notebooks=())
    for chapter in (manifest, labs_only):
        for edition in chapter.notebooks:
            files = workspace_layout(chapter, kit, edition)
            given = sorted(path for path in files if path.startswith(f"{WORKSPACE_NOTEBOOKS}/"))
            expected = {lab.notebook for lab in chapter.labs} | set(chapter.other_notebooks)
            assert given == [f"{WORKSPACE_NOTEBOOKS}/{name}" for name in sorted(expected)]
    assert "11-0-chapter.ipynb" in manifest.other_notebooks
    assert "11-0-chapter.ipynb" not in labs_only.notebook_names


def test_learning_md_has_the_first_steps_every_lab_command_and_the_fingerprint(
    manifest: Manifest, kit: Path, make_workspace: MakeWorkspace
) -> None:
    text = (make_workspace() / "LEARNING.md").read_text(encoding="utf-8")
    for part in (
        manifest.card.know_before,
        manifest.card.first_step,
        manifest.card.first_red_light,
    ):
        assert part in text
    for lab in manifest.labs:
        assert f"Lab {lab.id} · {lab.title}" in text
        assert f"`checkpoint {manifest.chapter} --lab {lab.id}`" in text
        assert f"-k {lab.select}`" in text
    assert chapter_fingerprints(manifest, kit).starter in text


def test_a_used_directory_is_refused(manifest: Manifest, tmp_path: Path) -> None:
    target = tmp_path / "reused"
    assert cli("practice", "11", str(target)).returncode == 0
    learner_code = target / "pi_course" / "context.py"
    before = learner_code.read_bytes()
    again = cli("practice", "11", str(target))
    assert again.returncode == 2
    assert REUSE_REFUSED in again.stderr
    assert learner_code.read_bytes() == before, "a refused run must not touch the workspace"
    stray = tmp_path / "stray"
    stray.mkdir()
    (stray / "notes.txt").write_text("mine")
    assert cli("practice", "11", str(stray)).returncode == 2
    empty = tmp_path / "empty"
    empty.mkdir()
    assert cli("practice", "11", str(empty)).returncode == 0


def test_without_a_directory_each_run_gets_a_fresh_one(manifest: Manifest, tmp_path: Path) -> None:
    for expected in (manifest.default_workspace, f"{manifest.default_workspace}-2"):
        run = cli("practice", "11", cwd=tmp_path)
        assert run.returncode == 0, run.stderr
        assert (tmp_path / expected / MARKER).is_file()
        checkpoint = shell_commands().checkpoint
        assert f"cd {shlex.quote(str(tmp_path / expected))} && {checkpoint} 11" in run.stdout


def test_a_workspace_grades_its_own_code_and_cannot_import_the_reference(
    manifest: Manifest, check: Check, make_workspace: MakeWorkspace
) -> None:
    workspace = make_workspace("cheat")
    replace_in(
        workspace / "pi_course" / "groups.py",
        "from .labs import LabNotImplemented\n",
        "from .labs import LabNotImplemented\nfrom course.groups import group_interactions\n",
    )
    result = check(workspace, labs=["11.2"])
    assert [t.status for t in result.tests] == ["error"] * 3
    assert all("grades its own code" in t.message for t in result.tests), result.tests[0]


def test_options_go_before_or_after_the_directory(tmp_path: Path) -> None:
    from course.cli.practice import parser

    for argv in (["11", "--lang", "zh", "DIR"], ["11", "DIR", "--lang", "zh"]):
        args = parser().parse_intermixed_args(argv)
        assert (args.chapter, args.directory, args.lang) == ("11", "DIR", "zh")
    made = cli("practice", "11", "--lang", "zh", str(tmp_path / "zh"))
    assert made.returncode == 0, made.stderr
    assert (tmp_path / "zh" / "notebooks" / "11-0-chapter.ipynb").is_file()
