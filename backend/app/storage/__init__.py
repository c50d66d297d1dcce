"""Durable state backends: ``sqlite/`` and ``postgres/`` implement the domain's interfaces.

Each backend opens the graph checkpointer, the incident index, alert fingerprints and the
notification outbox together; both create the same tables, described once in ``schema``.
"""
