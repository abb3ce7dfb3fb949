"""socialtrace: qa_gen."""
