"""A reference module cut for one run (``grading/verdict/cut.py``): the lab functions it must not
hold are gone, with the private helpers only they reach; the rest is as written."""

from __future__ import annotations

import ast
import textwrap
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from course.grading.verdict.cut import CutError, cut_module
from course.harness.kit import read_source
from course.harness.manifest import Manifest

MODULE = textwrap.dedent(
    '''
    """A module of two labs."""

    import functools

    LIMIT = 3
    _SCALE = 2


    def _double(x):
        return x * _SCALE


    def _triple(x):
        return _double(x) + x


    def _shared(x):
        return x + 1


    def given_helper(x):
        return _shared(x)


    @functools.cache
    def lab_one(x):
        """Lab one."""
        return _triple(x) + _shared(x)


    def lab_two(x):
        return lab_one(x) + LIMIT
    '''
)


def top_level(source: str) -> set[str]:
    names: set[str] = set()
    for node in ast.parse(source).body:
        if isinstance(node, ast.FunctionDef | ast.ClassDef):
            names.add(node.name)
        elif isinstance(node, ast.Assign):
            names |= {t.id for t in node.targets if isinstance(t, ast.Name)}
    return names


def test_a_cut_drops_the_functions_and_the_private_helpers_only_they_reach() -> None:
    cut = cut_module(MODULE, ["lab_one"])
    compile(cut, "cut.py", "exec")
    # _triple and _double (and _SCALE through them) served lab_one alone; _shared serves the
    # given helper too; lab_two still calls lab_one by name (the run binds it to the learner's)
    assert top_level(cut) == {"LIMIT", "_shared", "given_helper", "lab_two"}
    assert "functools.cache" not in cut, "a decorator goes with its function"
    assert '"""A module of two labs."""' in cut and "import functools" in cut


def test_a_cut_of_nothing_is_the_module_itself() -> None:
    assert cut_module(MODULE, []) == MODULE


def test_a_cut_of_every_lab_leaves_the_given_code() -> None:
    cut = cut_module(MODULE, ["lab_one", "lab_two"])
    assert top_level(cut) == {"LIMIT", "_shared", "given_helper"}


def test_a_function_the_module_lacks_is_named() -> None:
    with pytest.raises(CutError, match="lab_three"):
        cut_module(MODULE, ["lab_one", "lab_three"])


def reference_modules(manifest: Manifest, kit: Path) -> dict[str, str]:
    """Each learner module's reference text, by module name."""
    return {
        Path(file.path).stem: read_source(kit, file.reference).decode("utf-8")
        for file in manifest.files_with_role("learner")
        if file.reference is not None
    }


@given(data=st.data())
def test_any_cut_of_the_chapters_lab_functions_holds_exactly_the_others(
    manifest: Manifest, kit: Path, data: st.DataObject
) -> None:
    """Whichever of a reference module's lab functions are cut, the cut compiles, defines none
    of them and every other one of its top-level functions (the chapter has no private
    helpers: its starter holds every one)."""
    for module, source in reference_modules(manifest, kit).items():
        functions = sorted(f.function for lab in manifest.labs for f in lab.functions
                           if f.module == module)  # fmt: skip
        removed = data.draw(st.sets(st.sampled_from(functions)) if functions else st.just(set()))
        cut = cut_module(source, removed)
        compile(cut, f"{module}.py", "exec")
        assert top_level(cut) == top_level(source) - removed, (module, removed)
