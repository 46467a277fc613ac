"""Differential probes: the chapter's cases, the reference's answers, and what they catch."""

from __future__ import annotations

import json
import math
import subprocess
import sys
from collections import Counter
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path
from typing import Any

import pytest
from harness_support import HANGS, Check, MakeWorkspace, sabotage
from mutants import MUTANTS, Mutant, build_mutant
from solutions import solve_lab

from course.grading.verdict import probes
from course.harness.catalog import Catalog, CatalogTest
from course.harness.manifest import Manifest
from course.harness.records import RecordReader
from course.harness.results import ProbeSummary, TestOutcome, summarize
from course.locale import set_edition
from course.sandboxed import probecases
from course.sandboxed.commands import BY_NAME, Commands
from course.sandboxed.probe_driver import load_module
from course.sandboxed.probecases import answer, raised, replay_command, to_data
from course.sandboxed.status import Status

SEED = 20260311


@pytest.fixture(scope="module")
def drawn(manifest: Manifest, kit: Path) -> probes.ProbeSet:
    found = probes.prepare(manifest, kit, manifest.labs, SEED)
    assert found is not None
    return found


def test_every_lab_function_is_probed_and_the_reference_answers_or_refuses(
    manifest: Manifest, drawn: probes.ProbeSet
) -> None:
    functions = {(case["lab"], case["function"]) for case in drawn.cases}
    for lab in manifest.labs:
        for function in lab.functions:
            assert (lab.id, function.name) in functions, f"{function.name} is never probed"
    kinds = Counter(
        "value" if "value" in found else found["raised"] for found in drawn.expected.values()
    )
    assert set(kinds) == {"value", "ValueError"}, f"the reference only answers or refuses: {kinds}"
    assert kinds["value"] > kinds["ValueError"] > 20
    reasons = Counter(
        drawn.expected[str(case["id"])]["value"]["reason"]
        for case in drawn.cases
        if case["function"] == "context.build_context"
        and "value" in drawn.expected[case["id"]]
        and "contract" not in case["args"]  # a case of the contract's classes answers its own way
    )
    assert set(reasons) == {"within_budget", "trimmed", "single_group_overflow"}


def test_the_same_seed_draws_the_same_cases(manifest: Manifest, kit: Path) -> None:
    module = load_module(kit / str(manifest.probes), "probes_again")
    drawn_with_7 = module.cases(7, ["11.3"])
    assert drawn_with_7 == module.cases(7, ["11.3"])
    assert drawn_with_7 != module.cases(8, ["11.3"])


KEPT_DRAW = """
import json, sys
from enum import StrEnum
from pathlib import Path
from typing import Any
from course.curricula.ch11 import probes as ch11
from course.grading.verdict.draws import caches_kept_in
with caches_kept_in(Path(sys.argv[1])):
    print(json.dumps(ch11.cases(7, ["11.1"])))
"""


def test_hypothesis_s_kept_caches_change_no_draw(tmp_path: Path) -> None:
    """The grader keeps hypothesis's caches in the kit's cache folder (``caches_kept_in``): a
    seed draws the same cases without them, in the process that builds them, in a later one
    that reads them, and where the folder cannot be made (a fresh temporary one serves)."""
    from course.curricula.ch11 import probes as ch11

    fresh = json.loads(json.dumps(ch11.cases(7, ["11.1"])))
    (tmp_path / "a-file").write_text("", encoding="utf-8")
    kept = tmp_path / "kept"
    for folder in (kept, kept, tmp_path / "a-file" / "below"):
        drawn = subprocess.run(
            [sys.executable, "-c", KEPT_DRAW, str(folder)],
            capture_output=True,
            text=True,
            check=True,
        )
        assert json.loads(drawn.stdout) == fresh, f"drawn with caches in {folder}"
        assert list(kept.rglob("charmap*")), "hypothesis's Unicode tables are kept"


@dataclass(frozen=True)
class Caught:
    mutant: Mutant
    summaries: dict[str, ProbeSummary]


@pytest.fixture(scope="module")
def caught(
    manifest: Manifest,
    kit: Path,
    drawn: probes.ProbeSet,
    tmp_path_factory: pytest.TempPathFactory,
) -> dict[str, Caught]:
    """Every curated mutant's answers to its lab's cases, the lab each test reads (trusted
    code: evaluated in this process)."""
    folder = tmp_path_factory.mktemp("probed-mutants")
    chapter = load_module(kit / str(manifest.probes), "probes_for_mutants")
    found = {}
    with pytest.MonkeyPatch.context() as patch:
        patch.syspath_prepend(str(folder))
        for mutant in MUTANTS:
            package = build_mutant(manifest, kit, mutant, folder)
            cases = drawn.only([mutant.lab])
            answers = {
                str(case["id"]): answer(chapter.evaluate, package, case) for case in cases.cases
            }
            found[mutant.name] = Caught(mutant, probes.compare(cases, answers))
    return found


