"""Helpers for the UI tests: API keys and the incident API over plain HTTP."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import httpx

# The test server's keys (RCA_API_KEYS). Key names are the reviewer names the tests type, so
# the recorded actor is the same whether it comes from the key or from the ``reviewer`` field.
KEYS = {
    "monitor": "ui-test-monitor-key-0001",
    "ana": "ui-test-reviewer-ana-0002",
    "bob": "ui-test-reviewer-bob-0003",
}
API_KEYS_SPEC = ",".join(
    [
        f"admin:{KEYS['monitor']}:monitor",
        f"reviewer:{KEYS['ana']}:ana",
        f"reviewer:{KEYS['bob']}:bob",
    ]
)


@dataclass
class Api:
    """The incident API over plain HTTP, for arranging and checking what the UI shows."""

    base_url: str

    def client(self, as_who: str = "monitor") -> httpx.Client:
        headers = {"X-API-Key": KEYS[as_who]}
        return httpx.Client(base_url=self.base_url, timeout=120, headers=headers)

    def create(self, incident: dict[str, Any]) -> dict[str, Any]:
        with self.client() as http:
            response = http.post("/api/incidents", json=incident)
        assert response.status_code == 201, response.text
        body: dict[str, Any] = response.json()
        return body

    def get(self, incident_id: str) -> dict[str, Any]:
        with self.client() as http:
            response = http.get(f"/api/incidents/{incident_id}")
        assert response.status_code == 200, response.text
        body: dict[str, Any] = response.json()
        return body

    def decide(self, incident_id: str, decision: dict[str, Any]) -> httpx.Response:
        """Decide with the key of ``decision["reviewer"]`` (the monitor's key without one)."""
        with self.client(decision.get("reviewer") or "monitor") as http:
            return http.post(f"/api/incidents/{incident_id}/decision", json=decision)

    def audit(self, incident_id: str) -> list[dict[str, Any]]:
        with self.client() as http:
            response = http.get(f"/api/incidents/{incident_id}/audit")
        assert response.status_code == 200, response.text
        events: list[dict[str, Any]] = response.json()["events"]
        return events
