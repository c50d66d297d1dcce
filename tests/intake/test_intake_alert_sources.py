"""An alert keeps what the evidence sources need: its labels, its rule's URL, its start."""

from __future__ import annotations

from datetime import UTC, datetime

from tests.intake.helpers import alert

from app.evidence.sources.collector import request_for_incident
from app.intake.alertmanager import Alert, incident_for


def test_labels_generator_url_and_start_reach_the_incident() -> None:
    parsed = Alert.model_validate(
        alert(labels={"service": "checkout", "job": "shop", "instance": "10.0.0.5:8080"})
    )
    incident = incident_for(parsed, 0, "rca").model_dump(mode="json", exclude_none=True)
    assert incident["labels"] == {
        "alertname": "CheckoutErrors",
        "severity": "page",
        "service": "checkout",
        "job": "shop",
        "instance": "10.0.0.5:8080",
    }
    assert incident["generator_url"].endswith("g0.expr=rate%28errors%5B5m%5D%29")
    assert incident["started_at"] == "2026-11-29T10:00:00Z"

    now = datetime(2026, 11, 29, 10, 3, tzinfo=UTC)
    request = request_for_incident(incident, None, now, now - now)
    assert request.expression == "rate(errors[5m])"
    assert request.at == datetime(2026, 11, 29, 10, 0, tzinfo=UTC)
    assert (request.label("job"), request.label("alertname")) == ("shop", "CheckoutErrors")


def test_a_start_without_a_zone_is_read_as_utc() -> None:
    raw = {**alert(), "startsAt": "2026-11-29T10:00:00", "generatorURL": ""}
    incident = incident_for(Alert.model_validate(raw), 0, "rca")
    assert incident.started_at == datetime(2026, 11, 29, 10, 0, tzinfo=UTC)
    assert incident.generator_url is None
