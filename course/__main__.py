"""``python -m course``: print the chapter's 31-token projection of the nine-entry fixture."""

from __future__ import annotations

import json

from .context import build_context, group_interactions
from .fixtures import SYSTEM_PROMPT, chapter_estimator, chapter_path


def main() -> None:
    path = chapter_path()
    for number, group in enumerate(group_interactions(path), start=1):
        print(f"group {number} = [{', '.join(group.entry_ids)}]")
    result = build_context(
        path,
        max_tokens=31,
        system_prompt=SYSTEM_PROMPT,
        reserved_output=4,
        safety_margin=2,
        estimate_tokens=chapter_estimator,
    )
    print(json.dumps(result.to_json(), indent=2))


if __name__ == "__main__":
    main()
