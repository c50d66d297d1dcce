"""Incident history: approved RCAs are learned and found by the next occurrence."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import chromadb
from fastapi.testclient import TestClient
from tests.helpers import make_settings

from app.core.config import PROJECT_ROOT
from app.main import create_app
from app.rag.history import history_text, learned_code
from app.sample_app import crash_checkout


def checkout_crash() -> dict[str, Any]:
    """The sample crash with the checkout's folder written as a fixed path.

    The trace names the sample app's file by its absolute path, which is embedded with the
    query; the similarity asserted below must not depend on where the repository is cloned.
    """
    incident = crash_checkout()
    incident["stack_trace"] = incident["stack_trace"].replace(str(PROJECT_ROOT), "/srv/shop")
    return incident


def test_history_text_and_code_come_from_the_final_rca() -> None:
    rca = {
        "summary": "Discount divided by zero.",
        "hypotheses": [{"statement": "Zero divisor", "error_code": "CO-500"}],
        "remediation": ["Guard the divisor"],
    }
    text = history_text({"error_code": "X-1", "message": "crash"}, rca)
    assert "Root cause: Zero divisor" in text and "Remediation: Guard the divisor" in text
    assert learned_code({"error_code": "X-1"}, rca) == "CO-500"
    assert learned_code({"error_code": "X-1"}, {"hypotheses": []}) == "X-1"


def test_second_occurrence_retrieves_the_first_approved_rca(tmp_path: Path) -> None:
    settings = make_settings(tmp_path)
    with TestClient(create_app(settings)) as client:
        first = client.post("/api/incidents", json=checkout_crash()).json()
        assert first["similar_past_incidents"] == []
        edited = {**first["rca"], "summary": "Free-sample baskets divide the discount by zero."}
        client.post(
            f"/api/incidents/{first['id']}/decision",
            json={"action": "edit", "reviewer": "ana", "rca": edited},
        )
        second = client.post("/api/incidents", json=checkout_crash()).json()
        (past,) = second["similar_past_incidents"]
        assert past["incident_id"] == first["id"]
        assert past["error_code"] == "CO-500"
        assert past["summary"] == "Free-sample baskets divide the discount by zero."
        assert past["similarity"] > 0.8 and past["decided_at"]

        rejected = client.post(
            "/api/incidents", json={"message": "LDAP bind failures on the VPN"}
        ).json()
        client.post(
            f"/api/incidents/{rejected['id']}/decision",
            json={"action": "reject", "reviewer": "ana", "comment": "not ours"},
        )
        again = client.post(
            "/api/incidents", json={"message": "LDAP bind failures on the VPN"}
        ).json()
        assert again["similar_past_incidents"] == []

    # A new process starts with an empty in-memory history; it is rebuilt from the approvals.
    chromadb.EphemeralClient().delete_collection(settings.history_collection)
    with TestClient(create_app(settings)) as client:
        third = client.post("/api/incidents", json=checkout_crash()).json()
        assert first["id"] in {p["incident_id"] for p in third["similar_past_incidents"]}
