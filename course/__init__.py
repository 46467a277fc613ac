"""Context compaction, taught lab by lab: history stays; each request gets a projection."""
