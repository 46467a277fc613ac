"""Reading a roster as it arrives: archives unpacked safely, names, duplicates, git commits."""

from __future__ import annotations

import contextlib
import os
import tarfile
import tempfile
import zipfile
from pathlib import Path

import pytest
from harness_support import MakeWorkspace
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from packing import (
    committed,
    git,
    tar_folder,
    tar_special,
    zip_folder,
    zip_members,
    zip_symlink,
)

from course.grading.intake.archives import (
    DEFAULT_CAPS,
    Budget,
    Caps,
    MemberKind,
    Refused,
    member_parts,
    unpack,
)
from course.grading.intake.folder import (
    GRADABLE,
    Many,
    NamesError,
    NothingToGrade,
    Submission,
    learner_name,
    mark_older,
    names_pattern,
    opened,
    survey,
    with_checkout,
)
from course.grading.intake.gitrepo import Checkout, blob_id, checkout, index_blobs, nearest_checkout
from course.grading.intake.safefs import Tree
from course.grading.records.gradebook import ungraded_row
from course.sandboxed.marker import MARKER, WorkspaceError

CANVAS = r"(?P<learner>[^_]+)_(?:late_)?\d+_\d+_"
SMALL = Caps(total_bytes=4096, files=5, ratio=10.0, ratio_floor=1024)


def unpacked_files(root: Path) -> dict[str, bytes]:
    return {
        path.relative_to(root).as_posix(): path.read_bytes()
        for path in root.rglob("*")
        if path.is_file()
    }


def refusal(archive: Path, tmp_path: Path, caps: Caps = DEFAULT_CAPS) -> str:
    target = tmp_path / "target"
    target.mkdir(parents=True)
    with pytest.raises(Refused) as refused:
        unpack(archive, target, caps)
    return str(refused.value)


# Archives


@pytest.mark.parametrize(
    ("name", "why"),
    [
        ("../evil.py", "climbs out with '..'"),
        ("pi_course/../../evil.py", "climbs out with '..'"),
        ("/etc/cron.d/evil", "an absolute path"),
        ("C:/evil", "an absolute path"),
        ("..\\evil.py", "a backslash"),
    ],
)
def test_a_zip_slip_is_refused_and_writes_nothing(tmp_path: Path, name: str, why: str) -> None:
    archive = zip_members(tmp_path / "slip.zip", {"ok.txt": b"fine", name: b"owned"})
    assert why in refusal(archive, tmp_path)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["slip.zip", "target"]


@pytest.mark.parametrize(
    ("kind", "shown"),
    [
        (tarfile.SYMTYPE, "a symbolic link"),
        (tarfile.LNKTYPE, "a hard link"),
        (tarfile.CHRTYPE, "a device"),
        (tarfile.FIFOTYPE, "a FIFO"),
    ],
)
def test_links_devices_and_fifos_in_a_tar_are_refused(
    tmp_path: Path, kind: bytes, shown: str
) -> None:
    archive = tar_special(tmp_path / "special.tar.gz", "pi_course/summary.py", kind, "/etc/passwd")
    assert refusal(archive, tmp_path).startswith(f"'pi_course/summary.py': {shown}")
    assert not (tmp_path / "target" / "pi_course" / "summary.py").exists()


def test_a_symbolic_link_in_a_zip_is_refused(tmp_path: Path) -> None:
    archive = zip_symlink(tmp_path / "link.zip", "pi_course", "/home")
    assert "'pi_course': a symbolic link" in refusal(archive, tmp_path)
    assert list((tmp_path / "target").iterdir()) == []


def test_caps_on_files_size_and_compression_ratio(tmp_path: Path) -> None:
    many = zip_members(tmp_path / "many.zip", {f"f{i}": b"" for i in range(6)})
    assert refusal(many, tmp_path / "a", SMALL) == "more than 5 files"
    big = zip_members(tmp_path / "big.zip", {"noise": os.urandom(5000)})
    assert "'noise' declares more than 4096 bytes unpacked in all" in refusal(
        big, tmp_path / "b", SMALL
    )
    bomb = zip_members(tmp_path / "bomb.zip", {"zeros": bytes(20 * 1024 * 1024)})
    why = refusal(bomb, tmp_path / "c")
    assert why.startswith("'zeros' declares 20971520 bytes from") and "(a zip bomb?)" in why
    assert list((tmp_path / "c" / "target").iterdir()) == [], "refused from the headers"


