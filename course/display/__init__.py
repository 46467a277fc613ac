"""Notebook display: what the notebooks import to load the learner's code and render what it returned."""
