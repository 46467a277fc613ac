"""Grading someone else's work, as a submission travels: intake, confinement, verdict, records."""