def test_a_tar_bomb_is_refused_from_its_headers(tmp_path: Path) -> None:
    source = tmp_path / "zeros"
    source.write_bytes(bytes(20 * 1024 * 1024))
    archive = tmp_path / "bomb.tar.gz"
    with tarfile.open(archive, "w:gz") as out:
        out.add(source, "zeros")
    assert "a compression ratio above 100" in refusal(archive, tmp_path / "a")


def test_a_tar_of_dot_unpacks_into_the_target(
    make_workspace: MakeWorkspace, tmp_path: Path
) -> None:
    """``tar -czf ada.tgz -C practice-11 .`` names its members ``.``, ``./pi_course``…"""
    workspace = make_workspace("practice-11")
    with tarfile.open(tmp_path / "ada.tgz", "w:gz") as out:
        out.add(workspace, ".")
    target = tmp_path / "target"
    target.mkdir()
    unpack(tmp_path / "ada.tgz", target)
    assert (target / MARKER).read_bytes() == (workspace / MARKER).read_bytes()
    assert "'.': a file without a name" in refusal(
        zip_members(tmp_path / "nameless.zip", {".": b"x"}), tmp_path / "a"
    )


def test_damaged_and_unknown_archives_say_what_they_are(tmp_path: Path) -> None:
    (tmp_path / "junk.zip").write_bytes(b"this is not a zip")
    assert refusal(tmp_path / "junk.zip", tmp_path / "a").startswith(
        "not a readable zip archive (BadZipFile"
    )
    (tmp_path / "junk.tgz").write_bytes(b"nor a tar")
    assert "not a readable tar archive" in refusal(tmp_path / "junk.tgz", tmp_path / "b")
    (tmp_path / "work.rar").write_bytes(b"Rar!")
    assert ".rar archives are not read" in refusal(tmp_path / "work.rar", tmp_path / "c")


def test_a_member_twice_is_refused(tmp_path: Path) -> None:
    archive = tmp_path / "twice.zip"
    zip_members(archive, {"a.py": b"1"})
    with zipfile.ZipFile(archive, "a") as out, pytest.warns(UserWarning, match="Duplicate"):
        out.writestr("a.py", b"2")
    assert "'a.py': appears twice in the archive" in refusal(archive, tmp_path)


NAMES = (
    st.lists(
        st.sampled_from(["a", "b", "..", ".", "", "c.py", "/", "\\", "C:"]), min_size=1, max_size=5
    )
    .map("/".join)
    .filter(bool)
)


@given(names=st.lists(NAMES, min_size=1, max_size=4))
@settings(max_examples=60, suppress_health_check=[HealthCheck.function_scoped_fixture])
def test_whatever_the_member_names_nothing_is_written_outside_the_target(
    names: list[str], tmp_path: Path
) -> None:
    with tempfile.TemporaryDirectory(dir=tmp_path) as base:
        archive = zip_members(Path(base) / "any.zip", {name: b"x" for name in names})
        target = Path(base) / "target"
        target.mkdir()
        with contextlib.suppress(Refused):
            unpack(archive, target)
        assert sorted(p.name for p in Path(base).iterdir()) == ["any.zip", "target"]
        for path in target.rglob("*"):
            assert path.resolve().is_relative_to(target.resolve())
            assert not path.is_symlink()


PARTS = st.sampled_from(["pi_course", "tests", "notes", "x.py", "é.md"])
TREES = st.dictionaries(
    st.lists(PARTS, min_size=1, max_size=3).map(lambda parts: "/".join(parts) + ".txt"),
    st.binary(max_size=300),
    max_size=6,
)


@given(files=TREES)
@settings(max_examples=40, suppress_health_check=[HealthCheck.function_scoped_fixture])
def test_what_is_packed_is_what_is_unpacked(files: dict[str, bytes], tmp_path: Path) -> None:
    with tempfile.TemporaryDirectory(dir=tmp_path) as base:
        source = Path(base) / "source"
        for name, data in files.items():
            (source / name).parent.mkdir(parents=True, exist_ok=True)
            (source / name).write_bytes(data)
        source.mkdir(exist_ok=True)
        for pack, suffix in ((zip_folder, ".zip"), (tar_folder, ".tar.gz")):
            target = Path(base) / f"target{suffix}.d"
            target.mkdir()
            unpack(pack(source, Path(base) / f"packed{suffix}"), target)
            assert unpacked_files(target) == files