@pytest.mark.parametrize("mutant", MUTANTS, ids=[m.name for m in MUTANTS])
def test_the_probes_catch_every_curated_mutant_in_its_lab(
    mutant: Mutant, caught: dict[str, Caught]
) -> None:
    summaries = caught[mutant.name].summaries
    assert summaries[mutant.lab].status == "failed", f"{mutant.name} survived: {mutant.why}"
    assert summaries[mutant.lab].difference, "a disagreement is described"


def test_answers_are_compared_as_plain_data() -> None:
    assert to_data({"a": (1, 2.0, float("nan"))}) == {"a": [1, 2, "NaN"]}
    assert to_data(7.5) == 7.5 and to_data(-math.inf) == "-Infinity"
    deep: list[object] = []
    cursor = deep
    for _ in range(100):
        cursor.append([])
        cursor = cursor[0]  # type: ignore[assignment]
    too_deep = answer(lambda package, case: deep, "any", {})
    assert too_deep["raised"] == "TooLarge", "an oversized answer is never a refusal"
    stub = NotImplementedError("Lab 11.1 not yet")
    stub.lab_id = "11.1"  # type: ignore[attr-defined]
    assert raised(stub)["raised"] == "pending"
    assert raised(KeyError("x"))["raised"] == "KeyError"
    assert raised(type("InteractionError", (ValueError,), {})("bad"))["raised"] == "ValueError"


def test_a_difference_names_where_the_answers_part() -> None:
    expected = {"kept": ["u2", "a2"], "reason": "trimmed"}
    case = {"id": "x#1", "label": "build_context: 3 interactions"}
    said = probecases.describe(case, {"value": expected}, {"value": expected | {"kept": ["a2"]}})
    assert said == 'build_context: 3 interactions (x#1): kept[0]: expected "u2", got "a2"'
    refused = probecases.describe(case, {"raised": "ValueError"}, {"value": expected})
    assert refused.endswith("expected ValueError, got a result")


def test_a_long_string_is_cut_around_its_first_difference_not_before_it() -> None:
    same = "目标" + "x" * 600
    expected, got = same + "A" + "y" * 400, same + "B" + "y" * 400
    said = probecases.first_difference({"text": expected}, {"text": got})
    assert said.startswith("text: expected …"), said
    wanted, shown = said.split(", got ")
    assert "xA" in wanted and "xB" in shown, said
    assert len(said) < 3 * probecases.SHOWN_VALUE, said
    short = probecases.first_difference("abc", "abd")
    assert short == 'the result: expected "abc", got "abd"'


def test_a_probe_failure_shows_the_case_s_input_and_its_replay_command(
    drawn: probes.ProbeSet,
) -> None:
    case = next(
        c
        for c in drawn.cases
        if c["function"] == "context.build_context" and "value" in drawn.expected[c["id"]]
    )
    expected = drawn.expected[case["id"]]["value"]
    wrong = {"value": expected | {"reason": "no_such_reason"}}
    said = probes.describe_case(drawn, case, wrong).splitlines()
    assert said[0].startswith("build_context: ") and f"({case['id']})" in said[0], said
    assert "reason: expected" in said[0] and '"no_such_reason"' in said[0], said
    path = [line for line in said if line.strip().startswith("path:")]
    assert path, f"the path is shown: {said}"
    budget = next(line for line in said if "system_prompt=" in line)
    assert f"max_tokens={case['args']['budget']['max_tokens']:g}" in budget, said
    assert "estimator=" not in budget, "the costs line says which estimator"
    replay = f"replay: checkpoint 11 --replay {case['id']} --seed {SEED}"
    assert said[-1].strip() == replay, said


def test_a_replay_command_is_written_as_this_shell_runs_it() -> None:
    """Where ``checkpoint`` is not on PATH the printed command is the full path into .venv."""
    inside = Commands(checkpoint="/kit/.venv/bin/checkpoint")
    assert replay_command("11", "11.3#007", None, inside) == (
        "/kit/.venv/bin/checkpoint 11 --replay 11.3#007"
    )
    assert (
        replay_command("11", "11.3#007", 5, BY_NAME) == "checkpoint 11 --replay 11.3#007 --seed 5"
    )


