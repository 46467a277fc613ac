"""The hosts that grade through the kit: Gradescope, GitHub Actions, Classroom 50."""
