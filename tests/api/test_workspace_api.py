"""The team routes through the real lifespan: search, groups, claims, bulk and checked edits."""

from __future__ import annotations

import copy
from typing import Any

from fastapi.testclient import TestClient

from app.sample_app import crash_checkout

QUANTITY = {
    "error_code": "POS-422-QTY",
    "event": "SALE_REJECTED",
    "message": "sale rejected: quantity must be greater than 0",
    "logs": ["2026-11-29T10:00:01Z ERROR pos-api 422 quantity must be greater than 0"],
    "service": "pos-api",
}


def create(client: TestClient, incident: dict[str, Any]) -> dict[str, Any]:
    response = client.post("/api/incidents", json=incident)
    assert response.status_code == 201, response.text
    body: dict[str, Any] = response.json()
    return body


def listing(client: TestClient, **params: Any) -> dict[str, Any]:
    response = client.get("/api/incidents", params=params)
    assert response.status_code == 200, response.text
    body: dict[str, Any] = response.json()
    return body


def events(client: TestClient, incident_id: str) -> list[dict[str, Any]]:
    found: list[dict[str, Any]] = client.get(f"/api/incidents/{incident_id}/audit").json()["events"]
    return found


def test_search_groups_and_members(client: TestClient) -> None:
    crashes = [create(client, crash_checkout()) for _ in range(3)]
    till = create(client, QUANTITY)
    found = listing(client, q="ZeroDivision checkout")
    assert {i["id"] for i in found["items"]} == {c["id"] for c in crashes}
    assert found["counts"]["awaiting_review"] == 3 == found["total"]
    assert listing(client, q="quantity greater")["items"][0]["id"] == till["id"]
    assert listing(client, q="SALE_REJECTED")["total"] == 1  # the event is searched too
    assert listing(client, service="pos-api", error_code="POS-422-QTY")["total"] == 1

    grouped = listing(client, grouped="true")
    sizes = {i["group_size"] for i in grouped["items"]}
    assert grouped["total"] == 2 and sizes == {3, 1}
    burst = next(i for i in grouped["items"] if i["group_size"] == 3)
    members = listing(client, group=burst["group_key"])
    assert {i["id"] for i in members["items"]} == {c["id"] for c in crashes}


def test_bulk_decision_decides_each_once_with_one_audit_event(client: TestClient) -> None:
    first, second = create(client, crash_checkout()), create(client, crash_checkout())
    done = client.post(f"/api/incidents/{first['id']}/decision", json={"action": "approve"})
    assert done.status_code == 200
    response = client.post(
        "/api/incidents/decisions",
        json={
            "ids": [first["id"], second["id"], "no-such-incident"],
            "action": "reject",
            "comment": "one outage, tracked elsewhere",
            "reviewer": "ana",
        },
    )
    assert response.status_code == 200
    results = response.json()["results"]
    assert [r["id"] for r in results] == [first["id"], second["id"], "no-such-incident"]
    assert [r["ok"] for r in results] == [False, True, False]
    assert results[0]["error"]["code"] == "conflict" and results[0]["status"] == "approved"
    assert results[1]["status"] == "rejected"
    assert results[2]["error"]["code"] == "not_found"
    decisions = [e for e in events(client, second["id"]) if e["type"] == "decision"]
    assert [(d["action"], d["actor"]) for d in decisions] == [("reject", "ana")]
    assert [e["type"] for e in events(client, first["id"])].count("decision") == 1


def test_bulk_decision_validates_before_deciding(client: TestClient) -> None:
    incident = create(client, crash_checkout())
    for body in (
        {"ids": [incident["id"]], "action": "reject"},  # no reason
        {"ids": [incident["id"], incident["id"]], "action": "approve"},
        {"ids": [], "action": "approve"},
        {"ids": [incident["id"]], "action": "edit"},
    ):
        assert client.post("/api/incidents/decisions", json=body).status_code == 422
    assert client.get(f"/api/incidents/{incident['id']}").json()["status"] == "awaiting_review"


def test_claim_and_release_are_audited(client: TestClient) -> None:
    incident = create(client, crash_checkout())
    claimed = client.post(f"/api/incidents/{incident['id']}/assign", json={"assignee": "ana"})
    assert claimed.status_code == 200 and claimed.json()["assignee"] == "ana"
    assert listing(client)["items"][0]["assignee"] == "ana"
    released = client.post(f"/api/incidents/{incident['id']}/assign", json={"assignee": None})
    assert released.json()["assignee"] is None
    assigned = [e for e in events(client, incident["id"]) if e["type"] == "assigned"]
    assert [(e["assignee"], e["previous"]) for e in assigned] == [("ana", None), (None, "ana")]
    assert client.post("/api/incidents/missing/assign", json={"assignee": "a"}).status_code == 404
    assert client.post(f"/api/incidents/{incident['id']}/decision", json={"action": "approve"})
    late = client.post(f"/api/incidents/{incident['id']}/assign", json={"assignee": "bob"})
    assert late.status_code == 409


def test_edited_claims_are_checked_before_they_are_stored(client: TestClient) -> None:
    incident = create(client, crash_checkout())
    rca = incident["rca"]
    wrong = copy.deepcopy(rca)
    wrong["hypotheses"][0]["claims"][1]["text"] = "The till printer ran out of paper (POS-422-QTY)."
    refused = client.post(
        f"/api/incidents/{incident['id']}/decision", json={"action": "edit", "rca": wrong}
    )
    assert refused.status_code == 422
    error = refused.json()["error"]
    assert error["code"] == "unsupported_claims"
    assert "claim 1.2" in error["message"] and "till printer" in error["message"]
    assert client.get(f"/api/incidents/{incident['id']}").json()["status"] == "awaiting_review"

    confirmed = client.post(
        f"/api/incidents/{incident['id']}/decision",
        json={"action": "edit", "rca": wrong, "confirm_unsupported": True},
    )
    assert confirmed.status_code == 200
    stored = confirmed.json()["final_rca"]["hypotheses"][0]["claims"][1]
    assert stored["supported"] is False and stored["evidence"][0]["support"] == "unsupported"


def test_a_reworded_summary_and_a_reordered_draft_pass(client: TestClient) -> None:
    incident = create(client, crash_checkout())
    rca = copy.deepcopy(incident["rca"])
    rca["summary"] = "An empty basket makes the discount divide by zero."
    rca["hypotheses"] = list(reversed(rca["hypotheses"]))[:2]
    rca["hypotheses"][0]["confidence"] = "medium"
    response = client.post(
        f"/api/incidents/{incident['id']}/decision", json={"action": "edit", "rca": rca}
    )
    assert response.status_code == 200, response.text
    final = response.json()["final_rca"]
    assert final["summary"] == rca["summary"]
    assert [h["statement"] for h in final["hypotheses"]] == [
        h["statement"] for h in rca["hypotheses"]
    ]
    assert final["hypotheses"][0]["confidence"] == "medium"
    row = listing(client, status="approved")["items"][0]
    assert row["decision_action"] == "edit"


def test_me_names_the_caller(client: TestClient) -> None:
    assert client.get("/api/me").json() == {"name": "local", "role": "admin", "auth": False}