def test_a_path_is_shown_as_entry_ids_with_roles_and_costs() -> None:
    from course.curricula.ch11 import probes as ch11

    user = {"role": "user", "content": "hello there"}
    case = {
        "args": {
            "path": [
                {"type": "message", "id": "u1", "parentId": None, "timestamp": 1, "message": user}
            ],
            "budget": {"max_tokens": 31, "system_prompt": "sys"},
            "estimator": "length",
        }
    }
    cost = ch11.length_estimate(user)
    assert ch11.summarize("course", case) == [
        f"path: u1 user {cost}",
        "costs: the test estimator 'length', 1 + (characters of the message's content as JSON)"
        " // 6, not the chapter's table",
        'max_tokens=31 · system_prompt="sys"',
    ]


@pytest.mark.usefixtures("zh")
def test_a_path_picture_s_costs_line_reads_in_the_edition_that_shows_it() -> None:
    from course.curricula.ch11 import probes as ch11

    case = {"id": "11.3#001", "function": "context.build_context", "label": "x", "args": {}}
    line = ch11.costs_source("chapter")
    said = probecases.describe(case, {"value": 1}, {"value": 2}, [line])
    assert "成本：本章的估算器" in said and line not in said, said


def test_a_lab_names_its_smallest_disagreeing_cases_first(drawn: probes.ProbeSet) -> None:
    lab = drawn.only(["11.3"])
    everything_wrong = {str(c["id"]): {"value": "wrong"} for c in lab.cases}
    failures = probes.compare(lab, everything_wrong)["11.3"].failures
    sizes = sorted(probecases.case_size(c) for c in lab.cases)[: len(failures)]
    by_id = {str(c["id"]): c for c in lab.cases}
    shown = [by_id[f.split("(", 1)[1].split(")", 1)[0]] for f in failures]
    assert [probecases.case_size(c) for c in shown] == sizes


def test_a_lab_counts_only_when_its_probes_agree(manifest: Manifest) -> None:
    lab = manifest.lab("11.1")
    catalog = Catalog(tuple(CatalogTest("t", n, lab.id) for n in ("a", "b", "c")))
    passing = [TestOutcome(f"t::{n}", n, lab.id, Status.PASSED) for n in ("a", "b", "c")]
    agree = ProbeSummary(10, 10, Status.PASSED)
    differ = ProbeSummary(10, 0, Status.PENDING, ("parse_summary: not implemented",))
    result = summarize(manifest, [lab], passing, catalog=catalog, target="", probes={lab.id: agree})
    assert (result.labs[0].passed, result.labs[0].status, result.labs[0].earned) == (
        3,
        "passed",
        3,
    )
    forged = summarize(
        manifest, [lab], passing, catalog=catalog, target="", probes={lab.id: differ}
    )
    claimed = forged.labs[0]
    assert (claimed.passed, claimed.agreed, claimed.cases) == (3, 0, 10), "shown apart"
    assert (claimed.status, claimed.earned, forged.earned) == ("pending", 0, 0), "earns nothing"
    assert not forged.ok
    more = catalog + Catalog((CatalogTest("hidden", "d", lab.id),))
    short = summarize(manifest, [lab], passing, catalog=more, target="")
    assert short.labs[0].status == "error", "a test left out of the report is never a pass"
    assert (short.labs[0].passed, short.labs[0].total) == (3, 4)
    assert "never reported this test" in short.labs[0].tests[-1].message


def test_a_hang_costs_its_lab_s_remaining_cases_and_the_next_labs_still_answer(
    manifest: Manifest, kit: Path, check: Check, make_workspace: MakeWorkspace
) -> None:
    workspace = make_workspace("hangs-in-resume")
    for lab in manifest.labs:
        solve_lab(manifest, kit, workspace, lab.id)
    sabotage(workspace, "compaction", "summary_message", HANGS)
    result = check(workspace, labs=["11.5", "11.opt"], limits=probes.Limits(test_seconds=2.0))
    by_lab = {lab.lab.id: lab for lab in result.labs}
    resume = by_lab["11.5"].probes
    assert resume is not None and resume.status == "timeout"
    assert "still running after 2s" in resume.difference
    report = by_lab["11.opt"].probes
    assert report is not None and report.agree, "a fresh probe process answered the next lab"


