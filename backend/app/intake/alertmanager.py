"""Prometheus Alertmanager webhook intake: each firing alert becomes an incident.

The payload (webhook version ``"4"``) is validated as a whole, and every incident it would
create is built, before anything is written: a bad alert fails the request with a 422 and
leaves no half-created batch. Firing alerts whose fingerprint still maps to an open incident
(analyzing, awaiting review, deciding) are counted, not analysed again; resolved alerts
annotate the open incident's audit trail once. Alertmanager retries a failed delivery, and
the fingerprint table makes that retry safe.

An alert becomes an incident like this: the message is the ``summary`` then the
``description`` annotation (the ``alertname`` when both are missing); ``service`` and
``error_code`` come only from labels of exactly those names (finding the error family is the
retrieval's job, not a mapping of alert names); ``event`` is the ``alertname``; the logs carry
a compact rendering of the alert, its labels and its other annotations. The labels, the
``generatorURL`` (the rule's expression) and ``startsAt`` are kept as ``labels``,
``generator_url`` and ``started_at``: the evidence sources select, query and window on them.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from datetime import UTC, datetime
from enum import StrEnum
from typing import Annotated, Any, Literal

from pydantic import (
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    ValidationError,
    field_validator,
    model_validator,
)

from app.core.errors import ValidationFailed
from app.incidents.repository import AuditEvent
from app.incidents.service import IncidentService, utcnow
from app.intake.fingerprints import FingerprintStore
from app.schemas import (
    MAX_LOG_LINE_CHARS,
    MAX_MESSAGE_CHARS,
    IncidentCreate,
    IncidentStatus,
    JsonInt,
    reject_numeric_time,
)

MAX_ALERTS = 500
MAX_LABELS = 64
MAX_LABEL_NAME_CHARS = 256
MAX_LABEL_VALUE_CHARS = 8_000
MAX_URL_CHARS = 4_000
ACTOR = "alertmanager"

#: Incidents an alert can still be folded into.
OPEN_STATUSES = frozenset(
    {IncidentStatus.ANALYZING, IncidentStatus.AWAITING_REVIEW, IncidentStatus.DECIDING}
)
#: Annotations that make up the message; the others go to the logs.
MESSAGE_ANNOTATIONS = ("summary", "description")

#: Label and annotation names and values, as ``_check_label_set`` enforces them.
_LABEL_SET_SCHEMA: dict[str, Any] = {
    "propertyNames": {"minLength": 1, "maxLength": MAX_LABEL_NAME_CHARS},
    "additionalProperties": {"type": "string", "maxLength": MAX_LABEL_VALUE_CHARS},
}
LabelSet = Annotated[
    dict[str, str], Field(max_length=MAX_LABELS, json_schema_extra=_LABEL_SET_SCHEMA)
]
#: An alert's labels: as any label set, and with a non-blank ``alertname`` (``labels_named``).
_ALERT_LABELS_SCHEMA: dict[str, Any] = {
    **_LABEL_SET_SCHEMA,
    "required": ["alertname"],
    "properties": {"alertname": {"type": "string", "pattern": r"\S"}},
}


class AlertStatus(StrEnum):
    """An alert's (or a whole notification's) state."""

    FIRING = "firing"
    RESOLVED = "resolved"


def _check_label_set(value: dict[str, str]) -> dict[str, str]:
    for name, text in value.items():
        if not name or len(name) > MAX_LABEL_NAME_CHARS:
            raise ValueError(f"name '{name[:40]}' must be 1-{MAX_LABEL_NAME_CHARS} characters")
        if len(text) > MAX_LABEL_VALUE_CHARS:
            raise ValueError(f"'{name}' is longer than {MAX_LABEL_VALUE_CHARS} characters")
    return value


def labels_fingerprint(labels: dict[str, str]) -> str:
    """A stable fingerprint of a label set, for senders that do not supply one.

    Args:
        labels: The alert's labels.

    Returns:
        16 hex digits.
    """
    canonical = "\x1f".join(f"{k}\x1e{v}" for k, v in sorted(labels.items()))
    return hashlib.sha256(canonical.encode()).hexdigest()[:16]


class Alert(BaseModel):
    """One alert of an Alertmanager notification (unknown fields are ignored)."""

    model_config = ConfigDict(extra="ignore", populate_by_name=True)

    status: AlertStatus
    labels: dict[str, str] = Field(max_length=MAX_LABELS, json_schema_extra=_ALERT_LABELS_SCHEMA)
    annotations: LabelSet = Field(default_factory=dict)
    starts_at: Annotated[datetime, BeforeValidator(reject_numeric_time)] = Field(alias="startsAt")
    ends_at: Annotated[datetime, BeforeValidator(reject_numeric_time)] | None = Field(
        default=None, alias="endsAt"
    )
    generator_url: str = Field(default="", alias="generatorURL", max_length=MAX_URL_CHARS)
    fingerprint: str = Field(default="", max_length=128)

    @field_validator("labels")
    @classmethod
    def labels_named(cls, value: dict[str, str]) -> dict[str, str]:
        """Alertmanager always sends an ``alertname`` label; the incident's event is it."""
        _check_label_set(value)
        if not value.get("alertname", "").strip():
            raise ValueError("must contain a non-blank 'alertname'")
        return value

    @field_validator("annotations")
    @classmethod
    def annotations_sized(cls, value: dict[str, str]) -> dict[str, str]:
        """Annotation names and values have length caps."""
        return _check_label_set(value)

    @model_validator(mode="after")
    def fingerprint_present(self) -> Alert:
        """Use the sender's fingerprint; derive one from the labels when it sent none."""
        if not self.fingerprint.strip():
            self.fingerprint = labels_fingerprint(self.labels)
        return self

    @property
    def alertname(self) -> str:
        """The ``alertname`` label."""
        return self.labels["alertname"].strip()


