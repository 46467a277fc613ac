"""The kit's doors on the command line: checkpoint (with watch and review) and practice."""