def test_garbage_in_an_answer_file_is_skipped_not_fatal(tmp_path: Path) -> None:
    answers = tmp_path / "answers.jsonl"
    deep = "[" * 200_000 + "]" * 200_000
    answers.write_text(f'{deep}\nnot json\n{{"id": "11.1#001", "value": 3}}\n')
    reader = RecordReader(answers)
    assert reader.new() == [{"id": "11.1#001", "value": 3}]
    assert reader.dropped == 2


@pytest.fixture(scope="module")
def chapter_probes(manifest: Manifest, kit: Path) -> Any:
    assert manifest.probes is not None
    return load_module(kit / manifest.probes, "course_probes_under_test")


def test_a_case_naming_no_fixture_is_handed_over_as_a_copy(chapter_probes: Any) -> None:
    args = {"path": [{"id": "a", "content": [{"text": "$fixtures"}]}], "budget": (1, 2.5, None)}
    given = chapter_probes.Implementation("course").fixture(args)
    assert given == args
    given["path"][0]["content"].append("scribble")
    assert args["path"][0]["content"] == [{"text": "$fixtures"}], "the case itself was changed"


def test_a_case_naming_fixtures_gets_the_chapters_data_in_their_place(
    chapter_probes: Any,
) -> None:
    impl = chapter_probes.Implementation("course")
    data = impl.fixtures.chapter_path_json()
    args = {
        "path": [{"$splice": "chapter_path_json"}, 7],
        "whole": {"$fixture": "chapter_path_json"},
    }
    assert impl.fixture(args) == {"path": [*data, 7], "whole": data}


class Kind(StrEnum):
    ONE = "one"


def test_a_case_holding_values_beyond_plain_data_is_still_answered(chapter_probes: Any) -> None:
    args = {"kind": Kind.ONE, "rest": [{"$fixture": "chapter_path_json"}], "n": 1}
    given = chapter_probes.Implementation("course").fixture(args)
    assert given["kind"] is Kind.ONE and given["n"] == 1
    assert given["rest"] == [chapter_probes.Implementation("course").fixtures.chapter_path_json()]


STATEFUL_LAB = """
asked: dict[object, int] = {}


def twice(x):
    asked[x] = asked.get(x, 0) + 1  # state kept between calls: a second call answers otherwise
    return x * asked[x]
"""
ORDER_PROBES = """
import importlib


def evaluate(package, case):
    return importlib.import_module(package + ".lab").twice(case["args"]["x"])
"""


def order_probes(tmp_path: Path, kit: Path, *, once: bool) -> dict[str, probecases.Answer]:
    """Two cases answered by a function that remembers its calls (the second marked ``once``
    when ``once``), through the grader's run of the probe driver."""
    (tmp_path / "stateful").mkdir()
    (tmp_path / "stateful" / "__init__.py").write_text("")
    (tmp_path / "stateful" / "lab.py").write_text(STATEFUL_LAB)
    (tmp_path / "order_probes.py").write_text(ORDER_PROBES)
    cases = (
        {"id": "9.1#001", "lab": "9.1", "function": "lab.twice", "args": {"x": 2}},
        {"id": "9.1#002", "lab": "9.1", "function": "lab.twice", "args": {"x": 3}}
        | ({probecases.ONCE: True} if once else {}),
    )
    expected = {"9.1#001": {"value": 2}, "9.1#002": {"value": 3}}
    drawn = probes.ProbeSet(seed=0, module="order_probes.py", cases=cases, expected=expected)
    probes.write_cases(drawn, tmp_path)
    target = probes.ProbeTarget(tmp_path, "stateful", ("lab",), (tmp_path, kit))
    return probes.run_probes(drawn, target, probes.Limits())


def test_a_case_is_asked_again_in_reverse_order_and_state_kept_between_calls_shows(
    tmp_path: Path, kit: Path
) -> None:
    answers = order_probes(tmp_path, kit, once=False)
    first = answers["9.1#001"]
    assert first["value"] == 2 and first[probecases.AGAIN] == {"value": 4}, first
    expected: probecases.Answer = {"value": 2}
    assert probecases.agreement(expected, first) == Status.FAILED
    said = probecases.difference(expected, first)
    assert said.startswith("agrees when asked in turn; asked again after the cases drawn"), said
    assert "expected 2, got 4" in said and "look for state kept between calls" in said, said


def test_a_case_marked_once_is_asked_in_draw_order_only(tmp_path: Path, kit: Path) -> None:
    answers = order_probes(tmp_path, kit, once=True)
    assert answers["9.1#002"] == {"value": 3}, "a costly case is asked once"
    assert answers["9.1#001"][probecases.AGAIN] == {"value": 4}


