"""The shared backend: PostgreSQL holds everything workers share.

Graph checkpoints, the incident index, the audit trail, alert fingerprints and the notification
outbox all live in one database, and every worker of a scaled deployment opens this backend
against it. Exactly-once decisions rest on the index's compare-and-set ``transition`` (one
``UPDATE … WHERE status = …``, which PostgreSQL serialises per row); recovery after a crash and
alert de-duplication across workers rest on advisory locks (``locks``).
"""