def refusals(
    members: list[tuple[str, MemberKind, int]], packed_bytes: int, caps: Caps = DEFAULT_CAPS
) -> str:
    """Why an archive of ``members`` is refused by its headers alone (``""``: it is not)."""
    budget = Budget(caps, packed_bytes)
    try:
        for member in members:
            budget.admit(*member)
    except Refused as error:
        return str(error)
    return ""


def test_header_refusals_are_a_pure_check_of_the_members() -> None:
    fine = [("w/a.py", "file", 10), ("w", "directory", 0)]
    assert refusals(fine, packed_bytes=20) == ""
    assert "a symbolic link" in refusals([*fine, ("w/b", "symbolic link", 0)], 20)
    assert refusals([("z", "file", 2 * 1024 * 1024)], packed_bytes=1000).endswith("(a zip bomb?)")
    assert member_parts("./w/./a.py") == ("w", "a.py")


# Names and duplicates


def test_a_learner_is_named_by_the_entry_or_by_the_names_pattern() -> None:
    assert learner_name("ada.tar.gz", None) == ("ada", True)
    assert learner_name("ada", None) == ("ada", True)
    canvas = names_pattern(CANVAS)
    assert learner_name("lovelaceada_12345_67890_practice.zip", canvas) == ("lovelaceada", True)
    assert learner_name("lovelaceada_late_12345_67890_p.tgz", canvas) == ("lovelaceada", True)
    assert learner_name("ben.zip", canvas) == ("ben", False)
    assert learner_name("_12_34_empty-name.zip", names_pattern(r"(?P<learner>[^_]*)_")) == (
        "_12_34_empty-name",
        False,
    )


def test_a_names_pattern_must_compile_and_have_a_learner_group() -> None:
    with pytest.raises(NamesError, match="is not a regular expression"):
        names_pattern("(unclosed")
    with pytest.raises(NamesError, match=r"has no \(\?P<learner>...\) group"):
        names_pattern(r"(\w+)_\d+")


def test_the_newest_submission_of_a_learner_is_graded_and_the_others_noted() -> None:
    rows = [
        Submission("ada", "workspace", entry="ada", below=("ada",), mtime=100.0),
        Submission("ada", "archive", entry="ada.zip", mtime=200.0),
        Submission("ada", "archive", entry="ada-1.zip", mtime=200.0),
        Submission("ben", "archive", entry="ben.zip", mtime=50.0),
        Submission("ben", "symlink", "a link", entry="ben-link"),
    ]
    marked = mark_older(rows)
    assert [m.newer for m in marked] == ["ada.zip", "", "ada.zip", "", ""]
    assert marked[1].older == ("ada", "ada-1.zip")
    assert marked[0].why == "an older submission of ada: ada.zip is graded instead"
    assert marked[3:] == rows[3:], "one submission (and a link) stays as it was"


@given(
    st.lists(
        st.tuples(st.sampled_from(["ada", "ben", "cy"]), st.integers(0, 3)), max_size=8, unique=True
    )
)
def test_exactly_one_submission_per_learner_is_graded(found: list[tuple[str, int]]) -> None:
    rows = [
        Submission(name, "archive", entry=f"{name}-{n}.zip", mtime=float(n)) for name, n in found
    ]
    marked = mark_older(rows)
    graded = [m for m in marked if not m.newer]
    assert sorted(m.learner for m in graded) == sorted({name for name, _ in found})
    for row in graded:
        assert row.mtime == max(r.mtime for r in rows if r.learner == row.learner)


# The roster folder


