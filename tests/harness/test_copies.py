"""The roster's copy check: disguised copies are flagged, independent solutions never are."""

from __future__ import annotations

import ast
import itertools
from pathlib import Path

import pytest
from disguise import (
    AUTHORS,
    Pad,
    RenameHelpers,
    RenameLocals,
    Reorder,
    Sources,
    commented,
    disguised,
    lab_function_names,
    own_sources,
    reference_sources,
    rewrite,
)
from harness_support import MakeWorkspace
from hypothesis import given, settings
from hypothesis import strategies as st
from solutions import replace_function, solve_lab

from course.grading.classroom import (
    PAIR_FLOOR,
    REFERENCE_FLOOR,
    CopyReport,
    compare_class,
    containment,
    threshold,
    with_copy_flags,
)
from course.grading.copies import (
    FUNCTION_TOKENS,
    SOURCE_BYTES,
    Baseline,
    Prints,
    baseline,
    learner_prints,
)
from course.grading.gradebook import ungraded_row
from course.grading.safefs import Tree
from course.grading.snapshot import workspace_snapshot
from course.harness.manifest import Manifest


@pytest.fixture(scope="module")
def base(manifest: Manifest, kit: Path) -> Baseline:
    return baseline(manifest, kit)


def compare(base: Baseline, **sources: Sources) -> CopyReport:
    return compare_class(base, {name: learner_prints(base, s) for name, s in sources.items()})


def flagged(report: CopyReport) -> dict[str, list[str]]:
    """Flag kind and learners → the labs flagged."""
    found: dict[str, list[str]] = {}
    for flag in report.flags:
        found.setdefault("/".join((flag.kind, *flag.learners)), []).append(flag.lab)
    return found


def honest_class(manifest: Manifest) -> dict[str, Sources]:
    return {author: own_sources(manifest, author) for author in AUTHORS}


def every_lab(base: Baseline) -> list[str]:
    return [lab.id for lab in base.labs if lab.id in base.reference.labs]


def test_every_lab_has_code_to_compare(base: Baseline) -> None:
    assert every_lab(base) == [lab.id for lab in base.labs]


def test_independent_solutions_are_never_flagged(manifest: Manifest, base: Baseline) -> None:
    """Against the reference or each other, with a margin under each floor.

    The docstrings pin Lab 11.5's layout so tightly that the third solution, written from them
    alone, holds 0.75 of the reference's fingerprint there: the margin under the reference's
    floor is 0.05, not more; two honest solutions of Lab 11.1 share up to 0.3 of their prints."""
    report = compare(base, **honest_class(manifest))
    assert flagged(report) == {}
    for author, sources in honest_class(manifest).items():
        prints = learner_prints(base, sources)
        for lab, mine in prints.labs.items():
            score = containment(mine.hashes, base.reference.labs[lab].hashes)
            assert score < REFERENCE_FLOOR - 0.05, (author, lab, score)
            assert not set(mine.digests.items()) & set(base.reference.labs[lab].digests.items())
    prints = {author: learner_prints(base, s) for author, s in honest_class(manifest).items()}
    for one, other in itertools.combinations(prints, 2):
        for lab in prints[one].labs.keys() & prints[other].labs.keys():
            a, b = prints[one].labs[lab].hashes, prints[other].labs[lab].hashes
            assert len(a & b) / min(len(a), len(b)) < PAIR_FLOOR - 0.2, (one, other, lab)


@pytest.mark.parametrize(
    "change",
    ["rename locals", "rename helpers", "reorder", "pad", "comments", "all at once"],
)
def test_a_disguised_copy_of_the_reference_is_flagged_in_every_lab(
    manifest: Manifest, kit: Path, base: Baseline, change: str
) -> None:
    reference = reference_sources(manifest, kit)
    changes = {
        "rename locals": lambda s: rewrite(s, RenameLocals("mine_")),
        "rename helpers": lambda s: rewrite(s, RenameHelpers(lab_function_names(manifest))),
        "reorder": lambda s: rewrite(s, Reorder()),
        "pad": lambda s: rewrite(s, Pad()),
        "comments": commented,
        "all at once": lambda s: disguised(manifest, s),
    }
    copy = changes[change](reference)
    assert copy != reference
    report = compare(base, copy=copy, **honest_class(manifest))
    assert flagged(report) == {"reference/copy": every_lab(base)}
    assert all(flag.identical for flag in report.flags), "whole functions are the reference's"


def test_a_disguised_copy_of_a_classmate_is_flagged_as_a_pair(
    manifest: Manifest, base: Baseline
) -> None:
    honest = honest_class(manifest)
    report = compare(base, copy=disguised(manifest, honest["first"]), **honest)
    assert flagged(report) == {"pair/copy/first": every_lab(base)}
    assert [flag.id for flag in report.flags][:1] == ["pair/11.1/copy/first"]


def test_a_copy_of_part_of_a_lab_is_flagged_by_the_function_copied(
    manifest: Manifest, kit: Path, base: Baseline
) -> None:
    """select_groups from the reference, build_context the learner's own."""
    mine = own_sources(manifest, "second")
    path = "pi_course/context.py"
    donor = commented(rewrite(reference_sources(manifest, kit), RenameLocals(), Pad()))[path]
    mine[path] = replace_function(mine[path].decode(), donor.decode(), "select_groups").encode()
    report = compare(base, mine=mine, first=own_sources(manifest, "first"))
    assert [(f.id, f.identical) for f in report.flags] == [
        ("reference/11.3/mine", ("context.select_groups",))
    ]


