"""The roster's copy check: disguised copies are flagged, independent solutions never are."""

from __future__ import annotations

import ast
import itertools
from dataclasses import replace
from pathlib import Path

import pytest
from disguise import (
    AUTHORS,
    SCRIPTED,
    Pad,
    RenameHelpers,
    RenameLocals,
    Reorder,
    Sources,
    appended,
    commented,
    disguised,
    lab_function_names,
    own_sources,
    reference_sources,
    rewrite,
    scripted,
    starter_sources,
    wrapped,
)
from harness_support import Check, MakeWorkspace
from hypothesis import given, settings
from hypothesis import strategies as st
from solutions import replace_function, solve_lab

from course.grading.intake.safefs import Tree
from course.grading.intake.snapshot import workspace_snapshot
from course.grading.records import classroom
from course.grading.records.classroom import (
    PAIR_CEILING,
    PAIR_FLOOR,
    REFERENCE_CEILING,
    REFERENCE_FLOOR,
    STATEMENTS_COMPARED,
    CopyReport,
    compare_class,
    containment,
    threshold,
    unit_name,
    with_copy_flags,
)
from course.grading.records.copies import (
    FUNCTION_TOKENS,
    SOURCE_BYTES,
    Baseline,
    Prints,
    baseline,
    learner_prints,
)
from course.grading.records.gradebook import ungraded_row
from course.harness.manifest import Manifest
from course.locale import set_edition

NAMES = st.from_regex(r"[a-z][a-z0-9]{0,5}_", fullmatch=True)


@pytest.fixture(scope="module")
def base(manifest: Manifest, kit: Path) -> Baseline:
    return baseline(manifest, kit)


@pytest.fixture(scope="module")
def graded(manifest: Manifest, kit: Path) -> Baseline:
    """What a roster compares by default: the required labs and the learner files (9 units)."""
    return baseline(manifest, kit, tuple(manifest.required_labs))


def compare(base: Baseline, **sources: Sources) -> CopyReport:
    return compare_class(base, {name: learner_prints(base, s) for name, s in sources.items()})


def flagged(report: CopyReport) -> dict[str, list[str]]:
    """Flag kind and learners → the labs and learner files flagged."""
    found: dict[str, list[str]] = {}
    for flag in report.flags:
        found.setdefault("/".join((flag.kind, *flag.learners)), []).append(flag.lab)
    return found


def honest_class(manifest: Manifest) -> dict[str, Sources]:
    return {author: own_sources(manifest, author) for author in AUTHORS}


def every_lab(base: Baseline) -> list[str]:
    return [lab.id for lab in base.labs if lab.id in base.reference.labs]


def everywhere(base: Baseline) -> list[str]:
    """Every lab, then every learner file: what a whole copy is flagged in."""
    return every_lab(base) + list(base.files)


def test_every_lab_has_code_to_compare(base: Baseline) -> None:
    assert every_lab(base) == [lab.id for lab in base.labs]


