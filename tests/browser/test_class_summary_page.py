"""The class summary page a roster run writes, opened in headless Chromium: the plots and the
rule most of the class failed are there, the long tables fold open, and the page fetches
nothing."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from course.harness.kit import kit_root
from course.harness.manifest import load_manifest
from course.harness.workspace import create_workspace

if TYPE_CHECKING:
    from playwright.sync_api import Page

pytestmark = [pytest.mark.browser]

WRONG_PARENT = (  # Lab 11.4: the parent taken from the first kept entry instead of the leaf
    '            "parentId": path[-1].id,\n',
    '            "parentId": first_kept_entry_id,\n',
)


def _workspace(roster: Path, name: str, solved: bool) -> Path:
    """A fresh workspace; ``solved``: every learner module the reference's."""
    kit = kit_root()
    manifest = load_manifest("11")
    folder = roster / name
    create_workspace(manifest, kit, folder)
    if solved:
        for file in manifest.files_with_role("learner"):
            (folder / file.path).write_bytes((kit / file.reference).read_bytes())
    return folder


@pytest.fixture(scope="module")
def class_page(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, Any]]:
    """A roster of three graded: ada's work all right, ben's and cy's Lab 11.4 wrong alike."""
    roster = tmp_path_factory.mktemp("summary") / "roster"
    roster.mkdir()
    _workspace(roster, "ada", solved=True)
    for name in ("ben", "cy"):
        compaction = _workspace(roster, name, solved=True) / "pi_course" / "compaction.py"
        text = compaction.read_text(encoding="utf-8")
        assert text.count(WRONG_PARENT[0]) == 1
        compaction.write_text(text.replace(*WRONG_PARENT), encoding="utf-8")
    run = subprocess.run(
        [sys.executable, "-m", "course.cli.checkpoint", "11", "--roster", str(roster)],
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert run.returncode == 0, run.stdout + run.stderr
    page = roster / "gradebook-summary.html"
    assert f"{page}" in run.stdout
    book = json.loads((roster / "gradebook.json").read_text(encoding="utf-8"))
    return page, book["summary"]


def test_the_page_shows_the_plots_and_the_case_most_failed(
    class_page: tuple[Path, dict[str, Any]], chromium_page: Page
) -> None:
    page_path, summary = class_page
    cases = summary["cases"]
    assert cases, summary
    top = cases[0]
    assert (top["lab"], top["learners"], top["example"]) == ("11.4", 2, "ben")
    requested: list[str] = []
    page = chromium_page
    page.on("request", lambda request: requested.append(request.url))
    page.goto(page_path.as_uri())
    rates = page.locator("svg#pass-rates")
    assert rates.is_visible()
    bars = rates.locator("g.bar")
    assert bars.count() == 5
    labs = {bars.nth(i).get_attribute("data-key"): i for i in range(5)}
    lab_4 = bars.nth(labs["Lab 11.4"])
    assert lab_4.get_attribute("data-value") == "1"  # ada's alone
    box = lab_4.locator("rect.fill").bounding_box()
    assert box is not None and box["width"] > 0
    most = page.locator("svg#most-failed")  # the rules most failed, named
    assert most.is_visible()
    first = most.locator("g.bar").first
    assert first.get_attribute("data-key") == summary["rules"][0]["rule"]
    assert top["rule"] in {rule["rule"] for rule in summary["rules"] if rule["learners"] == 2}
    assert first.get_attribute("data-value") == "2"
    assert not page.locator("table#cases").is_visible(), "the long tables are folded"
    page.locator("details", has=page.locator("table#cases")).locator("summary").click()
    row = page.locator("table#cases tbody tr").first
    assert row.locator("td").first.inner_text() == top["case"]
    assert "ben" in row.inner_text()
    assert requested == [page_path.as_uri()]  # nothing fetched but the page itself
