"""Chapter 11, context compaction: its manifest, probe cases, strategies and notebook views."""
