"""The zero-install site in headless Chromium, offline: both editions, as a learner uses them."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "harness"))  # the curated mutants

import pytest
from lab_page import label_texts, move_slider_with_keys, slider_row, widget_output
from lite_site import (
    LitePage,
    chapter_workspace,
    check_in_page,
    offline_browser,
    served,
    solve_in_page,
)
from mutants import BROWSER_CHECKED, Mutant

from course.harness.kit import kit_root
from course.harness.manifest import available_chapters, load_manifest

pytestmark = pytest.mark.browser

FOLDER = "ch11"
"""The site's folder of chapter 11's workspaces (``course.tools.lite.chapter_folder``)."""
KERNEL_START_LIMIT_S = 60.0
"""A generous bound for the test; the benchmark (bench/lite.py) measures the real start."""
REFERENCE = {lab: kit_root() / "course" / f"{lab}.py" for lab in ("summary", "groups", "context")}


def notebooks(edition: str) -> list[str]:
    folder = kit_root() / load_manifest("11").notebooks[edition]
    return sorted(path.name for path in folder.glob("*.ipynb"))


def write_in_editor(lab: LitePage, path: str, text: str) -> None:
    """Open ``path`` in the lab's editor, replace its text and save it, as a learner does."""
    lab.command("docmanager:open", {"path": path, "factory": "Editor"})
    lab.page.wait_for_function(
        "(path) => window.jupyterapp.shell.currentWidget?.context?.path === path", arg=path
    )
    lab.page.evaluate(
        """async ([text]) => { const w = window.jupyterapp.shell.currentWidget;
            await w.context.ready;  // else the file's loading text replaces ours
            w.content.model.sharedModel.setSource(text); await w.context.save(); }""",
        [text],
    )


LOOP_SECONDS = 2.0
SWALLOWING_LOOP = (
    "def parse_summary(*args, **kwargs):\n    while True:\n        try:\n            pass\n"
    "        except BaseException:\n            pass\n\n\ndef _was_parse_summary("
)
"""An endless loop no in-kernel time limit can stop: it swallows the stop."""


def swallowing_loop(text: str) -> str:
    return text.replace("def parse_summary(", SWALLOWING_LOOP, 1)


def mutated(text: str, mutant: Mutant) -> str:
    assert mutant.old in text, mutant.name
    return text.replace(mutant.old, mutant.new, 1)


def kernel_reads(lab: LitePage, path: str) -> str:
    return lab.execute(f"print(open({path!r}, encoding='utf-8').read(), end='')")


def checkpoint(*args: str | Path) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-m", "course.cli.checkpoint", "11", *map(str, args)]
    return subprocess.run(command, capture_output=True, text=True, timeout=300, check=False)


def browser_check(lab: LitePage, lab_id: str, seconds: float = 10.0) -> tuple[object, ...]:
    return check_in_page(lab, lab_id, seconds)


def checked_in_the_browser(
    lab: LitePage, module: str, text: str, lab_id: str, seconds: float = 10.0
) -> tuple[object, ...]:
    """``check(lab_id)`` with ``module`` saved as ``text``; the file is put back after."""
    path = f"../pi_course/{module}"
    kept = kernel_reads(lab, path)
    lab.execute(f"open({path!r}, 'w', encoding='utf-8').write({text!r})")
    try:
        return browser_check(lab, lab_id, seconds)
    finally:
        lab.execute(f"open({path!r}, 'w', encoding='utf-8').write({kept + chr(10)!r})")


def checked_here(
    workspace: Path, module: str, text: str, lab_id: str, seconds: float, tmp_path: Path
) -> tuple[object, ...]:
    """``checkpoint 11 --lab lab_id`` on a copy of ``workspace`` with ``module`` as ``text``."""
    copy = tmp_path / f"here-{lab_id}-{len(list(tmp_path.iterdir()))}"
    shutil.copytree(workspace, copy)
    (copy / "pi_course" / module).write_text(text, encoding="utf-8")
    saved = copy.with_suffix(".json")
    checkpoint(
        "--practice",
        copy,
        "--lab",
        lab_id,
        "--unsandboxed",
        "--timeout",
        f"{seconds:g}",
        "--json",
        saved,
    )
    return lab_counts(json.loads(saved.read_text())["labs"])[lab_id]


def lab_counts(labs: list[dict[str, object]]) -> dict[object, tuple[object, ...]]:
    keys = ("status", "passed", "total", "agreed", "cases")
    return {lab["id"]: tuple(lab[key] for key in keys) for lab in labs if not lab.get("optional")}