def test_every_entry_of_the_roster_is_a_row_or_skipped_with_a_reason(
    make_workspace: MakeWorkspace, tmp_path: Path
) -> None:
    roster = make_workspace("ada").parent
    workspace = roster / "ada"
    zip_folder(workspace, roster / "ben.zip")
    tar_folder(workspace, roster / "cy.tgz", "practice-11/")
    (roster / "dee.7z").write_bytes(b"7z")
    (roster / "notes").mkdir()
    (roster / "notes.txt").write_text("grade by Friday\n")
    (roster / ".DS_Store").write_bytes(b"\0")
    (roster / "gradebook.csv").write_text("learner\n")
    (roster / "eve").symlink_to("ada")
    os.mkfifo(roster / "pipe")
    found = survey(roster)
    rows = {row.entry: row for row in found.submissions}
    skipped = {skip.name: skip.why for skip in found.skipped}
    assert sorted([*rows, *skipped]) == sorted(os.listdir(roster)), "each entry, once"
    assert {entry: row.kind for entry, row in rows.items()} == {
        "ada": "workspace",
        "ben.zip": "archive",
        "cy.tgz": "archive",
        "dee.7z": "refused",
        "eve": "symlink",
        "notes": "skipped",
    }
    assert [rows[e].source for e in ("ada", "ben.zip", "cy.tgz")] == ["folder", "zip", "tgz"]
    assert ".7z archives are not read" in rows["dee.7z"].why
    assert skipped == {
        ".DS_Store": "hidden",
        "gradebook.csv": "a gradebook (replaced when the gradebook is written, never read)",
        "notes.txt": "a file that is not a submission (not a folder, nor an archive: .zip, "
        ".tar.gz, .tgz, .tar, .tar.bz2, .tbz2, .tar.xz, .txz)",
        "pipe": "not a file or folder (other)",
    }
    closing = found.closing(len(found.submissions))
    assert closing[0] == "Not in the gradebook (4):"
    assert closing[1].split() == [".DS_Store", "hidden"]
    assert closing[-1] == "Roster: 6 row(s) in the gradebook, 4 entries not in it (listed above)"


def _lay_out(roster: Path, name: str, kind: str) -> None:
    path = roster / name
    if kind == "workspace":
        (path / "practice").mkdir(parents=True)
        (path / "practice" / MARKER).write_text("")
    elif kind == "folder":
        path.mkdir()
    elif kind == "link":
        path.symlink_to("/")
    else:
        path.write_bytes(b"")


ROSTER_ENTRIES = st.dictionaries(
    st.sampled_from(
        [
            "ada",
            "ada.zip",
            "ben.tgz",
            "ben.tar.gz",
            "cy.rar",
            "notes.txt",
            ".hidden",
            "gradebook.csv",
        ]
    ),
    st.sampled_from(["workspace", "folder", "link", "file"]),
    max_size=8,
)


@given(entries=ROSTER_ENTRIES)
@settings(max_examples=60, suppress_health_check=[HealthCheck.function_scoped_fixture])
def test_no_entry_of_a_roster_is_left_out_or_counted_twice(
    entries: dict[str, str], tmp_path: Path
) -> None:
    with tempfile.TemporaryDirectory(dir=tmp_path) as base:
        roster = Path(base)
        for name, kind in entries.items():
            _lay_out(roster, name, kind)
        found = survey(roster)
        rows = {row.entry.split("/")[0] for row in found.submissions}
        skipped = [skip.name for skip in found.skipped]
        assert sorted([*rows, *skipped]) == sorted(entries)
        assert all(skip.why for skip in found.skipped)
        assert all(row.why for row in found.submissions if row.kind not in GRADABLE)


def test_an_archive_is_unpacked_privately_found_when_wrapped_and_removed(
    make_workspace: MakeWorkspace, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    workspace = make_workspace("practice-11")
    roster = tmp_path / "roster"
    roster.mkdir()
    zip_folder(workspace.parent, roster / "ada.zip")
    temporary = tmp_path / "tmp"
    temporary.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(temporary))
    [ada] = survey(roster).submissions
    with opened(roster, ada) as tree:
        assert tree.below == ("practice-11",)
        assert tree.read(MARKER) == (workspace / MARKER).read_bytes()
        [unpacked] = temporary.iterdir()
        assert oct(unpacked.stat().st_mode & 0o777) == "0o700"
    assert list(temporary.iterdir()) == [], "nothing left on disk"


