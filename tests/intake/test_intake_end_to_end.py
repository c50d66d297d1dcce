"""End to end: an Alertmanager alert becomes a reviewed incident, and the reviewer is told."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from fastapi.testclient import TestClient
from pydantic import SecretStr
from tests.helpers import unique_name
from tests.intake.helpers import Receiver, alert, notification

from app.core.config import Settings
from app.intake.notify import WebhookNotifier
from app.main import create_app

UI = "http://127.0.0.1:8000"


@pytest.fixture
def app_client(tmp_path: Path, receiver: Receiver) -> Iterator[TestClient]:
    settings = Settings(
        state_dir=tmp_path / "state",
        collection_name=unique_name("kb"),
        auth="off",
        notify_webhook_url=SecretStr(receiver.url),
        ui_base_url=UI,
        _env_file=None,  # type: ignore[call-arg]
    )
    with TestClient(create_app(settings)) as client:
        yield client


@pytest.fixture
def notifier(app_client: TestClient) -> WebhookNotifier:
    """The notifier the runtime built from the settings, over the backend's outbox."""
    built: WebhookNotifier | None = app_client.app.state.runtime.notifier  # type: ignore[attr-defined]
    assert built is not None
    return built


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
