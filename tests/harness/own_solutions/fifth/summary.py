"""Lab 11.1 · ``third/``'s parser with its checks in another order (``parse_summary`` alone).

Only the function differs from ``third/summary.py``; the names below are imported so this file
lints on its own, and ``test_lab_independence.donors`` moves the function into ``third/``'s
module.
"""

from __future__ import annotations

from collections.abc import Mapping

from course.fields import FieldReader
from course.summary import SUMMARY_KEYS, SUMMARY_LIST_FIELDS, CompactionSummary, summary_to_json


def parse_summary(
    value: object, *, entry_id: str | None = None, path: str = ".summary"
) -> CompactionSummary:
    """A fresh ``CompactionSummary`` read strictly from a camelCase summary object.

    Another order of the same checks: a key the summary lacks is reported before a key it has
    too many, and the fields are read in ``SUMMARY_KEYS``' order. The contract states no
    precedence between two faults, so an input holding one fault reads the same either way.
    """
    if isinstance(value, CompactionSummary):
        value = summary_to_json(value)
    r = FieldReader(entry_id)
    if isinstance(value, Mapping):  # the keys it has of the seven: a missing one shows first
        r.mapping({key: value[key] for key in SUMMARY_KEYS if key in value}, path, SUMMARY_KEYS)
    known = r.mapping(value, path, SUMMARY_KEYS)
    read = {
        key: r.string(known[key], f"{path}.{key}", non_blank=True)
        if key == "goal"
        else r.string_list(known[key], f"{path}.{key}")
        for key in SUMMARY_KEYS
    }
    lists = {attr: read[key] for attr, key in SUMMARY_LIST_FIELDS}
    return CompactionSummary(goal=read["goal"], **lists)
