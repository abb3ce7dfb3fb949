"""socialtrace: tracking."""
