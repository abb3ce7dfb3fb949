"""socialtrace: events."""
