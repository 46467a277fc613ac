"""One workspace graded: the pristine copy, what is noted about the workspace, the deadline."""

from __future__ import annotations

from pathlib import Path

from harness_support import MakeWorkspace

from course.grading.intake.safefs import Tree
from course.grading.intake.snapshot import workspace_snapshot
from course.grading.verdict import probes
from course.grading.verdict.engine import GradingOptions, grade, graded_files
from course.harness.kit import read_source
from course.harness.manifest import Manifest
from course.harness.report import render_probes
from course.harness.runner import Limits
from course.sandboxed.marker import MARKER


def test_the_graded_copy_holds_the_kits_files_and_only_the_learners_modules(
    manifest: Manifest, kit: Path, make_workspace: MakeWorkspace
) -> None:
    workspace = make_workspace("tampered")
    (workspace / "conftest.py").write_text("raise SystemExit\n")
    (workspace / "sitecustomize.py").write_text("raise SystemExit\n")
    (workspace / "pi_course" / "helpers.py").write_text("VALUE = 1\n")
    (workspace / "tests" / "chapter11" / "conftest.py").write_text("# mine\n")
    (workspace / "pi_course" / "fixtures.py").write_text("# mine\n")
    (workspace / "pi_course" / "summary.py").write_text("# my summary\n")
    snapshot = workspace_snapshot(manifest, kit, Tree(workspace))
    learner = {f.path for f in manifest.files_with_role("learner")}
    assert set(snapshot.learner) == learner
    files = graded_files(manifest, kit, snapshot.learner, None)
    shipped = {f.path for f in manifest.files}
    assert set(files) == shipped | {MARKER, "pytest.ini", str(manifest.probes)}
    assert files["pi_course/summary.py"] == b"# my summary\n"
    for file in manifest.files:
        if file.role != "learner":
            assert files[file.path] == read_source(kit, file.starter), file.path
    assert set(snapshot.flags) == {
        "edited test files",
        "edited given files",
        "files outside the curriculum",
    }
    strays = next(note for note in snapshot.notes if note.startswith("not graded"))
    assert strays.endswith("conftest.py, sitecustomize.py, pi_course/helpers.py")


def test_a_run_past_its_deadline_is_stopped_and_says_so(
    manifest: Manifest, kit: Path, make_workspace: MakeWorkspace, probe_set: probes.ProbeSet
) -> None:
    workspace = make_workspace("slow")
    with (workspace / "pi_course" / "summary.py").open("a", encoding="utf-8") as module:
        module.write("\nimport time\ntime.sleep(600)\n")
    graded = grade(
        manifest,
        kit,
        workspace_snapshot(manifest, kit, Tree(workspace)),
        manifest.required_labs,
        Limits(test_seconds=300.0),
        GradingOptions(probes=probe_set, deadline_seconds=3.0),
    )
    assert "grading took longer than 3s" in graded.result.problems
    assert graded.result.passed == 0 and not graded.result.ok
    assert all(lab.status in ("error", "timeout") for lab in graded.result.labs)


def test_the_probe_line_shows_each_lab_and_the_disagreements_behind_it(
    manifest: Manifest, kit: Path, make_workspace: MakeWorkspace, probe_set: probes.ProbeSet
) -> None:
    workspace = make_workspace("fresh")
    graded = grade(
        manifest,
        kit,
        workspace_snapshot(manifest, kit, Tree(workspace)),
        [manifest.lab("11.1")],
        Limits(test_seconds=10.0),
        GradingOptions(probes=probe_set),
    )
    [line] = render_probes(graded.result)
    cases = sum(case["lab"] == "11.1" for case in probe_set.cases)
    assert line == f"probes   11.1 0/{cases} agree with the reference (seed {probe_set.seed})"


def test_a_missing_or_linked_shipped_file_is_noted_not_fatal(
    manifest: Manifest, kit: Path, make_workspace: MakeWorkspace
) -> None:
    workspace = make_workspace("rearranged")
    (workspace / "tests" / "chapter11" / "conftest.py").unlink()
    (workspace / "pi_course" / "fixtures.py").unlink()
    (workspace / "pi_course" / "fixtures.py").symlink_to("/etc/hostname")
    notes = workspace_snapshot(manifest, kit, Tree(workspace)).notes
    assert (
        "tests/chapter11/conftest.py could not be read from the workspace "
        "(tests/chapter11/conftest.py: missing); graded with the kit's copy"
    ) in notes
    assert any(n.startswith("pi_course/fixtures.py could not be read") for n in notes), notes


def test_an_optional_file_left_out_is_no_edit_but_an_edited_one_is(
    manifest: Manifest, kit: Path, make_workspace: MakeWorkspace
) -> None:
    """The manifest's ``optional`` files (kit data the kit also carries) may be absent, as the
    zero-install site's workspaces are; their content is still the kit's to decide."""
    [optional] = [f for f in manifest.files if f.optional]
    workspace = make_workspace("optional")
    (workspace / optional.path).unlink()
    snapshot = workspace_snapshot(manifest, kit, Tree(workspace))
    assert not [n for n in snapshot.notes if optional.path in n], snapshot.notes
    (workspace / optional.path).write_text("{}\n", encoding="utf-8")
    snapshot = workspace_snapshot(manifest, kit, Tree(workspace))
    edited = f"{optional.path} was edited in the workspace; graded with the kit's copy"
    assert edited in snapshot.notes, snapshot.notes
