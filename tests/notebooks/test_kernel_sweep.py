"""A real kernel: run the Lab 11.3 notebook, move its explorer's sliders from a probe cell."""

from __future__ import annotations

import json

from notebook_support import NOTEBOOKS, errors, run_notebook, texts

SETTINGS = [
    {"max_tokens": 31, "reserved_output": 4},
    {"max_tokens": 19, "reserved_output": 4},
    {"max_tokens": 100, "reserved_output": 4},
    {"max_tokens": 31, "reserved_output": 11},
]

PROBE = f"""
import json
seen = []
for setting in {SETTINGS!r}:
    explorer.reserved_output.value = setting["reserved_output"]
    explorer.max_tokens.value = setting["max_tokens"]
    seen.append({{
        "kept": explorer.kept.value,
        "reason": explorer.reason.value,
        "summary": explorer.summary(),
    }})
print(json.dumps(seen))
"""


def test_sliders_moved_in_the_kernel_update_the_views() -> None:
    notebook = run_notebook(NOTEBOOKS / "11-3-budget-projection.ipynb", [PROBE])
    assert errors(notebook) == []
    at_31, at_19, at_100, reserved_11 = json.loads(texts(notebook.cells[-1])[0])

    assert at_31["kept"] == "u2, a2, u3, calls, r-test, r-read, a3"
    assert at_31["reason"] == "trimmed"
    assert "left for messages  22" in at_31["summary"]

    assert at_19["kept"] == "u3, calls, r-test, r-read, a3"
    assert at_19["reason"] == "single_group_overflow"
    assert "request total 24 of 19" in at_19["summary"]

    assert at_100["kept"] == "u1, a1, u2, a2, u3, calls, r-test, r-read, a3"
    assert at_100["reason"] == "within_budget"

    assert reserved_11["kept"] == "u3, calls, r-test, r-read, a3"
    assert "left for messages  15" in reserved_11["summary"]
