"""What the grader keeps in the kit's cache between runs: the catalog of focused tests and the
drawn probe cases. Each is served only for the exact bytes it was made from, and a kept file
that is not right is made again, never trusted."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import pytest

from course.grading.roster import RosterOptions, grade_submissions
from course.grading.verdict import probes
from course.grading.verdict.engine import GradingOptions
from course.grading.verdict.kitcache import kept_catalog
from course.harness.catalog import kit_catalog, read_catalog
from course.harness.manifest import Manifest
from course.sandboxed.probecases import case_size

ONE_TEST = b"""
import pytest

@pytest.mark.lab("11.1")
def test_one():
    pass
"""
TWO_TESTS = (
    ONE_TEST
    + b"""
@pytest.mark.lab("11.2")
@pytest.mark.parametrize("n", [1, 2, 3])
def test_two(n):
    pass
"""
)
LABS = ("11.1", "11.2")


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An empty kit cache of this test's own."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    return tmp_path / "xdg" / "course-kit"


def kept_files(cache: Path, pattern: str) -> list[Path]:
    return sorted(cache.glob(pattern))


# --------------------------------------------------------------------------- the catalog


def test_a_kept_catalog_is_the_catalog_read_from_the_files(cache: Path) -> None:
    files = {"tests/test_x.py": TWO_TESTS}
    first = kept_catalog(files, LABS)
    assert len(kept_files(cache, "catalog-*.json")) == 1
    again = kept_catalog(files, LABS)
    expected = read_catalog(files, LABS)
    assert (first, again) == (expected, expected)


def test_the_kit_s_catalog_is_the_same_kept_or_read(
    cache: Path, manifest: Manifest, kit: Path
) -> None:
    read = kit_catalog(manifest, kit)
    assert kit_catalog(manifest, kit, kept_catalog) == read  # made and kept
    assert kit_catalog(manifest, kit, kept_catalog) == read  # read back


def test_a_changed_test_file_is_catalogued_again_not_served_from_the_cache(cache: Path) -> None:
    kept_catalog({"tests/test_x.py": ONE_TEST}, LABS)
    changed = kept_catalog({"tests/test_x.py": TWO_TESTS}, LABS)
    assert changed == read_catalog({"tests/test_x.py": TWO_TESTS}, LABS)
    assert [test.function for test in changed.tests] == ["test_one", "test_two"]


def test_other_labs_are_catalogued_again(cache: Path) -> None:
    """A test's lab is checked against the labs: a catalog kept for others is not theirs."""
    files = {"tests/test_x.py": TWO_TESTS}
    kept_catalog(files, LABS)
    with pytest.raises(ValueError, match="not a lab"):
        kept_catalog(files, ("11.1",))


@pytest.mark.parametrize(
    "kept",
    [
        b"not json",
        b'{"key": "another", "tests": []}',
        b'{"tests": []}',
        b'{"key": "KEY", "tests": [{"file": "tests/test_x.py", "function": "test_forged"}]}',
        b'{"key": "KEY", "tests": [], "extra": 1}',
    ],
    ids=["garbage", "another key", "no key", "a test missing fields", "an unknown field"],
)
def test_a_kept_catalog_that_is_not_right_is_read_again(cache: Path, kept: bytes) -> None:
    files = {"tests/test_x.py": TWO_TESTS}
    kept_catalog(files, LABS)
    [path] = kept_files(cache, "catalog-*.json")
    key = path.stem.removeprefix("catalog-")
    path.write_bytes(kept.replace(b"KEY", key.encode()))
    assert kept_catalog(files, LABS) == read_catalog(files, LABS)


# --------------------------------------------------------------------------- the probe cases