def test_short_functions_written_like_the_reference_are_never_compared(
    manifest: Manifest, kit: Path, base: Baseline
) -> None:
    """About one way to write ``group_interactions`` or ``latest_compaction``: not a copy."""
    assert {"groups.group_interactions", "compaction.latest_compaction"} <= base.short
    mine = own_sources(manifest, "first")
    reference = reference_sources(manifest, kit)
    for module, name in (("groups", "group_interactions"), ("compaction", "latest_compaction")):
        path = f"pi_course/{module}.py"
        mine[path] = replace_function(mine[path].decode(), reference[path].decode(), name).encode()
    assert flagged(compare(base, mine=mine, second=own_sources(manifest, "second"))) == {}


NAMES = st.from_regex(r"[a-z][a-z0-9]{0,5}_", fullmatch=True)


@settings(max_examples=10, deadline=None)
@given(NAMES)
def test_local_names_never_change_a_fingerprint(prefix: str) -> None:
    from course.harness.kit import kit_root
    from course.harness.manifest import load_manifest

    manifest = load_manifest("11")
    base = baseline(manifest, kit_root())
    mine = own_sources(manifest, "second")
    assert learner_prints(base, rewrite(mine, RenameLocals(prefix))) == learner_prints(base, mine)


def test_a_huge_file_is_cut_and_said(manifest: Manifest, base: Baseline) -> None:
    mine = own_sources(manifest, "first")
    path = "pi_course/summary.py"
    padding = "".join(f"\n\ndef helper_{n}(x):\n    return x + {n}\n" for n in range(40_000))
    mine[path] = mine[path] + padding.encode()
    prints = learner_prints(base, mine)
    cut = [c for c in prints.cuts if c.path == path]
    assert [(c.limit, c.size) for c in cut] == [("bytes", len(mine[path]))]
    assert 0 < cut[0].kept <= SOURCE_BYTES
    assert prints.labs.keys() == learner_prints(base, own_sources(manifest, "first")).labs.keys()


def test_a_huge_function_is_cut_and_said(manifest: Manifest, base: Baseline) -> None:
    mine = own_sources(manifest, "first")
    path = "pi_course/context.py"
    tree = ast.parse(mine[path])
    function = next(
        n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == "select_groups"
    )
    literal = "(" + ", ".join(str(n) for n in range(FUNCTION_TOKENS)) + ",)"
    function.body.insert(0, ast.parse(f"table = {literal}").body[0])
    mine[path] = ast.unparse(tree).encode()
    assert len(mine[path]) < SOURCE_BYTES
    prints = learner_prints(base, mine)
    assert [(c.path, c.function, c.limit) for c in prints.cuts] == [
        (path, "select_groups", "function tokens")
    ]
    assert "context.select_groups" not in prints.labs["11.3"].digests


def test_the_threshold_follows_the_class_between_floor_and_ceiling() -> None:
    assert threshold([0.1, 0.1, 0.1, 0.1], 0.6, 0.8).at == 0.6
    spread = threshold([0.5, 0.55, 0.6, 0.5, 0.45], 0.6, 0.8)
    assert 0.6 < spread.at < 0.8, spread
    assert threshold([0.7, 0.75, 0.8, 0.3, 0.95], 0.6, 0.8).at == 0.8
    assert threshold([], 0.6, 0.8).at == 0.8


def test_the_gradebook_rows_and_report_carry_the_flags(
    manifest: Manifest, kit: Path, base: Baseline
) -> None:
    sources = {"ada": disguised(manifest, reference_sources(manifest, kit))}
    sources |= honest_class(manifest)
    rows = [
        ungraded_row(name, f"/class/{name}", base.labs, "passed", "") for name in sorted(sources)
    ]
    rows = [
        row.__class__(**{**row.__dict__, "prints": learner_prints(base, sources[row.learner])})
        for row in rows
    ]
    flagged_rows, report = with_copy_flags(base, rows)
    flags = {row.learner: row.flags for row in flagged_rows}
    assert flags["first"] == flags["second"] == flags["third"] == ()
    assert flags["ada"][0] == "copy of the reference? (Lab 11.1 1.00)"
    assert [f["id"] for f in report["flags"]] == [f"reference/{lab}/ada" for lab in every_lab(base)]
    assert set(report["labs"]) == set(every_lab(base))


def test_no_learner_door_notes_a_copy(
    manifest: Manifest, kit: Path, make_workspace: MakeWorkspace
) -> None:
    workspace = make_workspace("copies")
    solve_lab(manifest, kit, workspace, "11.3")
    snapshot = workspace_snapshot(manifest, kit, Tree(workspace))
    assert not [n for n in snapshot.notes if "reference" in n], snapshot.notes
    assert not [f for f in snapshot.flags if "reference" in f], snapshot.flags


def test_prints_are_equal_for_equal_code(manifest: Manifest, base: Baseline) -> None:
    """Deterministic: the same code gives the same fingerprint (a roster is reproducible)."""
    first = own_sources(manifest, "first")
    assert learner_prints(base, first) == learner_prints(base, dict(first))
    assert isinstance(learner_prints(base, {}), Prints)
    assert learner_prints(base, {}).labs == {}
