"""Tools for maintainers and session logs: course-kit (starters, nbrefresh, crashtest) and session-log."""