def test_independent_solutions_are_never_flagged(manifest: Manifest, base: Baseline) -> None:
    """Against the reference or each other, with a margin under each floor.

    The docstrings pin Lab 11.5's layout so tightly that the third solution, written from them
    alone, holds 0.75 of the reference's fingerprint there: the margin under the reference's
    floor is 0.05, not more; two honest solutions of Lab 11.1 share up to 0.3 of their prints."""
    report = compare(base, **honest_class(manifest))
    assert flagged(report) == {}
    bare = replace(base, independent={}, solutions=())
    assert flagged(compare(bare, **honest_class(manifest))) == {}, "not for what they share"
    assert len(base.solutions) == len(AUTHORS) and any(base.independent.values())
    for author, sources in honest_class(manifest).items():
        prints = learner_prints(base, sources)
        for lab, mine in prints.labs.items():
            score = containment(mine.hashes, base.reference.labs[lab].hashes)
            assert score < REFERENCE_FLOOR - 0.05, (author, lab, score)
            assert not set(mine.digests.items()) & set(base.reference.labs[lab].digests.items())
        for unit in everywhere(base):
            given = base.scaffold.unit(unit)
            statements = base.reference.unit(unit).statements - given.statements if given else set()
            held = containment(prints.unit(unit).statements, frozenset(statements))
            assert held < REFERENCE_CEILING - 0.15, (author, unit, held)  # at most 7 of 9
    prints = {author: learner_prints(base, s) for author, s in honest_class(manifest).items()}
    for one, other in itertools.combinations(prints, 2):
        for lab in prints[one].labs.keys() & prints[other].labs.keys():
            a, b = prints[one].labs[lab].hashes, prints[other].labs[lab].hashes
            assert len(a & b) / min(len(a), len(b)) < PAIR_FLOOR - 0.2, (one, other, lab)
    for one, other in itertools.combinations(prints, 2):
        for unit in everywhere(base):  # statements as compared: neither given nor the reference's
            given = base.scaffold.unit(unit)
            known = base.reference.unit(unit).statements | (given.statements if given else set())
            a, b = (prints[name].unit(unit).statements - known for name in (one, other))
            if min(len(a), len(b)) >= STATEMENTS_COMPARED:
                share = len(a & b) / min(len(a), len(b))
                assert share < PAIR_CEILING - 0.2, (one, other, unit, share)  # at most 5 of 9


@pytest.mark.parametrize(
    "change",
    [
        "rename locals",
        "rename helpers",
        "reorder",
        "pad",
        "comments",
        "all at once",
        "renamed and wrapped",
        "appended below the starter",
        "disguised, wrapped and appended",
    ],
)
def test_a_disguised_copy_of_the_reference_is_flagged_in_every_lab(
    manifest: Manifest, kit: Path, base: Baseline, change: str
) -> None:
    """Renaming a lab function behind a one-line wrapper, or keeping the starter and appending
    the reference below it (Python runs the last ``def``), hides nothing."""
    reference = reference_sources(manifest, kit)
    changes = {
        "rename locals": lambda s: rewrite(s, RenameLocals("mine_")),
        "rename helpers": lambda s: rewrite(s, RenameHelpers(lab_function_names(manifest))),
        "reorder": lambda s: rewrite(s, Reorder()),
        "pad": lambda s: rewrite(s, Pad()),
        "comments": commented,
        "all at once": lambda s: disguised(manifest, s),
        "renamed and wrapped": lambda s: wrapped(manifest, s),
        "appended below the starter": lambda s: appended(manifest, kit, s),
        "disguised, wrapped and appended": lambda s: appended(
            manifest, kit, wrapped(manifest, disguised(manifest, s))
        ),
    }
    copy = changes[change](reference)
    assert copy != reference
    report = compare(base, copy=copy, **honest_class(manifest))
    assert flagged(report) == {"reference/copy": everywhere(base)}
    labs = [flag for flag in report.flags if flag.lab in every_lab(base)]
    assert all(flag.identical for flag in labs), "whole functions are the reference's"
    assert all(flag.score == 1.0 for flag in report.flags)


def test_a_disguised_copy_of_a_classmate_is_flagged_as_a_pair(
    manifest: Manifest, base: Baseline
) -> None:
    honest = honest_class(manifest)
    report = compare(base, copy=disguised(manifest, honest["first"]), **honest)
    assert flagged(report) == {"pair/copy/first": everywhere(base)}
    assert [flag.id for flag in report.flags][:1] == ["pair/11.1/copy/first"]


def test_two_learners_handing_in_a_classmates_code_with_a_wrapper_are_a_group(
    manifest: Manifest, kit: Path, base: Baseline
) -> None:
    """The classmate's lab functions renamed and wrapped, by two learners: one group of three
    in every lab and file (before, no flag at all)."""
    honest = honest_class(manifest)
    ann = wrapped(manifest, honest["first"], "ann_")
    bea = appended(manifest, kit, wrapped(manifest, disguised(manifest, honest["first"])))
    report = compare(base, ann=ann, bea=bea, **honest)
    assert flagged(report) == {"cluster/ann/bea/first": everywhere(base)}
    assert min(flag.score for flag in report.flags) > 0.95