def test_an_archive_refused_or_without_one_workspace_leaves_nothing(
    make_workspace: MakeWorkspace, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    first, second = make_workspace("one"), make_workspace("two")
    roster = tmp_path / "roster"
    roster.mkdir()
    zip_members(roster / "empty.zip", {"README.md": b"hi"})
    zip_members(roster / "slip.zip", {"../x": b"x"})
    with tarfile.open(roster / "both.tar.gz", "w:gz") as out:
        out.add(first, "one")
        out.add(second, "two")
    temporary = tmp_path / "tmp"
    temporary.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(temporary))
    expected = {  # refused only when unsafe; else not graded, saying why
        "both.tar.gz": (Many, "both.tar.gz: holds 2 workspaces (one, two); one archive is one "),
        "empty.zip": (
            NothingToGrade,
            f"empty.zip: no lab files and no practice workspace (no {MARKER}): README.md",
        ),
        "slip.zip": (Refused, "slip.zip: refused: '../x': a path that climbs out with '..'"),
    }
    for row in survey(roster).submissions:
        kind, said = expected[row.entry]
        raises = pytest.raises(WorkspaceError if kind is not Refused else Refused)
        with raises as raised, opened(roster, row):
            pass
        assert type(raised.value) is kind and str(raised.value).startswith(said), raised.value
    assert list(temporary.iterdir()) == []


# Git repositories


def test_the_checked_out_commit_is_read_from_the_files(tmp_path: Path) -> None:
    repository = tmp_path / "ada"
    repository.mkdir()
    (repository / "a.py").write_text("x = 1\n")
    commit = committed(repository)
    assert checkout(Tree(repository)) == Checkout(commit, "main")
    git(repository, "pack-refs", "--all")
    assert not (repository / ".git/refs/heads/main").exists()
    assert checkout(Tree(repository)).commit == commit  # type: ignore[union-attr]
    git(repository, "checkout", "-q", "--detach")
    detached = checkout(Tree(repository))
    assert detached is not None and (detached.commit, detached.branch) == (commit, "")
    assert checkout(Tree(tmp_path)) is None


def test_a_hostile_repository_runs_nothing_and_says_what_is_wrong(tmp_path: Path) -> None:
    repository = tmp_path / "eve"
    repository.mkdir()
    (repository / "a.py").write_text("x = 1\n")
    committed(repository)
    witness = tmp_path / "ran"
    with (repository / ".git/config").open("a") as config:
        config.write(f"[core]\n\tfsmonitor = touch {witness}\n\tpager = touch {witness}\n")
    hook = repository / ".git/hooks/post-checkout"
    hook.write_text(f"#!/bin/sh\ntouch {witness}\n")
    hook.chmod(0o755)
    assert checkout(Tree(repository)) is not None
    assert not witness.exists()
    (repository / ".git/HEAD").write_text("ref: refs/../../../etc/passwd\n")
    assert "HEAD names an unusual ref" in checkout(Tree(repository)).problem  # type: ignore[union-attr]
    (repository / ".git/HEAD").unlink()
    (repository / ".git/HEAD").symlink_to("/etc/hostname")
    assert "a symbolic link" in checkout(Tree(repository)).problem  # type: ignore[union-attr]
    linked = tmp_path / "linked"
    linked.mkdir()
    (linked / ".git").write_text(f"gitdir: {repository / '.git'}\n")
    assert checkout(Tree(linked)) == Checkout(
        problem=".git is a file (a linked worktree or submodule), not read"
    )
    fresh = tmp_path / "fresh"
    fresh.mkdir()
    git(fresh, "init", "-q", "-b", "main")
    assert checkout(Tree(fresh)).problem == "main has no commit yet"  # type: ignore[union-attr]


def test_a_workspace_inside_a_repository_finds_its_commit(tmp_path: Path) -> None:
    repository = tmp_path / "roster" / "ada"
    (repository / "practice-11").mkdir(parents=True)
    (repository / "practice-11" / "a.py").write_text("x = 1\n")
    commit = committed(repository)
    found = nearest_checkout(Tree(tmp_path / "roster", ("ada", "practice-11")), top=1)
    assert found is not None and found.commit == commit
    assert nearest_checkout(Tree(tmp_path, ("roster", "ada", "practice-11")), top=3) is None


def _ls_files(repository: Path) -> dict[str, str]:
    """What ``git ls-files --stage`` says the index holds: path → blob id."""
    listed = git(repository, "ls-files", "--stage", "-z").strip("\0").split("\0")
    return {line.split("\t", 1)[1]: line.split()[1] for line in listed}


