"""Differential probes the kit ships: seeded case generators per chapter, and their strategies."""