def test_a_trio_in_a_class_of_six_is_reported_as_one_group(
    manifest: Manifest, kit: Path, base: Baseline
) -> None:
    """Code held by three of six is a group to show, not common code to drop."""
    honest = honest_class(manifest)
    trio = {
        "cy": disguised(manifest, honest["first"], "cy_"),
        "dee": wrapped(manifest, honest["first"]),
    }
    report = compare(base, fresh=starter_sources(manifest, kit), **trio, **honest)
    assert flagged(report) == {"cluster/cy/dee/first": everywhere(base)}
    lines = report.summary_lines()
    assert len(lines) == 1 and lines[0].startswith("copies: cy, dee, first share Lab 11.1 ("), lines


def test_a_family_of_thirteen_built_on_one_classmates_code_is_reported(
    manifest: Manifest, kit: Path, base: Baseline
) -> None:
    honest = honest_class(manifest)
    kinds = (
        lambda n: disguised(manifest, honest["first"], f"p{n}_"),
        lambda n: wrapped(manifest, honest["first"], f"w{n}_"),
        lambda n: appended(manifest, kit, honest["first"]),
    )
    family = {f"kin{n:02d}": kinds[n % 3](n) for n in range(12)}
    report = compare(base, fresh=starter_sources(manifest, kit), **family, **honest)
    members = "/".join(sorted([*family, "first"]))
    assert flagged(report) == {f"cluster/{members}": everywhere(base)}


# Issue 53: disguise a script applies, keeping what the code does (tests/harness/disguise.py).


@pytest.mark.parametrize("disguise", SCRIPTED)
def test_a_scripted_disguise_of_the_reference_is_flagged_in_every_unit(
    manifest: Manifest, kit: Path, graded: Baseline, disguise: str
) -> None:
    """Before: a dead store after every statement left at most 3 % of a lab's reference
    fingerprint and no flag; a call given a local name after every statement, independent
    statements swapped, or blocks moved into helpers left 23 % to 66 % in some labs."""
    copy = scripted(manifest, kit, reference_sources(manifest, kit), disguise)
    report = compare(graded, copy=copy, **honest_class(manifest))
    assert flagged(report) == {"reference/copy": everywhere(graded)}


@pytest.mark.parametrize("disguise", SCRIPTED)
def test_two_learners_disguising_a_classmates_code_are_a_group_with_her(
    manifest: Manifest, kit: Path, graded: Baseline, disguise: str
) -> None:
    """Each with names and padding of their own: one group of three in every lab and file,
    and nobody else flagged (before: padding left no pair or group at all)."""
    honest = honest_class(manifest)
    ann = scripted(manifest, kit, honest["first"], disguise, "ann")
    bea = scripted(manifest, kit, honest["first"], disguise, "bea")
    report = compare(graded, ann=ann, bea=bea, **honest)
    assert flagged(report) == {"cluster/ann/bea/first": everywhere(graded)}


def test_a_classmates_code_padded_two_ways_is_a_group_with_her(
    manifest: Manifest, kit: Path, graded: Baseline
) -> None:
    """The issue's attack: one learner pads with dead stores, the other with idle calls."""
    honest = honest_class(manifest)
    ann = scripted(manifest, kit, honest["first"], "dead stores", "ann")
    bea = scripted(manifest, kit, honest["first"], "padded with calls", "bea")
    report = compare(graded, ann=ann, bea=bea, **honest)
    assert flagged(report) == {"cluster/ann/bea/first": everywhere(graded)}


@pytest.mark.parametrize("disguise", SCRIPTED)
def test_an_independent_solution_disguised_is_never_flagged(
    manifest: Manifest, kit: Path, graded: Baseline, disguise: str
) -> None:
    """What normalising takes out makes honest code no closer to the reference or each other."""
    honest = honest_class(manifest)
    for author in AUTHORS:
        changed = honest | {author: scripted(manifest, kit, honest[author], disguise)}
        assert flagged(compare(graded, **changed)) == {}, author


