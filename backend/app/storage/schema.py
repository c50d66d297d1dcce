"""The state tables, described once and rendered as DDL for each backend's dialect.

Every table the incident index, the audit trail, alert intake and the notification outbox
use is declared here in portable terms (text, integer, JSON, an auto-numbered key). A
``Dialect`` says how one database spells those terms; ``render`` turns the tables into that
database's ``CREATE TABLE IF NOT EXISTS`` and ``CREATE INDEX IF NOT EXISTS`` statements, so
opening an existing database changes nothing. A column added after a table first shipped is
marked ``added_later``: each backend adds it to an existing table that lacks it before the
indexes are created, so older databases migrate in place on the next start.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from enum import StrEnum


class ColumnType(StrEnum):
    """What a column holds, independent of the database."""

    TEXT = "text"
    INTEGER = "integer"
    JSON = "json"
    #: An auto-numbered integer primary key, in insertion order.
    IDENTITY = "identity"


@dataclass(frozen=True)
class Column:
    """One column of a table.

    Attributes:
        name: The column name.
        type: What it holds.
        nullable: Whether it may be NULL.
        primary_key: Whether it is the table's primary key.
        unique: Whether its values are unique.
        default: Its default as a Python value (``str`` values are quoted), or None.
        ordered: A text column compared or sorted in queries, so it must sort by byte
            order on every backend (SQLite's order for text).
        added_later: Added after the table first shipped: existing tables may lack it.
    """

    name: str
    type: ColumnType = ColumnType.TEXT
    nullable: bool = True
    primary_key: bool = False
    unique: bool = False
    default: str | int | None = None
    ordered: bool = False
    added_later: bool = False


@dataclass(frozen=True)
class Index:
    """A secondary index of a table; ``unique`` ones make inserts idempotent."""

    name: str
    columns: tuple[str, ...]
    unique: bool = False


@dataclass(frozen=True)
class Table:
    """A table and its indexes."""

    name: str
    columns: tuple[Column, ...]
    indexes: tuple[Index, ...] = ()

    @property
    def column_names(self) -> tuple[str, ...]:
        """The column names in declaration order."""
        return tuple(column.name for column in self.columns)


@dataclass(frozen=True)
class Dialect:
    """How one database spells the portable column types.

    Attributes:
        name: The backend's name.
        types: The type of each ``ColumnType`` except ``IDENTITY``.
        identity: The whole definition of an ``IDENTITY`` column after its name.
        ordered_collation: Appended to the type of ``ordered`` text columns.
        json_default_cast: Appended to the literal default of a JSON column.
        add_column_if_missing: Whether ``ALTER TABLE … ADD COLUMN IF NOT EXISTS`` exists;
            without it the backend adds ``added_later`` columns itself (``add_column``).
    """

    name: str
    types: Mapping[ColumnType, str]
    identity: str
    ordered_collation: str = ""
    json_default_cast: str = ""
    add_column_if_missing: bool = False


INCIDENTS = Table(
    "incidents",
    (
        Column("id", primary_key=True, ordered=True),
        Column("status", nullable=False),
        Column("error_code"),
        Column("service"),
        Column("confidence"),
        Column("summary"),
        Column("decided_by"),
        Column("created_at", nullable=False, ordered=True),
        Column("updated_at", nullable=False),
        # The list's search covers the message and event (app.incidents.listing).
        Column("message", added_later=True),
        Column("event", added_later=True),
        # Who claimed the incident, and what the decision was (an edit shows as such).
        Column("assignee", added_later=True),
        Column("decision_action", added_later=True),
        # Similar incidents share a group: the analysed family and the group's key.
        Column("family", added_later=True),
        Column("group_key", added_later=True),
    ),
    (
        Index("incidents_status_created", ("status", "created_at")),
        Index("incidents_created", ("created_at",)),
        Index("incidents_updated", ("updated_at",)),
        Index("incidents_group", ("group_key", "created_at")),
        Index("incidents_family", ("family", "created_at")),
    ),
)

AUDIT_EVENTS = Table(
    "audit_events",
    (
        Column("seq", ColumnType.IDENTITY),
        Column("incident_id", nullable=False),
        Column("type", nullable=False),
        Column("at", nullable=False),
        Column("actor"),
        Column("action"),
        Column("comment"),
        Column("data", ColumnType.JSON, nullable=False, default="{}"),
        # Set on events recovery may write again (created, each draft, each decision):
        # the unique index turns a second write of the same event into a no-op.
        Column("key", added_later=True),
    ),
    (
        Index("audit_events_incident", ("incident_id", "seq")),
        Index("audit_events_key", ("incident_id", "key"), unique=True),
    ),
)

IDEMPOTENCY_KEYS = Table(
    "idempotency_keys",
    (
        Column("key", primary_key=True),
        Column("request_hash", nullable=False),
        Column("incident_id", nullable=False),
        Column("created_at", nullable=False, ordered=True),
    ),
    (
        Index("idempotency_keys_created", ("created_at",)),
        Index("idempotency_keys_incident", ("incident_id",)),
    ),
)

ALERT_FINGERPRINTS = Table(
    "alert_fingerprints",
    (
        Column("fingerprint", primary_key=True),
        Column("incident_id", nullable=False),
        Column("first_seen", nullable=False),
        Column("last_seen", nullable=False),
        Column("count", ColumnType.INTEGER, nullable=False, default=1),
        Column("resolved_at"),
    ),
    (Index("alert_fingerprints_incident", ("incident_id",)),),
)

NOTIFICATION_OUTBOX = Table(
    "notification_outbox",
    (
        Column("id", ColumnType.IDENTITY),
        Column("key", nullable=False, unique=True),
        Column("incident_id", nullable=False),
        Column("kind", nullable=False),
        Column("payload", ColumnType.JSON, nullable=False),
        Column("status", nullable=False, default="pending"),
        Column("attempts", ColumnType.INTEGER, nullable=False, default=0),
        Column("next_attempt_at", nullable=False, ordered=True),
        Column("claimed_until", ordered=True),
        Column("last_error"),
        Column("created_at", nullable=False),
        Column("finished_at", ordered=True),
    ),
    (Index("notification_outbox_due", ("status", "next_attempt_at")),),
)

TABLES = (INCIDENTS, AUDIT_EVENTS, IDEMPOTENCY_KEYS, ALERT_FINGERPRINTS, NOTIFICATION_OUTBOX)


def column_ddl(column: Column, dialect: Dialect) -> str:
    """One column definition, e.g. ``created_at TEXT COLLATE "C" NOT NULL``.

    Args:
        column: The column.
        dialect: The database to spell it for.

    Returns:
        The definition as it stands inside ``CREATE TABLE``.
    """
    if column.type is ColumnType.IDENTITY:
        return f"{column.name} {dialect.identity}"
    parts = [column.name, dialect.types[column.type]]
    if column.ordered and dialect.ordered_collation:
        parts.append(dialect.ordered_collation)
    if column.primary_key:
        parts.append("PRIMARY KEY")
    if not column.nullable:
        parts.append("NOT NULL")
    if column.unique:
        parts.append("UNIQUE")
    if column.default is not None:
        parts.append(f"DEFAULT {_literal(column, dialect)}")
    return " ".join(parts)


def create_table(table: Table, dialect: Dialect) -> str:
    """``CREATE TABLE IF NOT EXISTS`` for ``table`` in ``dialect``."""
    body = ",\n".join(f"    {column_ddl(c, dialect)}" for c in table.columns)
    return f"CREATE TABLE IF NOT EXISTS {table.name} (\n{body}\n)"


def add_column(table: Table, column: Column, dialect: Dialect) -> str:
    """``ALTER TABLE … ADD COLUMN`` for an ``added_later`` column (``IF NOT EXISTS`` if spelt)."""
    guard = "IF NOT EXISTS " if dialect.add_column_if_missing else ""
    return f"ALTER TABLE {table.name} ADD COLUMN {guard}{column_ddl(column, dialect)}"


def create_indexes(table: Table) -> tuple[str, ...]:
    """``CREATE [UNIQUE] INDEX IF NOT EXISTS`` for each index of ``table``."""
    return tuple(
        f"CREATE {'UNIQUE ' if index.unique else ''}INDEX IF NOT EXISTS {index.name} "
        f"ON {table.name} ({', '.join(index.columns)})"
        for index in table.indexes
    )


def render(dialect: Dialect, tables: tuple[Table, ...] = TABLES) -> tuple[str, ...]:
    """The statements that create ``tables`` (and their indexes) in ``dialect`` if missing.

    With ``add_column_if_missing`` the ``added_later`` columns are added to existing tables
    too; other dialects need ``add_column`` run for the columns their catalogue lacks.

    Args:
        dialect: The database to render for.
        tables: What to create, in order.

    Returns:
        One statement per table, per added column and per index, without trailing semicolons.
    """
    statements: list[str] = []
    for table in tables:
        statements.append(create_table(table, dialect))
        if dialect.add_column_if_missing:
            statements.extend(add_column(table, c, dialect) for c in table.columns if c.added_later)
        statements.extend(create_indexes(table))
    return tuple(statements)


def _literal(column: Column, dialect: Dialect) -> str:
    """The SQL literal of a column's default."""
    value = column.default
    if isinstance(value, int):
        return str(value)
    quoted = "'" + str(value).replace("'", "''") + "'"
    return quoted + dialect.json_default_cast if column.type is ColumnType.JSON else quoted