@pytest.mark.parametrize("edition", ["en", "zh"])
def test_the_site_works_offline_in_both_editions(
    edition: str, lite_site: Path, tmp_path: Path
) -> None:
    with served(lite_site) as base, offline_browser(base, tmp_path / "profile") as (lab, outside):
        first = f"{FOLDER}/{edition}/notebooks/{notebooks(edition)[0]}"
        assert lab.open_lab(first) < KERNEL_START_LIMIT_S

        # Run All through every notebook of the edition: no cell raises.
        for name in notebooks(edition):
            assert lab.run_all(f"{FOLDER}/{edition}/notebooks/{name}") == [], name

        # check("11.1") grades in the kernel: pending, then passed once Lab 11.1 is written.
        assert browser_check(lab, "11.1")[0] == "pending"

        # Lab 11.1 written in the editor, read back by the kernel.
        summary = f"{FOLDER}/{edition}/pi_course/summary.py"
        mine = REFERENCE["summary"].read_text(encoding="utf-8")
        write_in_editor(lab, summary, mine)
        lab.command("docmanager:open", {"path": first})
        assert kernel_reads(lab, "../pi_course/summary.py") == mine.strip()
        in_the_browser = browser_check(lab, "11.1")
        assert in_the_browser[0] == "passed", in_the_browser

        # A reload keeps the file.
        lab.command("application:close-all")
        lab.page.reload()
        lab.open_lab(first)
        assert kernel_reads(lab, "../pi_course/summary.py") == mine.strip()

        # The explorer's slider moves the projection (Labs 11.2 and 11.3 written too).
        for module in ("groups", "context"):
            text = REFERENCE[module].read_text(encoding="utf-8")
            lab.execute(f"open('../pi_course/{module}.py', 'w', encoding='utf-8').write({text!r})")
        explorer_notebook = f"{FOLDER}/{edition}/notebooks/11-3-budget-projection.ipynb"
        assert lab.run_all(explorer_notebook) == []
        notebook = lab.page.locator(".jp-NotebookPanel:visible .jp-Notebook")
        explorer = widget_output(notebook, "max_tokens")
        reasons = label_texts(explorer)
        assert reasons.filter(has_text="trimmed").count() == 1
        move_slider_with_keys(slider_row(explorer, "max_tokens"), 31, 19)
        reasons.filter(has_text="single_group_overflow").first.wait_for()

        # Wrong versions, graded in the page's workers; the command line's verdict is below.
        wrong = {}
        for mutant in BROWSER_CHECKED:
            text = mutated(kernel_reads(lab, f"../pi_course/{mutant.module}") + "\n", mutant)
            wrong[mutant.name] = checked_in_the_browser(lab, mutant.module, text, mutant.lab)

        # An endless loop that swallows every exception: its worker is ended, the page lives on.
        looping = swallowing_loop(mine)
        in_a_loop = checked_in_the_browser(lab, "summary.py", looping, "11.1", LOOP_SECONDS)
        assert in_a_loop[0] == "timeout", in_a_loop
        assert lab.execute("1 + 1") == "2"

        # Downloaded as a zip, graded by a roster to the workspace's own counts.
        lab.execute("from course.display.transfer import save_workspace; save_workspace()")
        with lab.page.expect_download() as download:
            lab.command("filebrowser:go-to-path", {"path": f"{FOLDER}/{edition}.zip"})  # selects it
            lab.command("filebrowser:download")
        roster = tmp_path / "roster"
        roster.mkdir()
        download.value.save_as(roster / f"learner-{edition}.zip")

        assert outside.urls == []

    local = tmp_path / "local"
    shutil.unpack_archive(roster / f"learner-{edition}.zip", local)
    own = tmp_path / "own.json"
    checkpoint("--practice", local / edition, "--unsandboxed", "--json", own)
    graded = checkpoint("--roster", roster, "--unsandboxed", "--gradebook", tmp_path / "gb")
    assert graded.returncode == 0, graded.stderr
    [row] = json.loads((tmp_path / "gb" / "gradebook.json").read_text())["learners"]
    expected = lab_counts(json.loads(own.read_text())["labs"])
    assert lab_counts(row["labs"]) == expected
    assert expected["11.1"][0] == "passed"
    assert in_the_browser == expected["11.1"], "check() in the browser and checkpoint disagree"

    workspace = local / edition
    for mutant in BROWSER_CHECKED:
        source = (workspace / "pi_course" / mutant.module).read_text(encoding="utf-8")
        here = checked_here(
            workspace, mutant.module, mutated(source, mutant), mutant.lab, 10.0, tmp_path
        )
        assert wrong[mutant.name] == here, (
            f"{mutant.name}: browser {wrong[mutant.name]}, CLI {here}"
        )
        assert here[0] == "failed", here
    here = checked_here(
        workspace, "summary.py", swallowing_loop(mine), "11.1", LOOP_SECONDS, tmp_path
    )
    assert in_a_loop == here, f"an endless loop: browser {in_a_loop}, CLI {here}"


@pytest.mark.parametrize("chapter", available_chapters())
def test_every_chapter_s_first_lab_is_checked_in_the_site(
    chapter: str, lite_site: Path, tmp_path: Path
) -> None:
    """Each chapter of the site (with ``COURSE_CHAPTERS`` set, those it adds too): its first
    lab is pending in a fresh workspace, and passed once the reference is written, in every
    edition the chapter has."""
    manifest = load_manifest(chapter)
    first = manifest.labs[0]
    with served(lite_site) as base:
        for edition in manifest.notebooks:
            profile = tmp_path / f"profile-{edition}"
            with offline_browser(base, profile) as (lab, outside):
                workspace = chapter_workspace(manifest, edition)
                lab.open_lab(f"{workspace}/notebooks/{first.notebook}")
                assert check_in_page(lab, first.id)[0] == "pending", (chapter, edition)
                solve_in_page(lab, manifest, first.id)
                assert check_in_page(lab, first.id)[0] == "passed", (chapter, edition)
                assert outside.urls == []
