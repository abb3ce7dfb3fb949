"""socialtrace: detectors."""
