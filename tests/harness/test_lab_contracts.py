"""A lab function's docstring is its contract, in both editions: never the steps to take.

The contract says what a function takes, returns, refuses, copies and leaves unchanged, its
cost bound and the chapter's numbers; the how is the learner's to find (and the hints', on
request). Words that order operations ("then", "walk", "loop", "step", 然后, 遍历, 逐个,
先…再) turn a contract back into a recipe to transcribe, so a docstring that holds one fails
here, naming the function and the word; so do the words its stub raises (the manifest's
``todo``).
"""

from __future__ import annotations

import ast
import inspect
import re
from pathlib import Path

import pytest

from course.harness.kit import kit_root
from course.harness.manifest import LabFunction, load_manifest
from course.locale import translations

MANIFEST = load_manifest("11")
FUNCTIONS = [function for lab in MANIFEST.labs for function in lab.functions]

RECIPE_WORDS = {
    "en": (
        r"\bthen\b",
        r"\bwalk(?:s|ed|ing)?\b",
        r"\bloop(?:s|ed|ing)?\b",
        r"\bsteps?\b",
    ),
    "zh": ("然后", "遍历", "逐个", "步骤", r"先[^。；！？\n]*再"),
}
"""A small, explicit list: each word orders operations; ``first … then`` is caught by then."""


def starter_docstring(function: LabFunction) -> str:
    """The docstring a learner reads above ``function``'s stub (the English starter's)."""
    files = MANIFEST.files_with_role("learner")
    file = next(f for f in files if Path(f.path).stem == function.module)
    source = (kit_root() / file.starter).read_text(encoding="utf-8")
    for node in ast.parse(source).body:
        if isinstance(node, ast.FunctionDef) and node.name == function.function:
            return inspect.cleandoc(ast.get_docstring(node, clean=False) or "")
    raise AssertionError(f"{file.starter} has no function {function.function}")


def recipe_words(text: str, edition: str) -> list[str]:
    return [m.group(0) for p in RECIPE_WORDS[edition] for m in re.finditer(p, text, re.I)]


@pytest.mark.parametrize("function", FUNCTIONS, ids=lambda f: f.name)
def test_a_lab_functions_docstring_states_a_contract_not_steps(function: LabFunction) -> None:
    zh = translations("zh")
    for english in (starter_docstring(function), function.todo):  # the stub's words too
        chinese = zh.gettext(english)
        assert chinese != english, f"{function.name}: no zh translation of {english!r}"
        for edition, text in (("en", english), ("zh", chinese)):
            found = recipe_words(text, edition)
            assert not found, f"{function.name} ({edition}): recipe words {found} in:\n{text}"


def test_the_recipe_words_are_found_where_a_docstring_gives_steps() -> None:
    assert recipe_words("Walk from the newest group, then stop the loop.", "en") == [
        "then",
        "Walk",
        "loop",
    ]
    assert recipe_words("先扣除固定成本，再逐个遍历各组，然后停下。", "zh") == [
        "然后",
        "遍历",
        "逐个",
        "先扣除固定成本，再",
    ]
    assert recipe_words("the first kept entry, one walker's pathway", "en") == []
    assert recipe_words("先前的消息。之后再看", "zh") == []
