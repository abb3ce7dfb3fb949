"""socialtrace: pipeline."""
