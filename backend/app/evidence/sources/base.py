"""The collector seam: what a source is asked for, what it returns, the protocol it implements.

A source (Prometheus, log files) gets a ``CollectionRequest`` -- the incident's service and
labels, the alert's own expression, the incident time and the window to look at -- and returns
a ``SourceReport``: ``CollectedItem``s, each a citable piece of evidence with a one-line summary,
plus the parts it could not read. A source that cannot be read at all raises
``SourceUnavailable``; the collector names it in the incident's ``sources_unavailable``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, Protocol


class SourceUnavailable(Exception):
    """A source could not be read at all; ``reason`` is shown to the reviewer."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


@dataclass(frozen=True)
class CollectionRequest:
    """What to collect evidence about.

    Attributes:
        service: The incident's service, if it names one.
        labels: The incident's monitoring labels (``alertname``, ``job``, ``instance`` …).
        expression: The alert's own PromQL expression, when the incident came from an alert.
        at: When the incident began (an alert's ``startsAt``, else when it was reported).
        start: Start of the window to look at (before ``at``).
        end: End of the window (the time of collection, so re-analysis sees fresh data).
    """

    service: str | None
    labels: Mapping[str, str]
    expression: str | None
    at: datetime
    start: datetime
    end: datetime

    def label(self, name: str) -> str | None:
        """The value of a selector label: ``service`` from the incident, others from labels."""
        if name == "service" and self.service:
            return self.service
        value = str(self.labels.get(name) or "").strip()
        return value or None


@dataclass(frozen=True)
class CollectedItem:
    """One piece of collected evidence: a metric series or a log record.

    Attributes:
        id: ``prom:<short hash>`` or ``log:<source>:<line>``; citable like a doc id.
        source: The source that collected it (``prometheus``, ``logs``).
        kind: ``metric`` or ``log``.
        summary: One line a reviewer can read, e.g. "5xx ratio of checkout rose from 0.2% to
            37% at 10:02:11Z" or the log line itself.
        query: The PromQL that was run, or the glob that found the log file.
        range: The window looked at: ``start``, ``end`` and ``at`` (ISO 8601), ``step`` for
            metrics.
        points: ``[[unix seconds, value], …]`` downsampled for a chart (metrics only).
        lines: ``[{"number", "text"}, …]`` -- the record's lines in the file (logs only).
        facts: What the item says, for weighing: a metric's ``template``, ``unit``,
            ``trend`` (rising/falling/flat), ``shape``, ``baseline``, ``peak``, ``change_at``;
            a log record's ``level``, ``exception_type``, ``error_codes``, ``http_statuses``,
            ``count``.
        url: A link to the item where it lives (the Prometheus graph page).
        file: The log file (logs only).
        line: The record's first line number in that file (logs only).
    """

    id: str
    source: str
    kind: str
    summary: str
    query: str
    range: dict[str, str]
    points: list[list[float]] | None = None
    lines: list[dict[str, Any]] | None = None
    facts: dict[str, Any] = field(default_factory=dict)
    url: str | None = None
    file: str | None = None
    line: int | None = None

    def as_dict(self) -> dict[str, Any]:
        """The item as plain JSON-serialisable data (absent optional fields left out)."""
        data: dict[str, Any] = {
            "id": self.id,
            "source": self.source,
            "kind": self.kind,
            "summary": self.summary,
            "query": self.query,
            "range": dict(self.range),
            "facts": dict(self.facts),
        }
        optional = {
            "points": self.points,
            "lines": self.lines,
            "url": self.url,
            "file": self.file,
            "line": self.line,
        }
        data.update({k: v for k, v in optional.items() if v is not None})
        return data


@dataclass(frozen=True)
class SourceReport:
    """What one source returned: its items and the parts it could not read."""

    items: list[CollectedItem] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)


class EvidenceSource(Protocol):
    """Collects evidence about an incident from one system."""

    name: str

    async def collect(self, request: CollectionRequest) -> SourceReport:
        """Items about ``request``.

        Raises:
            SourceUnavailable: The source could not be read at all.
        """
        ...


def iso(moment: datetime) -> str:
    """``2026-11-29T10:02:11Z``: UTC, whole seconds."""
    return moment.astimezone(UTC).replace(microsecond=0).isoformat().replace("+00:00", "Z")


def parse_time(value: object) -> datetime | None:
    """An ISO 8601 time as an aware UTC datetime; None when ``value`` is not one."""
    if isinstance(value, datetime):
        moment = value
    elif isinstance(value, str) and value.strip():
        try:
            moment = datetime.fromisoformat(value.strip().replace("Z", "+00:00"))
        except ValueError:
            return None
    else:
        return None
    return moment.replace(tzinfo=UTC) if moment.tzinfo is None else moment.astimezone(UTC)
