"""Hypothesis strategies the probes draw from (valid session histories and summaries), and the
seeded draw that gives the same examples for the same seed in every process."""

from __future__ import annotations

import contextlib
import copy
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import seed as fix_seed
from hypothesis import strategies as st
from hypothesis.configuration import set_hypothesis_home_dir

from .ch11 import SUMMARY_KEYS

TEXT = st.text(
    alphabet=st.characters(min_codepoint=0x20, max_codepoint=0x7E, categories=["L", "N", "Zs"]),
    max_size=12,
)
"""Readable text for fields whose characters no lab handles (a message's words, a goal): a
probe's input reads in either edition. Ids in another script are cases of their own
(``ch11.renamed_ids``), where their handling is under test."""
JSON_SCALARS = (
    st.none()
    | st.booleans()
    | st.integers(-(10**6), 10**6)
    | st.floats(allow_nan=False, allow_infinity=False)
    | TEXT
)
JSON = st.recursive(
    JSON_SCALARS,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(TEXT, inner, max_size=3),
    max_leaves=12,
)
"""Valid JSON data (finite numbers only)."""


@st.composite
def interactions(draw: st.DrawFn, index: int) -> list[dict[str, Any]]:
    """One valid interaction: a user message, assistant turns with calls, results in any order.

    Some results are errors (``"isError": true``, still results), and some interactions name
    their calls ``read-…`` as others on the same path may: call ids are unique within one
    interaction only.
    """
    messages: list[dict[str, Any]] = [{"role": "user", "content": draw(TEXT)}]
    prefix = draw(st.sampled_from([f"call-{index}", "read"]))
    for turn in range(draw(st.integers(0, 2))):
        calls = [f"{prefix}-{turn}-{n}" for n in range(draw(st.integers(1, 3)))]
        content: list[dict[str, Any]] = [{"type": "text", "text": draw(TEXT)}]
        content += [
            {"type": "toolCall", "id": c, "name": "tool", "arguments": {"n": n}}
            for n, c in enumerate(calls)
        ]
        messages.append({"role": "assistant", "content": content})
        turn_results = [
            {"role": "toolResult", "toolCallId": c, "toolName": "tool"}
            | {"content": [{"type": "text", "text": draw(TEXT)}], "isError": draw(st.booleans())}
            for c in calls
        ]
        messages += draw(st.permutations(turn_results))
    if draw(st.booleans()):
        messages.append({"role": "assistant", "content": [{"type": "text", "text": draw(TEXT)}]})
    return messages


@st.composite
def histories(draw: st.DrawFn, min_groups: int = 0, max_groups: int = 6) -> list[dict[str, Any]]:
    """A valid active path as JSON entries, with metadata entries sprinkled in."""
    entries: list[dict[str, Any]] = []

    def add(kind: str, prefix: str, **fields: Any) -> None:
        parent = entries[-1]["id"] if entries else None
        entry = {"type": kind, "id": f"{prefix}{len(entries)}", "parentId": parent}
        entries.append(entry | {"timestamp": len(entries)} | fields)

    for index in range(draw(st.integers(min_groups, max_groups))):
        for message in draw(interactions(index)):
            add("message", "e", message=message)
            if draw(st.integers(0, 9)) == 0:
                add("metadata", "m", key="note", value=draw(JSON))
    return entries


SUMMARIES = st.fixed_dictionaries(
    {
        "goal": TEXT.filter(str.strip),  # a goal that is not blank, as the parser asks
        **{key: st.lists(TEXT, max_size=3) for key in SUMMARY_KEYS},
    }
)


def examples(strategy: Any, count: int, seed: int) -> list[Any]:
    """``count`` values of a hypothesis strategy, the same ones for the same seed."""
    found: list[Any] = []

    @fix_seed(seed)
    @settings(
        max_examples=count,
        database=None,
        deadline=None,
        derandomize=False,  # the seed decides, whatever profile the caller loaded
        phases=[Phase.generate],
        suppress_health_check=list(HealthCheck),
    )
    @given(strategy)
    def collect(value: Any) -> None:
        found.append(copy.deepcopy(value))

    with contextlib.ExitStack() as stack, _no_local_constants():
        home = _kept_home()
        if home is None:
            home = stack.enter_context(tempfile.TemporaryDirectory(prefix="course-probes-"))
        set_hypothesis_home_dir(home)  # its caches, not a .hypothesis/ where the grader runs
        stack.callback(set_hypothesis_home_dir, None)
        collect()
    return found[:count]


_kept_in: list[Path] = []


@contextlib.contextmanager
def caches_kept_in(folder: Path) -> Iterator[None]:
    """Draw with hypothesis's caches in ``folder``, kept between processes: its Unicode tables
    take about 0.4 s to build, and every roster draws its audit cases. The caches hold no
    examples (``database=None``), so the same seed draws the same cases with or without them."""
    _kept_in.append(folder)
    try:
        yield
    finally:
        _kept_in.pop()


def _kept_home() -> str | None:
    """The folder ``caches_kept_in`` names, if there is one and it can be made."""
    if _kept_in:
        with contextlib.suppress(OSError):
            _kept_in[-1].mkdir(parents=True, exist_ok=True)
            return str(_kept_in[-1])
    return None


@contextlib.contextmanager
def _no_local_constants() -> Iterator[None]:
    """Draw without the constants hypothesis collects from the modules this process happens to
    have imported, so a seed draws the same cases in every process (the checkpoint, a
    notebook, ``course-kit starters``), whatever else each one imported."""
    try:
        from hypothesis.internal.conjecture import providers

        saved: Any = (providers._get_local_constants, providers.CONSTANTS_CACHE)
        empty: Any = providers._local_constants
    except (ImportError, AttributeError):  # a hypothesis without local constants draws the same
        saved = None
    if saved is None:
        yield
        return
    nothing = type(empty)(
        integers=type(empty.integers)(),
        floats=type(empty.floats)(key=empty.floats.key),
        bytes=type(empty.bytes)(),
        strings=type(empty.strings)(),
    )
    providers._get_local_constants = lambda: nothing
    providers.CONSTANTS_CACHE = type(saved[1])(1024)  # pools built from no local constants
    try:
        yield
    finally:
        providers._get_local_constants, providers.CONSTANTS_CACHE = saved
