"""The seeded draw of a hypothesis strategy: the same examples for the same seed in every
process, with hypothesis's caches kept where the grader says."""

from __future__ import annotations

import contextlib
import copy
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import seed as fix_seed
from hypothesis.configuration import set_hypothesis_home_dir


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
