"""End to end: an Alertmanager alert becomes a reviewed incident, and the reviewer is told."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from fastapi.testclient import TestClient
from tests.intake.intake_support import Receiver, alert, notification, wire_intake
from tests.support import unique_name

from app.core.config import Settings
from app.intake.notify import WebhookNotifier
from app.main import create_app

UI = "http://127.0.0.1:8000"


@pytest.fixture
def notifier(receiver: Receiver) -> WebhookNotifier:
    return WebhookNotifier(receiver.url, UI, timeout=5.0, retries=2, backoff_seconds=0.01)


@pytest.fixture
def app_client(tmp_path: Path, notifier: WebhookNotifier) -> Iterator[TestClient]:
    settings = Settings(
        state_dir=tmp_path / "state",
        collection_name=unique_name("kb"),
        auth="off",
        _env_file=None,  # type: ignore[call-arg]
    )
    app = wire_intake(create_app(settings), settings, observers=[notifier])
    with TestClient(app) as client:
        yield client


def test_payment_alert_to_review_to_decision(
    app_client: TestClient, notifier: WebhookNotifier, receiver: Receiver
) -> None:
    body = notification(
        alert(
            alertname="PaymentProviderSlow",
            labels={"service": "checkout"},
            annotations={
                "summary": "Card payments time out waiting for the payment provider",
                "description": "Calls to the payment provider fail with read timeouts "
                "after 30 s; checkout retries and then gives up.",
            },
        )
    )
    response = app_client.post("/api/intake/alertmanager", json=body)
    assert response.status_code == 202, response.text
    [incident_id] = response.json()["incident_ids"]

    incident = app_client.get(f"/api/incidents/{incident_id}").json()
    assert incident["status"] == "awaiting_review"
    assert "error_code" not in incident["incident"]
    assert incident["similar_error_docs"][0]["metadata"]["error_code"] == "PAY-408"

    [ready] = receiver.wait_for(1)
    assert ready["text"].startswith("RCA ready for review: PaymentProviderSlow on checkout")
    assert f"{UI}/#/incidents/{incident_id}" in ready["text"]

    decided = app_client.post(
        f"/api/incidents/{incident_id}/decision",
        json={"action": "approve", "reviewer": "ana", "comment": "provider status page agrees"},
    )
    assert decided.status_code == 200, decided.text
    bodies = receiver.wait_for(2)
    assert bodies[1]["text"].startswith("RCA approved by")
    assert app_client.portal is not None
    app_client.portal.call(notifier.drain)


def test_overdue_review_gets_one_reminder(
    app_client: TestClient, notifier: WebhookNotifier, receiver: Receiver
) -> None:
    response = app_client.post("/api/intake/alertmanager", json=notification(alert()))
    [incident_id] = response.json()["incident_ids"]
    receiver.wait_for(1)  # review_ready
    service = app_client.app.state.incidents  # type: ignore[attr-defined]
    later = datetime.now(UTC) + timedelta(hours=2)
    assert app_client.portal is not None
    assert app_client.portal.call(notifier.remind_overdue, service, later) == 1
    assert app_client.portal.call(notifier.remind_overdue, service, later) == 0
    app_client.portal.call(notifier.drain)
    bodies = receiver.bodies()
    assert len(bodies) == 2 and bodies[1]["text"].startswith("Reminder:")
    assert f"/#/incidents/{incident_id}" in bodies[1]["text"]
