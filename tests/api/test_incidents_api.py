"""The incident API through the real lifespan."""

from __future__ import annotations

from typing import Any

import pytest
from fastapi.testclient import TestClient

from app.sample_app import crash_checkout


def create(client: TestClient, **overrides: Any) -> dict[str, Any]:
    response = client.post("/api/incidents", json={**crash_checkout(), **overrides})
    assert response.status_code == 201, response.text
    body: dict[str, Any] = response.json()
    return body


def test_create_returns_awaiting_review_with_evidence(shared_client: TestClient) -> None:
    body = create(shared_client)
    assert body["status"] == "awaiting_review"
    assert len(body["id"]) == 36
    assert body["incident"]["error_code"] == "CO-500"
    assert body["similar_error_docs"][0]["metadata"]["error_code"] == "CO-500"
    assert body["dropped_evidence_ids"] == []
    assert body["rca"]["confidence"] in {"high", "medium", "low", "insufficient"}
    assert body["created_at"] and body["updated_at"]
    assert shared_client.get(f"/api/incidents/{body['id']}").json()["rca"] == body["rca"]


def test_the_reviewer_gets_the_diagnosis_and_the_rca_cites_the_incident(
    shared_client: TestClient,
) -> None:
    body = create(shared_client)
    diagnosis = body["diagnosis"]
    assert diagnosis["abstained"] is False and diagnosis["leading"] == "CO-500"
    leading = diagnosis["candidates"][0]
    confirmed = {h["kind"]: h["evidence_ids"] for h in leading["confirmed"]}
    assert confirmed["code"] == ["incident:error_code"]
    assert any(i.startswith("incident:stack:") for i in confirmed["exception"])
    cited = {c["id"] for claim in body["rca"]["hypotheses"][0]["claims"] for c in claim["evidence"]}
    assert set(confirmed["exception"]) & cited


def test_list_is_newest_first_filtered_and_paged(client: TestClient) -> None:
    first = create(client, message="first incident")
    second = create(client, message="second incident")
    client.post(
        f"/api/incidents/{first['id']}/decision", json={"action": "approve", "reviewer": "a"}
    )
    listing = client.get("/api/incidents").json()
    assert [i["id"] for i in listing["items"]] == [second["id"], first["id"]]
    assert listing["total"] == 2 and listing["limit"] == 50 and listing["next_cursor"] is None
    assert listing["counts"]["approved"] == 1 and listing["counts"]["awaiting_review"] == 1
    pending = client.get("/api/incidents", params={"status": "awaiting_review"}).json()
    assert [i["id"] for i in pending["items"]] == [second["id"]]
    paged = client.get("/api/incidents", params={"limit": 1}).json()
    assert [i["id"] for i in paged["items"]] == [second["id"]] and paged["total"] == 2
    rest = client.get("/api/incidents", params={"limit": 1, "cursor": paged["next_cursor"]})
    assert [i["id"] for i in rest.json()["items"]] == [first["id"]]
    assert rest.json()["next_cursor"] is None
    assert listing["items"][1]["decided_by"] == "a"


@pytest.mark.parametrize(
    "params",
    [
        {"limit": 0},
        {"limit": 201},
        {"cursor": "bm90IGEgY3Vyc29y"},
        {"status": "done"},
        {"sort": "random"},
        {"since": "2026-01-02T00:00:00Z", "until": "2026-01-01T00:00:00Z"},
        {"since": "yesterday"},
    ],
)
def test_list_rejects_bad_paging(shared_client: TestClient, params: dict[str, Any]) -> None:
    response = shared_client.get("/api/incidents", params=params)
    assert response.status_code == 422
    assert set(response.json()) == {"error"}


@pytest.mark.parametrize(
    ("body", "fragment"),
    [
        ({}, "message"),
        ({"message": "   "}, "blank"),
        ({"message": "x" * 4001}, "message"),
        ({"message": "m", "logs": "not a list"}, "logs"),
        ({"message": "m", "unexpected": 1}, "unexpected"),
        ({"message": "m", "logs": ["y" * 4001]}, "log line 1"),
    ],
)
def test_bad_incident_is_422_with_a_message(
    shared_client: TestClient, body: dict[str, Any], fragment: str
) -> None:
    response = shared_client.post("/api/incidents", json=body)
    assert response.status_code == 422
    error = response.json()["error"]
    assert error["code"] == "validation_error" and fragment in error["message"]