@settings(max_examples=10, deadline=None)
@given(NAMES, st.sampled_from([d for d in SCRIPTED if d != "padded with calls"]))
def test_a_scripted_disguise_never_changes_a_fingerprint(tag: str, disguise: str) -> None:
    """Dead stores, reordering, renaming and splitting are undone before anything is hashed:
    the prints are equal, digests and whole code included."""
    from course.harness.kit import kit_root
    from course.harness.manifest import load_manifest

    manifest, kit = load_manifest("11"), kit_root()
    base = baseline(manifest, kit)
    for sources in (reference_sources(manifest, kit), own_sources(manifest, "second")):
        changed = scripted(manifest, kit, sources, disguise, tag)
        assert changed != sources
        assert learner_prints(base, changed) == learner_prints(base, sources)


@pytest.mark.parametrize("disguise", ["padded with calls", "split, reordered, padded and renamed"])
def test_the_scripted_disguises_keep_what_the_code_does(
    manifest: Manifest, kit: Path, make_workspace: MakeWorkspace, check: Check, disguise: str
) -> None:
    """The disguises are ones a learner could hand in: the reference under them passes."""
    workspace = make_workspace("disguised")
    for path, text in scripted(manifest, kit, reference_sources(manifest, kit), disguise).items():
        (workspace / path).write_bytes(text)
    result = check(workspace)
    assert [lab.status for lab in result.required] == ["passed"] * len(result.required)


SHORT_LAB_11_1 = """
def parse_summary(value, *, entry_id=None, path=".summary"):
    if isinstance(value, CompactionSummary):
        value = summary_to_json(value)
    r = FieldReader(entry_id)
    obj = r.mapping(value, path, SUMMARY_KEYS)
    lists = (r.string_list(obj[key], f"{path}.{key}") for _, key in SUMMARY_LIST_FIELDS)
    return CompactionSummary(r.string(obj["goal"], path + ".goal", non_blank=True), *lists)


def parse_compaction_entry(value):
    r = FieldReader.of(value)
    obj = r.mapping(value, "", COMPACTION_KEYS)
    keys = ("id", "parentId", "firstKeptEntryId")
    ids = [r.string(obj[k], "." + k, non_empty=True) for k in keys]
    times = [r.number(obj[k], "." + k) for k in ("timestamp", "tokensBefore")]
    summary = parse_summary(obj["summary"], entry_id=ids[0])
    return CompactionEntry(ids[0], ids[1], times[0], summary, ids[2], times[1])
"""


