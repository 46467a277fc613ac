"""``python -m course``: print the chapter's groups and its 31-token projection of the fixture."""

from __future__ import annotations

import json

from .context import build_context
from .fixtures import CHAPTER_BUDGET, chapter_estimator, chapter_path
from .groups import group_interactions


def main() -> None:
    path = chapter_path()
    for number, group in enumerate(group_interactions(path), start=1):
        print(f"group {number} = [{', '.join(group.entry_ids)}]")
    result = build_context(path, **CHAPTER_BUDGET.options(), estimate_tokens=chapter_estimator)
    print(json.dumps(result.to_json(), indent=2))


if __name__ == "__main__":
    main()