class AlertmanagerWebhook(BaseModel):
    """An Alertmanager webhook notification, version 4 (unknown fields are ignored)."""

    model_config = ConfigDict(
        extra="ignore",
        populate_by_name=True,
        json_schema_extra={
            "examples": [
                {
                    "version": "4",
                    "groupKey": '{}:{alertname="PaymentProviderSlow"}',
                    "truncatedAlerts": 0,
                    "status": "firing",
                    "receiver": "rca",
                    "groupLabels": {"alertname": "PaymentProviderSlow"},
                    "commonLabels": {"alertname": "PaymentProviderSlow", "service": "checkout"},
                    "commonAnnotations": {},
                    "externalURL": "http://alertmanager:9093",
                    "alerts": [
                        {
                            "status": "firing",
                            "labels": {"alertname": "PaymentProviderSlow", "service": "checkout"},
                            "annotations": {
                                "summary": "Card payments time out waiting for the provider"
                            },
                            "startsAt": "2026-11-29T10:00:00Z",
                            "endsAt": "0001-01-01T00:00:00Z",
                            "generatorURL": "http://prometheus:9090/graph?g0.expr=…",
                            "fingerprint": "a1b2c3d4e5f60718",
                        }
                    ],
                }
            ]
        },
    )

    version: Literal["4"]
    group_key: str = Field(alias="groupKey", max_length=MAX_URL_CHARS)
    truncated_alerts: JsonInt = Field(default=0, alias="truncatedAlerts", ge=0)
    status: AlertStatus
    receiver: str = Field(max_length=MAX_LABEL_NAME_CHARS)
    group_labels: LabelSet = Field(default_factory=dict, alias="groupLabels")
    common_labels: LabelSet = Field(default_factory=dict, alias="commonLabels")
    common_annotations: LabelSet = Field(default_factory=dict, alias="commonAnnotations")
    external_url: str = Field(default="", alias="externalURL", max_length=MAX_URL_CHARS)
    alerts: list[Alert] = Field(min_length=1, max_length=MAX_ALERTS)

    @field_validator("group_labels", "common_labels", "common_annotations")
    @classmethod
    def label_sets_sized(cls, value: dict[str, str]) -> dict[str, str]:
        """Names and values have length caps, as on each alert."""
        return _check_label_set(value)


class AlertIntakePublic(BaseModel):
    """What one notification did."""

    incident_ids: list[str] = Field(description="Incidents created, each awaiting review")
    deduplicated: int = Field(description="Firing alerts folded into an open incident")
    resolved: int = Field(description="Resolved alerts recorded on an open incident")


def _line(text: str) -> str:
    return text if len(text) <= MAX_LOG_LINE_CHARS else text[: MAX_LOG_LINE_CHARS - 1] + "…"


def _compact(mapping: dict[str, str]) -> str:
    return " ".join(f"{k}={' '.join(v.split())}" for k, v in sorted(mapping.items()))


def alert_message(alert: Alert) -> str:
    """The ``summary`` then the ``description`` annotation, else the ``alertname``.

    Args:
        alert: A firing alert.

    Returns:
        The incident message, capped at the API's message length.
    """
    parts = [alert.annotations.get(k, "").strip() for k in MESSAGE_ANNOTATIONS]
    message = " — ".join(p for p in parts if p) or alert.alertname
    return message if len(message) <= MAX_MESSAGE_CHARS else message[: MAX_MESSAGE_CHARS - 1] + "…"


def alert_logs(alert: Alert, receiver: str) -> list[str]:
    """A compact rendering of the alert for the incident's logs.

    Args:
        alert: A firing alert.
        receiver: The Alertmanager receiver that sent it.

    Returns:
        Log lines: the alert itself, its labels, its other annotations, its source.
    """
    lines = [
        f"alertmanager receiver={receiver} alert={alert.alertname} status={alert.status.value} "
        f"startsAt={alert.starts_at.isoformat()} fingerprint={alert.fingerprint}",
        f"labels: {_compact(alert.labels)}",
    ]
    others = {k: v for k, v in alert.annotations.items() if k not in MESSAGE_ANNOTATIONS}
    if others:
        lines.append(f"annotations: {_compact(others)}")
    if alert.generator_url:
        lines.append(f"source: {alert.generator_url}")
    return [_line(line) for line in lines]