@pytest.mark.parametrize("version", ["2", "3", "4"])
def test_the_index_is_read_as_git_reads_it(tmp_path: Path, version: str) -> None:
    repository = tmp_path / "ada"
    (repository / "pi_course" / "deep").mkdir(parents=True)
    for name in ("a.py", "pi_course/summary.py", "pi_course/deep/é.py", "pi_course/z.py"):
        (repository / name).write_text(f"# {name}\n")
    committed(repository)
    (repository / "later.py").write_text("new\n")
    git(repository, "add", "--intent-to-add", "later.py")  # an extended entry (version 3)
    git(repository, "update-index", "--index-version", version)
    index = (repository / ".git" / "index").read_bytes()
    assert index_blobs(index) == _ls_files(repository)
    data = (repository / "a.py").read_bytes()
    assert blob_id(data) == git(repository, "hash-object", "a.py")
    with pytest.raises(ValueError, match="ends early"):
        index_blobs(index[:40])
    with pytest.raises(ValueError, match="not a git index"):
        index_blobs(b"PACK" + index[4:])


def test_files_changed_since_the_commit_are_named(tmp_path: Path) -> None:
    repository = tmp_path / "roster" / "ada"
    workspace = repository / "practice-11"
    (workspace / "pi_course").mkdir(parents=True)
    (workspace / "pi_course" / "summary.py").write_text("x = 1\n")
    (workspace / "pi_course" / "groups.py").write_text("y = 2\n")
    committed(repository)
    found = nearest_checkout(Tree(tmp_path / "roster", ("ada", "practice-11")), top=1)
    assert found is not None
    files = {"pi_course/summary.py": b"x = 1\n", "pi_course/groups.py": b"y = 2\n"}
    assert found.changed(files) == []
    edited = {**files, "pi_course/groups.py": b"y = 3\n", "pi_course/new.py": b""}
    assert found.changed(edited) == ["pi_course/groups.py", "pi_course/new.py"]


def test_archives_in_a_learners_folder_are_that_learners_submissions(
    make_workspace: MakeWorkspace, tmp_path: Path
) -> None:
    """Moodle hands each learner's upload over in a folder named after them."""
    workspace = make_workspace("practice-11")
    roster = tmp_path / "roster"
    folder = roster / "Ada Lovelace_4242_assignsubmission_file_"
    folder.mkdir(parents=True)
    zip_folder(workspace, folder / "practice.zip")
    tar_folder(workspace, folder / "practice-v2.tar.gz")
    os.utime(folder / "practice.zip", (1_000_000_000, 1_000_000_000))
    (folder / "readme.txt").write_text("my work\n")
    (roster / "empty").mkdir()
    moodle = names_pattern(r"(?P<learner>[^_]+)_\d+_assignsubmission_file_")
    rows = survey(roster, moodle).submissions
    assert [(r.learner, r.kind, r.entry, r.newer) for r in rows] == [
        ("Ada Lovelace", "archive", f"{folder.name}/practice-v2.tar.gz", ""),
        (
            "Ada Lovelace",
            "archive",
            f"{folder.name}/practice.zip",
            f"{folder.name}/practice-v2.tar.gz",
        ),
        ("empty", "skipped", "empty", ""),
    ]
    with opened(roster, rows[0]) as tree:
        assert tree.kind(MARKER) == "file"
    assert survey(roster, moodle).closing(3) == [
        "--names did not match 1 entry, each named by its whole name: empty",
        "Roster: 3 row(s) in the gradebook; no entry left out of it",
    ]


def test_a_rows_commit_and_why_none_is_known() -> None:
    folder = Submission("ada", "workspace", entry="ada", below=("ada",))
    row = ungraded_row("ada", "/roster/ada", (), "pending", "")
    unborn = with_checkout(
        row, Checkout(branch="main", problem="main has no commit yet"), folder, {}
    )
    assert (unborn.source, unborn.commit) == ("git", "")
    assert unborn.notes == ("a git repository whose commit is not known: main has no commit yet",)
    known = with_checkout(row, Checkout("a" * 40, "main", tracked={}), folder, {"x.py": b""})
    assert (known.commit, known.flags) == ("a" * 40, ("changed since the commit",))
    archived = Submission("ada", "archive", entry="ada.zip")
    assert with_checkout(row, Checkout("b" * 40), archived, {}).source == "zip"
    assert with_checkout(row, None, folder, {}) == row
