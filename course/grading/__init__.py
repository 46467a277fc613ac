"""Grading someone else's work: a pristine copy, a sandbox, probes, a roster, a gradebook."""
