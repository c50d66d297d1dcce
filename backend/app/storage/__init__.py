"""Durable state backends: the graph checkpointer and the incident index, opened together."""