def test_an_answer_the_same_in_both_orders_carries_no_second_answer() -> None:
    expected: probecases.Answer = {"value": [1, 2]}
    assert probecases.agreement(expected, {"value": [1, 2]}) == Status.PASSED
    differs: probecases.Answer = {"value": [1, 2], probecases.AGAIN: {"raised": "KeyError"}}
    assert probecases.agreement(expected, differs) == Status.FAILED
    wrong_first: probecases.Answer = {"value": [2], probecases.AGAIN: {"value": [1, 2]}}
    assert probecases.agreement(expected, wrong_first) == Status.FAILED, "the first answer decides"
    assert "asked again" not in probecases.difference(expected, wrong_first)


def test_the_chapter_s_data_is_named_in_a_case_s_input_not_printed(chapter_probes: Any) -> None:
    record = {"$fixture": "compact_1_json"}
    case = {"id": "11.1#x", "lab": "11.1", "args": {"value": record, "change": {"id": "c"}}}
    lines = chapter_probes.summarize("course", case)
    assert lines == ['value: fixtures.compact_1_json() | {"id": "c"}'], lines
    summary = chapter_probes.Implementation("course").data("COMPACT_1_SUMMARY")
    broken = {k: v for k, v in summary.items() if k != "next"} | {"goal": "   "}
    shown = chapter_probes.summarize("course", {"id": "x", "lab": "11.1", "args": {"v": broken}})
    comprehension = '{k: v for k, v in fixtures.COMPACT_1_SUMMARY.items() if k != "next"}'
    assert shown == [f'v: {comprehension} | {{"goal": "   "}}'], "as Python, in every edition"
    fixtures = chapter_probes.Implementation("course").fixtures
    without = {k: v for k, v in summary.items() if k != "next"}
    assert eval(comprehension, {"fixtures": fixtures}) == without, "it runs as printed"


def test_a_fact_of_the_answer_is_named_in_words_and_answered_yes_or_no(zh: None) -> None:
    from course.curricula.ch11 import probes as ch11

    expected = {"entry": {"id": "c"}, ch11.SHARES_LISTS: False}
    wrong = expected | {ch11.SHARES_LISTS: True}
    case = {"id": "11.1#044", "function": "summary.parse_compaction_entry", "label": "x"}
    said = probecases.describe(case, {"value": expected}, {"value": wrong})
    assert said.endswith("：与输入共享列表：应为否，实际为是"), said
    none = probecases.first_difference({"kept_entry_ids": ["u2"]}, {"kept_entry_ids": []})
    assert none == "kept_entry_ids：应为 1 项，实际为空", "a result's attribute keeps its name"
    got = {"raised": "KeyError", "message": "KeyError: 'a3'"}
    raised = probecases.difference({"value": 1}, got)
    assert raised == "应为正常返回，实际为 KeyError：'a3'", "one colon for an exception in zh"
    set_edition("en")
    english = probecases.describe(case, {"value": expected}, {"value": wrong})
    assert english.endswith(": shares a list with its input: expected no, got yes"), english


def test_a_case_s_input_shows_the_call_not_the_case_s_own_arguments(
    drawn: probes.ProbeSet, zh: None
) -> None:
    """No line names a case's class, its estimator by name, a flag or the probe's own name for
    a parameter; the code's names stay, with the edition's colon after them."""
    internal = ("contract=", "estimator=", "raw=", "summary_object=", "first_kept=", "change:")
    lines = [line for lines in drawn.inputs.values() for line in lines]
    assert not [line for line in lines if any(name in line for name in internal)]
    assert not [line for line in lines if " with {" in line or " without " in line]
    label = {"id": "11.1#044", "function": "summary.parse_compaction_entry", "label": "x"}
    case = next(c for c in drawn.cases if drawn.inputs[c["id"]][0].startswith("path: "))
    shown = probecases.describe(case | label, {"value": 1}, {"value": 2}, drawn.inputs[case["id"]])
    assert shown.splitlines()[1].startswith("  path：u"), shown
    raw = next(c for c in drawn.cases if c["args"].get("raw"))
    said = probecases.describe(raw, {"value": 1}, {"value": 2}, drawn.inputs[raw["id"]])
    assert "path 中是未解析的 JSON 对象，不是记录" in said, said
    quoted = {"id": "x#1", "function": "f.g", "label": "`goal` 前后带空格的 compact-1"}
    assert probecases.describe(quoted, {"value": 1}, {"value": 2}).startswith("g：goal 前后带空格")
