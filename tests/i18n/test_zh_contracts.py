"""The learner's files as a Chinese reader opens them: the lab contracts' words and their layout.

Issue 56 (M11, M12, L12, L15): a refusal said as Chinese says it (遇到下列输入时抛出…), a field
before what it is (``goal`` 为 …), a docstring's first sentence a sentence, every line within
100 columns and no code literal cut across two lines.
"""

from __future__ import annotations

import re

import pytest

from course.harness.kit import kit_root
from course.harness.manifest import Manifest, load_manifest
from course.harness.workspace import workspace_layout
from course.locale import gettext as _
from course.sandboxed.columns import columns

WIDTH = 100
FULL_WIDTH_END = re.compile(r"[，。；：、）」』]$")
"""A line may end one full-width mark past the width: such a mark never starts a line."""


@pytest.fixture(scope="module")
def manifest() -> Manifest:
    return load_manifest("11")


def zh_sources(manifest: Manifest, edition: str = "zh") -> dict[str, str]:
    files = workspace_layout(manifest, kit_root(), edition)
    return {path: data.decode("utf-8") for path, data in files.items() if path.endswith(".py")}


@pytest.mark.parametrize("edition", ["en", "zh"])
def test_every_line_of_a_workspace_module_fits_and_keeps_its_literals_whole(
    manifest: Manifest, edition: str
) -> None:
    """Before: 18 lines of the zh workspace ran to 104-131 columns, and check_tool_pairs' docstring
    cut ``{"type": "toolCall", "id": ...}`` in two (in both editions)."""
    wide, cut = [], []
    for path, text in zh_sources(manifest, edition).items():
        for number, line in enumerate(text.splitlines(), 1):
            allowed = WIDTH + 2 if FULL_WIDTH_END.search(line) else WIDTH
            if columns(line) > allowed:
                wide.append(f"{path}:{number} ({columns(line)}): {line.strip()[:60]}")
            if line.count("``") % 2:
                cut.append(f"{path}:{number}: {line.strip()[:60]}")
    assert wide == [], wide
    assert cut == [], cut


def _docstring_of(manifest: Manifest, module: str, function: str) -> str:
    text = zh_sources(manifest)[f"pi_course/{module}.py"]
    found = re.search(rf'def {function}\(.*?\n    """(.*?)"""', text, re.DOTALL)
    assert found is not None, function
    return found[1]


def test_a_refusal_is_said_as_chinese_says_it(manifest: Manifest) -> None:
    """M11: not a translation of 'Refuses with' (以 … 拒绝, then 例如 and the inputs refused)."""
    text = "\n".join(zh_sources(manifest).values())
    flat = text.replace("\n    ", "").replace("\n", "")
    assert "（一种 ``ValueError``）拒绝" not in flat
    assert "都以 ``ValueError`` 拒绝" not in flat
    summary = _docstring_of(manifest, "summary", "parse_summary").replace("\n    ", "")
    assert "遇到下列输入时抛出 ``SessionEntryError``（``ValueError`` 的子类）" in summary
    assert '``goal`` 为 ``""``、``"  "`` 或 ``3``' in summary  # M12: the field first


def test_a_case_names_its_field_before_what_it_is(zh: None) -> None:
    """M12: 为布尔值的 tokensBefore reads backwards; tokensBefore 为布尔值."""
    labels = [_("a boolean tokensBefore"), _("an infinite tokensBefore"), _("a null parentId")]
    assert labels == ["tokensBefore 为布尔值", "tokensBefore 为无穷大", "parentId 为 `null`"]


@pytest.mark.parametrize(
    ("module", "function", "opening"),
    [
        ("groups", "split_interactions", "把 ``path`` 中的 message 记录按 interaction 分组"),
        ("context", "build_context", "返回一次模型请求在 token 预算内看到的投影"),
        ("summary", "summary_to_json", "把摘要转换成 camelCase 的 JSON 对象"),
    ],
)
def test_a_docstring_opens_with_a_sentence(
    manifest: Manifest, module: str, function: str, opening: str
) -> None:
    """L12: the first sentence says what the function does, not a noun phrase."""
    assert _docstring_of(manifest, module, function).startswith(opening)
