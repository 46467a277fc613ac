"""The chapters the kit ships, one folder each (``chNN/chapter.toml`` and the chapter's code)."""
