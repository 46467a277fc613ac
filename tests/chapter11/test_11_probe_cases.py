"""The chapter's probe cases as plain pytest cases, beside the focused tests.

Each case of the manifest's seed is a test named by its lab and case id
(``test_lab_11_3_probe[11.3#007]``), so ``python -m pytest -k lab_11_3`` fails on the cases
``checkpoint 11 --lab 11.3`` names, in the same words (``course.sandboxed.probecases``): the
case's input, the field that differs, expected and got, and the command that replays it.

The inputs and the reference's answers are data (``probe_cases.json``, generated from the
reference by ``course-kit starters`` and checked in CI); only the code under test runs here.
These cases count in no lab: the grader draws and answers its own cases outside the sandbox.
A case that reaches a lab's stub is skipped (pending, as ``checkpoint`` says), not failed.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from course.curricula.ch11 import probes as ch11
from course.harness.kit import kit_root
from course.sandboxed import probecases
from course.sandboxed.commands import shell_commands
from course.sandboxed.status import Status

DATA_FILE = "probe_cases.json"
"""Beside this file in a workspace; in the kit, the generated file under ``starters/``."""


def _data() -> dict[str, Any]:
    here = Path(__file__).with_name(DATA_FILE)
    path = here if here.is_file() else kit_root() / "starters" / "11-probes.json"
    data: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    return data


DATA = _data()


def _cases(lab: str) -> list[Any]:
    return [pytest.param(case, id=case["id"]) for case in DATA["cases"] if case["lab"] == lab]


def check(case: dict[str, Any], impl: Any) -> None:
    """The package's answer to ``case`` against the reference's; an exception the reference
    did not raise keeps its traceback (the learner's frames) under the same description."""
    case_id = case["id"]
    expected = DATA["expected"][case_id]
    inputs = DATA["inputs"].get(case_id, [])
    replay = probecases.replay_command(DATA["chapter"], case_id, commands=shell_commands())
    try:
        got = {"value": probecases.to_data(ch11.evaluate(impl.package, case))}
    except Exception as error:
        got = probecases.raised(error)
        if probecases.agreement(expected, got) == Status.PENDING:  # a stub: the focused tests say
            pytest.skip(got["message"])
        if probecases.agreement(expected, got) != Status.PASSED:
            raise AssertionError(
                probecases.describe(case, expected, got, inputs, replay)
            ) from error
        return
    if probecases.agreement(expected, got) != Status.PASSED:
        pytest.fail(probecases.describe(case, expected, got, inputs, replay), pytrace=False)


@pytest.mark.parametrize("case", _cases("11.1"))
def test_lab_11_1_probe(case: dict[str, Any], impl: Any) -> None:
    check(case, impl)


@pytest.mark.parametrize("case", _cases("11.2"))
def test_lab_11_2_probe(case: dict[str, Any], impl: Any) -> None:
    check(case, impl)


@pytest.mark.parametrize("case", _cases("11.3"))
def test_lab_11_3_probe(case: dict[str, Any], impl: Any) -> None:
    check(case, impl)


@pytest.mark.parametrize("case", _cases("11.4"))
def test_lab_11_4_probe(case: dict[str, Any], impl: Any) -> None:
    check(case, impl)


@pytest.mark.parametrize("case", _cases("11.5"))
def test_lab_11_5_probe(case: dict[str, Any], impl: Any) -> None:
    check(case, impl)


@pytest.mark.parametrize("case", _cases("11.opt"))
def test_optional_budget_report_probe(case: dict[str, Any], impl: Any) -> None:
    check(case, impl)
