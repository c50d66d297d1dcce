"""The embedded backend: one SQLite file holds the whole state of a single-node service."""
