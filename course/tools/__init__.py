"""Maintainer and session-log tools: course-kit (starters, nbrefresh, crashtest), session-log."""
