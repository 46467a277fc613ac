"""What a submission holds, read without trusting it: folders, archives, git, loose files."""
