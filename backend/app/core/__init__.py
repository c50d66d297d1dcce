"""Cross-cutting pieces: settings and the error hierarchy."""
