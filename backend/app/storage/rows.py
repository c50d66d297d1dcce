"""Rows to records and back: how both backends map the domain's records onto the tables.

SQLite hands rows over as tuples and JSON columns as text; PostgreSQL (with ``dict_row``) as
mappings and JSONB columns already decoded. Each reader accepts both. The column tuples name
what a query selects, in the order a tuple row holds them; they match the records' fields.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from app.incidents.repository import AuditEvent, IdempotencyRecord
from app.intake.fingerprints import FingerprintRecord
from app.intake.outbox import OutboxMessage
from app.storage.schema import ALERT_FINGERPRINTS, INCIDENTS

#: The incident index's columns: the keys of an incident row.
INCIDENT_COLUMNS = INCIDENTS.column_names

#: The columns an audit-trail read selects, in ``AuditEvent`` order.
EVENT_COLUMNS = ("type", "at", "actor", "action", "comment", "data", "key")

#: The columns of an idempotency record, in ``IdempotencyRecord`` order.
IDEMPOTENCY_COLUMNS = ("key", "request_hash", "incident_id", "created_at")

#: The columns a fingerprint read selects, in ``FingerprintRecord`` order.
FINGERPRINT_COLUMNS = ALERT_FINGERPRINTS.column_names

#: The columns a claim returns, in ``OutboxMessage`` order.
MESSAGE_COLUMNS = ("id", "key", "incident_id", "kind", "payload", "attempts")


def row_dict(row: Any, columns: tuple[str, ...]) -> dict[str, Any]:
    """A row (a tuple in ``columns`` order, or a mapping) as a dict of ``columns``.

    Args:
        row: A database row.
        columns: The columns the query selected.

    Returns:
        Column name to value.
    """
    if isinstance(row, dict):
        return {c: row[c] for c in columns}
    return dict(zip(columns, row, strict=True))


def _json(value: Any) -> dict[str, Any]:
    """A JSON object column, as text (SQLite) or decoded (PostgreSQL)."""
    return json.loads(value) if isinstance(value, str) else dict(value)


def event_from_row(row: Any) -> AuditEvent:
    """An ``AuditEvent`` from a row of ``EVENT_COLUMNS``."""
    event = row_dict(row, EVENT_COLUMNS)
    event["data"] = _json(event["data"])
    return AuditEvent(**event)


def event_values(
    incident_id: str, event: AuditEvent, encode: Callable[[dict[str, Any]], Any]
) -> tuple[Any, ...]:
    """What an audit-trail insert writes: incident id, the event's fields, ``data`` encoded.

    Args:
        incident_id: The incident the event belongs to.
        event: The event.
        encode: How the backend passes a JSON object (text for SQLite, JSONB for PostgreSQL).

    Returns:
        Values for ``(incident_id, type, at, actor, action, comment, data, key)``.
    """
    return (
        incident_id,
        event.type,
        event.at,
        event.actor,
        event.action,
        event.comment,
        encode(event.data),
        event.key,
    )


def idempotency_from_row(row: Any) -> IdempotencyRecord:
    """An ``IdempotencyRecord`` from a row of ``IDEMPOTENCY_COLUMNS``."""
    return IdempotencyRecord(**row_dict(row, IDEMPOTENCY_COLUMNS))


def record_from_row(row: Any) -> FingerprintRecord:
    """A ``FingerprintRecord`` from a row of ``FINGERPRINT_COLUMNS``."""
    record = row_dict(row, FINGERPRINT_COLUMNS)
    record["count"] = int(record["count"])
    return FingerprintRecord(**record)


def message_from_row(row: Any) -> OutboxMessage:
    """An ``OutboxMessage`` from a row of ``MESSAGE_COLUMNS``."""
    message = row_dict(row, MESSAGE_COLUMNS)
    message["id"], message["attempts"] = int(message["id"]), int(message["attempts"])
    message["payload"] = _json(message["payload"])
    return OutboxMessage(**message)
