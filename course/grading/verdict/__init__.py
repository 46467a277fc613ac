"""One verdict per lab: the graded copy, tests, probe cases, audit, credit, flags."""
