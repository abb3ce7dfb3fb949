"""socialtrace tests; helpers are imported as tests.<module> (run pytest from the repository root)."""
