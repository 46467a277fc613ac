"""Notebook display: loads the learner's code and renders what it returned."""
