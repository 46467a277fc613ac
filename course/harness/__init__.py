"""The lab harness: curricula as data, practice workspaces and the checkpoint runner."""