@pytest.fixture
def small_draw(manifest: Manifest, monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """``probes.draw`` made quick: three cases of two labs (the list counts the draws)."""
    draws: list[int] = []

    def draw(manifest: Manifest, kit: Path, seed: int) -> probes.ProbeSet:
        draws.append(seed)
        cases = [
            {"id": "11.1#000", "lab": "11.1", "function": "f", "args": {"text": "数据"}},
            {"id": "11.1#001", "lab": "11.1", "function": "f", "args": {"n": 1.5}},
            {"id": "11.2#000", "lab": "11.2", "function": "g", "args": {}},
        ]
        expected = {"11.1#000": {"value": 1}, "11.1#001": {"value": 2}, "11.2#000": {"value": 3}}
        inputs = {"11.1#000": ("text: 数据",)}
        return probes._probe_set(manifest, seed, cases, expected, inputs)

    monkeypatch.setattr(probes, "draw", draw)
    return draws


def written_cases(probe_set: probes.ProbeSet, root: Path) -> list[dict[str, Any]]:
    """The cases file ``write_cases`` lays in a graded copy, read back."""
    data: list[dict[str, Any]] = json.loads(probes.write_cases(probe_set, root).read_bytes())
    return data


def test_a_probe_set_read_from_the_cache_is_the_one_drawn(
    cache: Path, small_draw: list[int], manifest: Manifest, kit: Path, tmp_path: Path
) -> None:
    drawn = probes.prepare(manifest, kit, manifest.labs, 7)
    kept = probes.prepare(manifest, kit, manifest.labs, 7)
    assert small_draw == [7], "the second prepare reads the cache"
    assert drawn == kept
    assert written_cases(kept, tmp_path) == list(drawn.cases)
    assert probes.write_cases(kept, tmp_path).read_bytes() == drawn.cases_file
    assert [kept.size(case) for case in kept.cases] == list(map(case_size, drawn.cases))


def test_each_seed_is_kept_apart(
    cache: Path, small_draw: list[int], manifest: Manifest, kit: Path
) -> None:
    probes.prepare(manifest, kit, manifest.labs, 7)
    probes.prepare(manifest, kit, manifest.labs, 8)
    assert small_draw == [7, 8]


def test_a_set_cut_to_some_labs_writes_only_their_cases(
    cache: Path, small_draw: list[int], manifest: Manifest, kit: Path, tmp_path: Path
) -> None:
    probes.prepare(manifest, kit, manifest.labs, 7)
    kept = probes.prepare(manifest, kit, [manifest.lab("11.2")], 7)
    assert written_cases(kept, tmp_path) == [
        {"id": "11.2#000", "lab": "11.2", "function": "g", "args": {}}
    ]


def test_a_set_with_audit_cases_writes_only_the_shipped_ones(
    cache: Path, small_draw: list[int], manifest: Manifest, kit: Path, tmp_path: Path
) -> None:
    """Issue 53: the graded copy's cases file held the audit's cases, their ids naming the
    seed (``11.1#000@8``), for every process of the run to read; they now go only to the
    driver processes that ask them, on their standard input."""
    probes.prepare(manifest, kit, manifest.labs, 7)
    kept = probes.prepare(manifest, kit, manifest.labs, 7)
    audit = probes.prepare(manifest, kit, manifest.labs, 8)
    assert kept is not None and audit is not None
    asked = probes.with_audit_cases(kept, audit)
    ids = [case["id"] for case in written_cases(asked, tmp_path)]
    assert ids == ["11.1#000", "11.1#001", "11.2#000"]
    joined = [str(case["id"]) for case in asked.cases]
    assert joined == [
        "11.1#000", "11.1#001", "11.1#000@audit", "11.1#001@audit", "11.2#000", "11.2#000@audit"
    ]  # fmt: skip


def test_a_roster_joins_its_two_sets_once_for_every_workspace(
    cache: Path, small_draw: list[int], manifest: Manifest, kit: Path
) -> None:
    kept = probes.prepare(manifest, kit, manifest.labs, 7)
    audit = probes.prepare(manifest, kit, manifest.labs, 8)
    other = probes.prepare(manifest, kit, manifest.labs, 9)
    assert kept is not None and audit is not None and other is not None
    asked = probes.with_audit_cases(kept, audit)
    assert probes.with_audit_cases(kept, audit) is asked
    other_asked = probes.with_audit_cases(kept, other)
    assert other_asked is not asked
    ids = [case["id"] for case in other_asked.cases]
    assert ids == [
        "11.1#000", "11.1#001", "11.1#000@audit", "11.1#001@audit", "11.2#000", "11.2#000@audit"
    ], "no seed in an id"  # fmt: skip


@pytest.mark.parametrize(
    "kept",
    [
        b"not json",
        b'[{"id": "11.1#000", "lab": "11.1"}]',
        b'{"id": "11.1#000"}',
        b'[{"id": "11.1#000", "lab": "11.1", "function": "f", "args": {"text": "forged"}}]',
    ],
    ids=["garbage", "cases the answers do not name", "not a list", "other cases"],
)
def test_kept_cases_that_are_not_right_are_drawn_again(
    cache: Path, small_draw: list[int], manifest: Manifest, kit: Path, kept: bytes
) -> None:
    drawn = probes.prepare(manifest, kit, manifest.labs, 7)
    [path] = kept_files(cache, "probes-*.cases.json")
    path.write_bytes(kept)
    again = probes.prepare(manifest, kit, manifest.labs, 7)
    assert small_draw == [7, 7]
    assert again == drawn


@pytest.mark.parametrize(
    "change",
    [{"seed": 8}, {"sizes": {}}, {"cases_sha256": "0" * 64}, {"expected": []}],
    ids=["another seed", "no sizes", "another cases file", "answers not a table"],
)
def test_kept_answers_that_are_not_right_are_drawn_again(
    cache: Path, small_draw: list[int], manifest: Manifest, kit: Path, change: dict[str, Any]
) -> None:
    drawn = probes.prepare(manifest, kit, manifest.labs, 7)
    [path] = kept_files(cache, "probes-*.answers.json")
    data = json.loads(path.read_bytes())
    path.write_text(json.dumps(data | change))
    again = probes.prepare(manifest, kit, manifest.labs, 7)
    assert small_draw == [7, 7]
    assert again == drawn


def test_an_instructor_s_audit_seed_is_drawn_once_then_kept(
    cache: Path, small_draw: list[int], manifest: Manifest, kit: Path, tmp_path: Path
) -> None:
    options = RosterOptions(grading=GradingOptions(sandbox="off"), audit_seed=9)
    runs = [
        grade_submissions(manifest, kit, tmp_path, [], options, io.StringIO(), []) for _ in "ab"
    ]
    assert small_draw == [manifest.probe_seed, 9]
    assert [run.run["probes"]["audit"]["seed"] for run in runs] == [9, 9]


def test_a_run_without_an_assignment_seed_draws_its_own_and_never_keeps_it(
    cache: Path, small_draw: list[int], manifest: Manifest, kit: Path, tmp_path: Path
) -> None:
    """An autograder zip made before assignment files: each submission draws its own seed."""
    options = RosterOptions(grading=GradingOptions(sandbox="off"))
    runs = [
        grade_submissions(manifest, kit, tmp_path, [], options, io.StringIO(), []) for _ in "ab"
    ]
    seeds = [run.run["probes"]["audit"]["seed"] for run in runs]
    assert small_draw == [manifest.probe_seed, *seeds] and seeds[0] != seeds[1]
    assert len(kept_files(cache, "probes-*.answers.json")) == 1, "only the chapter's seed is kept"