def test_four_identical_short_lab_files_are_reported_as_compared_whole(
    manifest: Manifest, kit: Path, base: Baseline, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Four byte-identical Lab 11.1 files, too short to compare by fingerprint (no learner is
    compared by hashes here at all): equal whole, they are one group; the fresh workspaces,
    equal to the starter, are not."""
    monkeypatch.setattr(classroom, "PAIR_SMALLEST", 10**6)
    short = starter_sources(manifest, kit)
    path = "pi_course/summary.py"
    text = short[path].decode()
    for name in ("parse_summary", "parse_compaction_entry"):
        text = replace_function(text, SHORT_LAB_11_1, name)
    short[path] = text.encode()
    four = {f"s{n}": dict(short) for n in range(4)}
    fresh = {f"fresh{n}": starter_sources(manifest, kit) for n in range(2)}
    report = compare(base, **four, **fresh, **honest_class(manifest))
    assert flagged(report) == {"cluster/s0/s1/s2/s3": ["11.1", path]}
    assert all(flag.whole and flag.score == 1.0 for flag in report.flags)


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
    assert (cut[0].limit, cut[0].size) == ("bytes", len(mine[path]))
    assert 0 < cut[0].kept <= SOURCE_BYTES
    assert {c.limit for c in cut[1:]} == {"file tokens"}, "the helpers are read to the budget"
    mine_before = learner_prints(base, own_sources(manifest, "first"))
    assert prints.labs.keys() == mine_before.labs.keys()
    for lab, before in mine_before.labs.items():
        after = prints.labs[lab]
        assert (after.hashes, after.digests) == (before.hashes, before.digests), "read first"
    assert prints.labs["11.1"].whole is None, "a lab of a cut file is never compared whole"
    assert prints.files[path].whole is None


def test_a_huge_function_is_cut_and_said(manifest: Manifest, base: Baseline) -> None:
    mine = own_sources(manifest, "first")
    path = "pi_course/context.py"
    tree = ast.parse(mine[path])
    function = next(
        n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == "select_groups"
    )
    literal = "(" + ", ".join(str(n) for n in range(FUNCTION_TOKENS)) + ",)"
    function.body[:0] = ast.parse(f"table = {literal}\nassert table").body  # read: not dead
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
    flagged_rows, compared = with_copy_flags(base, rows)
    report = compared.to_json()
    flags = {row.learner: row.flags for row in flagged_rows}
    assert flags["first"] == flags["second"] == flags["third"] == ()
    assert flags["ada"][0] == "copy of the reference? (Lab 11.1 100%)"
    assert flags["ada"][-1] == "copy of the reference? (summary.py 100%)"
    assert [f["id"] for f in report["flags"]] == [f"reference/{u}/ada" for u in everywhere(base)]
    assert {f["scope"] for f in report["flags"]} == {"lab", "file"}
    assert set(report["labs"]) == set(everywhere(base))
    assert compared.summary_lines() == [
        "copies: ada matches the reference in "
        + ", ".join(f"{unit_name(u)} (100 %)" for u in everywhere(base))
    ]


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


def test_learners_sharing_the_reference_are_a_group_said_to_be_the_references(
    manifest: Manifest, kit: Path, base: Baseline
) -> None:
    """Code equal to the reference is what learners rebuild: each copy is flagged against it,
    and those who hand it in alike are shown together, said to be the reference's."""
    reference = reference_sources(manifest, kit)
    report = compare(
        base, ann=reference, bo=appended(manifest, kit, reference), **honest_class(manifest)
    )
    found = flagged(report)
    assert found["reference/ann"] == found["reference/bo"] == everywhere(base)
    shared = [flag for flag in report.flags if flag.kind != "reference"]
    assert {flag.learners for flag in shared} == {("ann", "bo")}
    assert [flag.lab for flag in shared] == every_lab(base)
    assert all(flag.whole and flag.reference for flag in shared)
    assert report.summary_lines()[-1].endswith(", all of it the reference's")


def test_the_summary_lines_speak_the_instructors_edition(
    manifest: Manifest, base: Baseline
) -> None:
    """In the zh edition: Chinese wording, names listed with 、, a long group cut and counted."""
    honest = honest_class(manifest)
    family = {f"kin{n:02d}": wrapped(manifest, honest["first"], f"k{n}_") for n in range(24)}
    report = compare(base, **family, **honest)
    try:
        set_edition("zh")
        lines = report.summary_lines()
    finally:
        set_edition(None)
    assert len(lines) == 1, lines
    assert lines[0].startswith("雷同检查：first、kin00、kin01、"), lines[0]
    assert "以及另外 5 人共有 Lab 11.1（100%）、Lab 11.2（100%）" in lines[0], lines[0]
    assert "kin23" not in lines[0]


def test_code_cut_from_the_check_is_compared_by_fingerprint_never_called_equal_whole(
    manifest: Manifest, base: Baseline
) -> None:
    mine = own_sources(manifest, "first")
    path = "pi_course/summary.py"
    padding = "".join(f"\n\ndef helper_{n}(x):\n    return x + {n}\n" for n in range(4_000))
    mine[path] = mine[path] + padding.encode()
    report = compare(base, ann=mine, bo=dict(mine), second=own_sources(manifest, "second"))
    assert flagged(report) == {"pair/ann/bo": everywhere(base)}
    by_unit = {flag.lab: flag for flag in report.flags}
    assert not by_unit[path].whole and not by_unit["11.1"].whole, "cut: not known equal whole"
    assert by_unit["11.3"].whole, "an uncut lab of the same code is"
