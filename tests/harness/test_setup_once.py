"""Setup once per door: each door reads the marker, takes the snapshot, computes the kit's
fingerprints, chooses the edition and redacts instructor tests at most once per run.

Each door runs in this process (its tests and probe cases still run in children) with the
functions that do those things wrapped to count their calls.
"""

from __future__ import annotations

import io
import sys
from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from harness_support import CHAPTER, MakeWorkspace

import course.cli.checkpoint
import course.cli.practice
import course.cli.watch
import course.display.experiments
import course.display.notebook
from course.grading.intake import snapshot
from course.grading.verdict import engine
from course.harness import kit
from course.locale import set_edition, translations
from course.sandboxed import marker

COUNTED: dict[str, tuple[Callable[..., Any], ...]] = {
    "marker": (marker.parse_marker,),
    "snapshot": (snapshot.workspace_snapshot, snapshot.reference_snapshot),
    "fingerprints": (kit.chapter_fingerprints,),
    "edition": (set_edition,),
    "redaction": (engine.for_learners,),
}
"""What is counted, by the functions that do it (every module's name for them is wrapped)."""
QUICK = ["--timeout", "2", "--unsandboxed"]


def expected(
    marker: int, snapshots: int, fingerprints: int, edition: int, redaction: int
) -> dict[str, int]:
    return {
        "marker": marker,
        "snapshot": snapshots,
        "fingerprints": fingerprints,
        "edition": edition,
        "redaction": redaction,
    }


@pytest.fixture
def calls(monkeypatch: pytest.MonkeyPatch) -> Iterator[Counter[str]]:
    """Each counted thing's calls while the test runs; the environment's edition after it."""
    counts: Counter[str] = Counter()
    for label, functions in COUNTED.items():
        for function in functions:

            def counted(
                *args: Any, _f: Callable[..., Any] = function, _l: str = label, **kw: Any
            ) -> Any:
                counts[_l] += 1
                return _f(*args, **kw)

            for module in list(sys.modules.values()):
                name = getattr(module, "__name__", "")
                if (
                    name.startswith("course")
                    and getattr(module, function.__name__, None) is function
                ):
                    monkeypatch.setattr(module, function.__name__, counted)
    yield counts
    set_edition(None)


def counted(counts: Counter[str]) -> dict[str, int]:
    return {label: counts[label] for label in COUNTED}


def test_checkpoint_practice_sets_up_once(
    calls: Counter[str], make_workspace: MakeWorkspace, capsys: pytest.CaptureFixture[str]
) -> None:
    root = make_workspace("practice")
    code = course.cli.checkpoint.main([CHAPTER, "--practice", str(root), "--lab", "11.1", *QUICK])
    assert code == 1, capsys.readouterr()
    assert counted(calls) == expected(1, 1, 1, 1, 1)


def test_checkpoint_in_a_workspace_sets_up_once(
    calls: Counter[str],
    make_workspace: MakeWorkspace,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.chdir(make_workspace("practice"))
    code = course.cli.checkpoint.main([CHAPTER, "--lab", "11.1", *QUICK])
    assert code == 1, capsys.readouterr()
    assert counted(calls) == expected(1, 1, 1, 1, 1)


def test_checkpoint_on_the_reference_sets_up_once(
    calls: Counter[str],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.chdir(tmp_path)
    code = course.cli.checkpoint.main([CHAPTER, "--lab", "11.1", "--card", *QUICK])
    assert code == 0, capsys.readouterr()
    assert counted(calls) == expected(0, 1, 1, 1, 1)


def test_checkpoint_review_sets_up_once(
    calls: Counter[str], make_workspace: MakeWorkspace, capsys: pytest.CaptureFixture[str]
) -> None:
    root = make_workspace("practice")
    code = course.cli.checkpoint.main([CHAPTER, "--practice", str(root), "--review", *QUICK])
    assert code == 1, capsys.readouterr()
    assert counted(calls) == expected(1, 1, 1, 1, 0)


def test_checkpoint_watch_sets_up_once(
    calls: Counter[str],
    make_workspace: MakeWorkspace,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """Quit at once: the start and its one run (each later save takes a new snapshot)."""
    watch = course.cli.watch.watch
    monkeypatch.setattr(
        course.cli.watch,
        "watch",
        lambda loop, folder, **kw: watch(loop, folder, stdin=io.StringIO("q\n"), **kw),
    )
    root = make_workspace("practice")
    code = course.cli.checkpoint.main([CHAPTER, "--practice", str(root), "--watch", *QUICK])
    assert code == 0, capsys.readouterr()
    assert counted(calls) == expected(1, 1, 1, 1, 1)


def test_practice_sets_up_once(calls: Counter[str], tmp_path: Path) -> None:
    code = course.cli.practice.main([CHAPTER, str(tmp_path / "new")])
    assert code == 0
    assert counted(calls) == expected(0, 0, 1, 1, 0)


def test_the_notebooks_check_sets_up_once(
    calls: Counter[str], make_workspace: MakeWorkspace
) -> None:
    root = make_workspace("practice")
    view = course.display.notebook.check("11.1", start=root / "notebooks", timeout=2.0)
    assert view.result is not None, view.text
    assert counted(calls) == expected(1, 1, 1, 0, 0)


def parse_summary(value: object, *, entry_id: str | None = None, path: str = ".summary") -> Any:
    """The variant ``check_variant`` grades: Lab 11.1 left unwritten."""
    raise NotImplementedError


def test_check_variant_sets_up_once(
    calls: Counter[str], make_workspace: MakeWorkspace, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(make_workspace("practice"))
    view = course.display.experiments.check_variant("11.1", "summary", parse_summary=parse_summary)
    assert view.result is not None, view.text
    assert counted(calls) == expected(1, 1, 1, 0, 0)


def test_an_abbreviated_option_is_still_obeyed(
    make_workspace: MakeWorkspace,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """``--prac DIR --lan zh``: read only after parsing, chosen again then (the edition and
    the workspace the words named before parsing were none)."""
    root = make_workspace("practice")
    monkeypatch.chdir(tmp_path)
    try:
        course.cli.checkpoint.main(
            [CHAPTER, "--prac", str(root), "--lan", "zh", "--lab", "11.1", *QUICK]
        )
    finally:
        set_edition(None)
    out = capsys.readouterr().out
    checking = translations("zh").gettext("Checking {where}").partition("{where}")[0]
    assert f"{checking}{translations('zh').gettext('workspace {root}').format(root=root)}" in out, (
        out
    )
