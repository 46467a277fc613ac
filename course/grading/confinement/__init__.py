"""Where learner code runs and what bounds it: bubblewrap, cgroups, users, limits."""
