"""The Alertmanager webhook through the real app: create, group, deduplicate, resolve, reject."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient
from pydantic import SecretStr
from tests.helpers import unique_name
from tests.intake.helpers import alert, notification

from app.core.config import Settings
from app.main import create_app

URL = "/api/intake/alertmanager"


def post(client: TestClient, body: dict[str, Any], expect: int = 202) -> dict[str, Any]:
    response = client.post(URL, json=body)
    assert response.status_code == expect, response.text
    result: dict[str, Any] = response.json()
    return result


def total_incidents(client: TestClient) -> int:
    return int(client.get("/api/incidents").json()["total"])


def audit_types(client: TestClient, incident_id: str) -> list[str]:
    events = client.get(f"/api/incidents/{incident_id}/audit").json()["events"]
    return [e["type"] for e in events]


def test_firing_alert_becomes_an_incident_awaiting_review(shared_client: TestClient) -> None:
    body = notification(
        alert(
            alertname="CheckoutDiscountCrash",
            labels={"service": "checkout-service", "error_code": "CO-500", "team": "web"},
            annotations={
                "summary": "Checkout returns HTTP 500 for some baskets",
                "description": "ZeroDivisionError in calculate_discount",
                "runbook_url": "https://runbooks.example/checkout",
            },
        )
    )
    result = post(shared_client, body)
    assert result["deduplicated"] == 0 and result["resolved"] == 0
    [incident_id] = result["incident_ids"]
    incident = shared_client.get(f"/api/incidents/{incident_id}").json()
    assert incident["status"] == "awaiting_review"
    data = incident["incident"]
    assert data["message"] == (
        "Checkout returns HTTP 500 for some baskets — ZeroDivisionError in calculate_discount"
    )
    assert data["event"] == "CheckoutDiscountCrash"
    assert data["service"] == "checkout-service" and data["error_code"] == "CO-500"
    assert any("team=web" in line for line in data["logs"])
    assert any("runbook_url=https://runbooks.example/checkout" in line for line in data["logs"])
    assert incident["similar_error_docs"][0]["metadata"]["error_code"] == "CO-500"


def test_no_code_is_derived_from_the_alert_name(shared_client: TestClient) -> None:
    result = post(
        shared_client,
        notification(alert(alertname="PaymentTimeoutPAY408", annotations={}, labels={})),
    )
    incident = shared_client.get(f"/api/incidents/{result['incident_ids'][0]}").json()
    assert "error_code" not in incident["incident"] and "service" not in incident["incident"]
    assert incident["incident"]["message"] == "PaymentTimeoutPAY408"  # alertname fallback


def test_grouped_notification_opens_one_incident_per_firing_alert(
    shared_client: TestClient,
) -> None:
    body = notification(
        alert(labels={"instance": "checkout-1"}),
        alert(labels={"instance": "checkout-2"}),
    )
    result = post(shared_client, body)
    assert len(result["incident_ids"]) == 2 and len(set(result["incident_ids"])) == 2
    for incident_id in result["incident_ids"]:
        assert shared_client.get(f"/api/incidents/{incident_id}").json()["status"] == (
            "awaiting_review"
        )


def test_same_fingerprint_while_open_is_deduplicated(shared_client: TestClient) -> None:
    repeated = alert()
    first = post(shared_client, notification(repeated))
    before = total_incidents(shared_client)
    again = post(shared_client, notification(repeated))
    assert again == {"incident_ids": [], "deduplicated": 1, "resolved": 0}
    assert total_incidents(shared_client) == before
    assert audit_types(shared_client, first["incident_ids"][0]).count("draft") == 1


def test_duplicate_within_one_notification_is_deduplicated(shared_client: TestClient) -> None:
    repeated = alert()
    result = post(shared_client, notification(repeated, dict(repeated)))
    assert len(result["incident_ids"]) == 1 and result["deduplicated"] == 1


def test_same_fingerprint_after_a_decision_opens_a_new_incident(
    shared_client: TestClient,
) -> None:
    repeated = alert()
    [first] = post(shared_client, notification(repeated))["incident_ids"]
    decided = shared_client.post(
        f"/api/incidents/{first}/decision", json={"action": "approve", "reviewer": "ana"}
    )
    assert decided.status_code == 200, decided.text
    [second] = post(shared_client, notification(repeated))["incident_ids"]
    assert second != first


def test_resolved_alert_annotates_the_open_incident_once(shared_client: TestClient) -> None:
    firing = alert()
    [incident_id] = post(shared_client, notification(firing))["incident_ids"]
    resolved = {**firing, "status": "resolved", "endsAt": "2026-11-29T10:30:00Z"}
    result = post(shared_client, notification(resolved))
    assert result == {"incident_ids": [], "deduplicated": 0, "resolved": 1}
    events = shared_client.get(f"/api/incidents/{incident_id}/audit").json()["events"]
    [event] = [e for e in events if e["type"] == "alert_resolved"]
    assert event["fingerprint"] == firing["fingerprint"] and event["actor"] == "alertmanager"
    assert event["ends_at"].startswith("2026-11-29T10:30")
    # Alertmanager re-sends resolved alerts with the group: recorded once.
    assert post(shared_client, notification(resolved))["resolved"] == 0
    assert audit_types(shared_client, incident_id).count("alert_resolved") == 1
    # The incident itself is still for a human to decide.
    assert shared_client.get(f"/api/incidents/{incident_id}").json()["status"] == (
        "awaiting_review"
    )


def test_resolved_alert_without_an_incident_is_ignored(shared_client: TestClient) -> None:
    result = post(shared_client, notification(alert(status="resolved")))
    assert result == {"incident_ids": [], "deduplicated": 0, "resolved": 0}


def test_missing_fingerprint_is_derived_from_the_labels(shared_client: TestClient) -> None:
    bare = alert(labels={"instance": "checkout-9"})
    del bare["fingerprint"]
    assert len(post(shared_client, notification(bare))["incident_ids"]) == 1
    assert post(shared_client, notification(bare))["deduplicated"] == 1


def _without(body: dict[str, Any], *path: str | int) -> dict[str, Any]:
    target: Any = body
    for key in path[:-1]:
        target = target[key]
    del target[path[-1]]
    return body


@pytest.mark.parametrize(
    ("make", "fragment"),
    [
        (lambda: {**notification(alert()), "version": "3"}, "version"),
        (lambda: _without(notification(alert()), "alerts"), "alerts"),
        (lambda: {**notification(alert()), "alerts": []}, "alerts"),
        (
            lambda: _without(notification(alert(), alert()), "alerts", 1, "startsAt"),
            "alerts.1.startsAt",
        ),
        (lambda: notification(alert(), {**alert(), "status": "pending"}), "alerts.1.status"),
        (lambda: notification(alert(), {**alert(), "labels": {"x": "y"}}), "alerts.1.labels"),
        (lambda: notification(alert(), {**alert(), "labels": {"alertname": 5}}), "alerts.1.labels"),
        (
            lambda: notification(alert(), alert(labels={"service": "s" * 129})),
            "alerts.1.labels.service",
        ),
        (
            lambda: notification(alert(), alert(labels={"error_code": "E" * 65})),
            "alerts.1.labels.error_code",
        ),
    ],
)
def test_malformed_notification_is_422_naming_the_field_and_creates_nothing(
    shared_client: TestClient, make: Any, fragment: str
) -> None:
    before = total_incidents(shared_client)
    response = shared_client.post(URL, json=make())
    assert response.status_code == 422, response.text
    error = response.json()["error"]
    assert error["code"] == "validation_error" and fragment in error["message"], error
    assert total_incidents(shared_client) == before


def test_non_json_body_is_422(shared_client: TestClient) -> None:
    response = shared_client.post(
        URL, content=b"{not json", headers={"content-type": "application/json"}
    )
    assert response.status_code == 422


def test_the_webhook_needs_a_submitter_key_when_auth_is_on(tmp_path: Path) -> None:
    settings = Settings(
        state_dir=tmp_path / "state",
        collection_name=unique_name("kb"),
        auth="on",
        api_keys=SecretStr("submitter:alertmanager-key-0123456789:alertmanager"),
        _env_file=None,  # type: ignore[call-arg]
    )
    with TestClient(create_app(settings)) as client:
        body = notification(alert())
        assert client.post(URL, json=body).status_code == 401
        wrong = client.post(URL, json=body, headers={"Authorization": "Bearer nope-nope-nope"})
        assert wrong.status_code == 401
        response = client.post(
            URL, json=body, headers={"Authorization": "Bearer alertmanager-key-0123456789"}
        )
        assert response.status_code == 202 and len(response.json()["incident_ids"]) == 1


def test_concurrent_deliveries_of_one_alert_open_one_incident(shared_client: TestClient) -> None:
    body = notification(alert())
    with ThreadPoolExecutor(max_workers=2) as pool:
        results = list(pool.map(lambda _: post(shared_client, body), range(2)))
    assert sum(len(r["incident_ids"]) for r in results) == 1
    assert sum(r["deduplicated"] for r in results) == 1
