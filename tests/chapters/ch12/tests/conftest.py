"""Wiring for chapter 12's focused tests: the ``impl`` fixture's modules (``course.sandboxed.focused``)."""

from course.sandboxed.focused import focused_tests

impl = focused_tests(__file__, ("session", "context", "fixtures", "tokens"))
