"""Chapter 11's focused tests exercise these modules (``course.sandboxed.focused``)."""

from course.sandboxed.focused import focused_tests

impl = focused_tests(__file__, ("session", "groups", "context", "compaction", "fixtures"))