#: Which alert field each ``IncidentCreate`` field came from, for 422 messages.
_SOURCE_OF = {
    "message": "annotations.summary",
    "event": "labels.alertname",
    "service": "labels.service",
    "error_code": "labels.error_code",
    "logs": "labels",
    "labels": "labels",
    "generator_url": "generatorURL",
    "started_at": "startsAt",
}


def incident_for(alert: Alert, index: int, receiver: str) -> IncidentCreate:
    """The incident a firing alert opens.

    Args:
        alert: A firing alert.
        index: Its position in the notification (for error messages).
        receiver: The Alertmanager receiver that sent it.

    Returns:
        The validated incident.

    Raises:
        ValidationFailed: A label is not acceptable as an incident field.
    """
    service = alert.labels.get("service", "").strip() or None
    error_code = alert.labels.get("error_code", "").strip() or None
    try:
        return IncidentCreate(
            message=alert_message(alert),
            event=alert.alertname,
            service=service,
            error_code=error_code,
            logs=alert_logs(alert, receiver),
            labels=alert.labels,
            generator_url=alert.generator_url or None,
            started_at=alert.starts_at
            if alert.starts_at.tzinfo
            else alert.starts_at.replace(tzinfo=UTC),
        )
    except ValidationError as exc:
        first = exc.errors()[0]
        field = str(first["loc"][0]) if first["loc"] else "alert"
        where = f"alerts.{index}.{_SOURCE_OF.get(field, field)}"
        raise ValidationFailed(f"{where}: {first['msg']}") from exc


@dataclass(frozen=True)
class _Planned:
    """One alert and, when firing, the incident it would open."""

    alert: Alert
    incident: IncidentCreate | None


def plan(webhook: AlertmanagerWebhook) -> list[_Planned]:
    """Build every incident of a notification before creating any.

    Args:
        webhook: The validated notification.

    Returns:
        The alerts in order, each firing one with its incident.

    Raises:
        ValidationFailed: Some alert cannot become an incident.
    """
    return [
        _Planned(
            alert,
            incident_for(alert, i, webhook.receiver)
            if alert.status is AlertStatus.FIRING
            else None,
        )
        for i, alert in enumerate(webhook.alerts)
    ]


class AlertIntake:
    """Turns Alertmanager notifications into incidents, deduplicated by fingerprint."""

    def __init__(
        self,
        incidents: IncidentService,
        fingerprints: FingerprintStore,
    ) -> None:
        self.incidents = incidents
        self.fingerprints = fingerprints

    async def receive(self, webhook: AlertmanagerWebhook) -> AlertIntakePublic:
        """Create, deduplicate and annotate; returns once new incidents await review.

        Args:
            webhook: The validated notification.

        Returns:
            The incidents created and how many alerts were deduplicated or resolved.

        Raises:
            ValidationFailed: Some alert cannot become an incident (nothing was created).
        """
        planned = plan(webhook)
        created: list[str] = []
        deduplicated = resolved = 0
        for item in planned:
            async with self.fingerprints.hold(item.alert.fingerprint):
                if item.incident is not None:
                    incident_id = await self._fire(item.alert, item.incident)
                    if incident_id is None:
                        deduplicated += 1
                    else:
                        created.append(incident_id)
                elif await self._resolve(item.alert, webhook.receiver):
                    resolved += 1
        return AlertIntakePublic(incident_ids=created, deduplicated=deduplicated, resolved=resolved)

    async def _open_incident(self, fingerprint: str) -> str | None:
        """The open incident ``fingerprint`` maps to, if any."""
        record = await self.fingerprints.get(fingerprint)
        if record is None:
            return None
        row = await self.incidents.repository.get(record.incident_id)
        if row is None or IncidentStatus(row["status"]) not in OPEN_STATUSES:
            return None
        return record.incident_id

    async def _fire(self, alert: Alert, incident: IncidentCreate) -> str | None:
        """Open an incident for a firing alert; None when it was deduplicated."""
        if await self._open_incident(alert.fingerprint) is not None:
            await self.fingerprints.seen_again(alert.fingerprint, utcnow())
            return None
        created = await self.incidents.create(incident)
        await self.fingerprints.assign(alert.fingerprint, created.id, created.created_at)
        return created.id

    async def _resolve(self, alert: Alert, receiver: str) -> bool:
        """Record a resolved alert on its open incident, once; False when there is none."""
        incident_id = await self._open_incident(alert.fingerprint)
        record = await self.fingerprints.get(alert.fingerprint)
        if incident_id is None or record is None or record.resolved_at is not None:
            return False
        now = utcnow()
        await self.incidents.repository.add_event(
            incident_id,
            AuditEvent(
                "alert_resolved",
                now,
                ACTOR,
                None,
                None,
                {
                    "fingerprint": alert.fingerprint,
                    "alertname": alert.alertname,
                    "receiver": receiver,
                    "ends_at": alert.ends_at.isoformat() if alert.ends_at else None,
                },
            ),
        )
        await self.fingerprints.mark_resolved(alert.fingerprint, now)
        return True
