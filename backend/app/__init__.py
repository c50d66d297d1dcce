"""Incident root-cause-analysis agent."""

__version__ = "0.1.0"