def test_malformed_json_is_422(shared_client: TestClient) -> None:
    response = shared_client.post(
        "/api/incidents", content=b"{not json", headers={"content-type": "application/json"}
    )
    assert response.status_code == 422
    assert "Traceback" not in response.text


def test_decisions_approve_reject_edit(shared_client: TestClient) -> None:
    approved = create(shared_client)
    response = shared_client.post(
        f"/api/incidents/{approved['id']}/decision", json={"action": "approve", "reviewer": "ana"}
    )
    assert response.status_code == 200 and response.json()["status"] == "approved"

    rejected = create(shared_client)
    response = shared_client.post(
        f"/api/incidents/{rejected['id']}/decision",
        json={"action": "reject", "reviewer": "ana", "comment": "not this family"},
    )
    assert response.json()["status"] == "rejected"

    edited = create(shared_client)
    rca = {**edited["rca"], "summary": "A clearer summary."}
    response = shared_client.post(
        f"/api/incidents/{edited['id']}/decision",
        json={"action": "edit", "reviewer": "ana", "rca": rca},
    )
    body = response.json()
    assert body["status"] == "approved"
    assert body["final_rca"]["summary"] == "A clearer summary."
    assert body["rca"]["summary"] == edited["rca"]["summary"]


@pytest.mark.parametrize(
    ("decision", "fragment"),
    [
        ({"action": "reject", "reviewer": "ana"}, "comment"),
        ({"action": "edit", "reviewer": "ana"}, "rca"),
        ({"action": "approve!", "reviewer": "ana"}, "action"),
        ({"action": "edit", "reviewer": "ana", "rca": {"summary": ""}}, "summary"),
    ],
)
def test_invalid_decision_is_422_and_review_stays_pending(
    shared_client: TestClient, decision: dict[str, Any], fragment: str
) -> None:
    incident = create(shared_client)
    response = shared_client.post(f"/api/incidents/{incident['id']}/decision", json=decision)
    assert response.status_code == 422
    assert fragment in response.json()["error"]["message"]
    assert (
        shared_client.get(f"/api/incidents/{incident['id']}").json()["status"] == "awaiting_review"
    )


def test_unknown_incident_is_404(shared_client: TestClient) -> None:
    for response in (
        shared_client.get("/api/incidents/does-not-exist"),
        shared_client.post(
            "/api/incidents/does-not-exist/decision", json={"action": "approve", "reviewer": "a"}
        ),
        shared_client.get("/api/incidents/does-not-exist/audit"),
    ):
        assert response.status_code == 404
        assert response.json()["error"]["code"] == "not_found"


def test_double_decision_is_409(shared_client: TestClient) -> None:
    incident = create(shared_client)
    url = f"/api/incidents/{incident['id']}/decision"
    assert shared_client.post(url, json={"action": "approve", "reviewer": "ana"}).status_code == 200
    second = shared_client.post(url, json={"action": "approve", "reviewer": "bob"})
    assert second.status_code == 409
    assert "already decided (approved) by ana" in second.json()["error"]["message"]


def test_audit_trail_records_creation_draft_and_decision(shared_client: TestClient) -> None:
    incident = create(shared_client)
    rca = {**incident["rca"], "summary": "Edited."}
    shared_client.post(
        f"/api/incidents/{incident['id']}/decision",
        json={"action": "edit", "reviewer": "ana", "rca": rca},
    )
    events = shared_client.get(f"/api/incidents/{incident['id']}/audit").json()["events"]
    assert [e["type"] for e in events] == ["created", "draft", "decision"]
    decision = events[-1]
    assert decision["actor"] == "ana" and decision["action"] == "edit"
    assert decision["original_rca"]["summary"] == incident["rca"]["summary"]
    assert decision["edited_rca"]["summary"] == "Edited."
    assert '-  "summary": ' in decision["diff"] and '+  "summary": "Edited."' in decision["diff"]


def test_health_and_ready(shared_client: TestClient) -> None:
    assert shared_client.get("/health").json() == {"status": "ok"}
    ready = shared_client.get("/ready")
    assert ready.status_code == 200
    body = ready.json()
    assert body["ready"] is True and body["components"]["knowledge_base"]["docs"] == 10


def test_unknown_route_uses_the_error_envelope(shared_client: TestClient) -> None:
    response = shared_client.get("/api/nothing-here")
    assert response.status_code == 404
