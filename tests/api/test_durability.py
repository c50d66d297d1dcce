"""``Idempotency-Key`` on ``POST /api/incidents`` and unstorable text, through the real app."""

from __future__ import annotations

from fastapi.testclient import TestClient

from app.sample_app import crash_checkout


def test_an_idempotency_key_replays_the_first_create_and_refuses_another_body(
    client: TestClient,
) -> None:
    body = crash_checkout()
    first = client.post("/api/incidents", json=body, headers={"Idempotency-Key": "retry-1"})
    assert first.status_code == 201
    again = client.post("/api/incidents", json=body, headers={"Idempotency-Key": "retry-1"})
    assert again.status_code == 200 and again.json()["id"] == first.json()["id"]

    other = client.post(
        "/api/incidents",
        json={**body, "message": "another incident"},
        headers={"Idempotency-Key": "retry-1"},
    )
    assert other.status_code == 422
    assert other.json()["error"]["code"] == "validation_error"
    assert "Idempotency-Key" in other.json()["error"]["message"]

    unkeyed = client.post("/api/incidents", json=body)
    assert unkeyed.status_code == 201 and unkeyed.json()["id"] != first.json()["id"]
    assert client.get("/api/incidents").json()["total"] == 2

    bad_key = client.post("/api/incidents", json=body, headers={"Idempotency-Key": "a b"})
    assert bad_key.status_code == 422 and "error" in bad_key.json()


def test_nul_bytes_and_non_characters_are_stripped_not_a_500(client: TestClient) -> None:
    body = {**crash_checkout(), "message": "checkout\u0000 failed\ufffe", "logs": ["a\u0000b"]}
    created = client.post("/api/incidents", json=body)
    assert created.status_code == 201
    incident = client.get(f"/api/incidents/{created.json()['id']}").json()["incident"]
    assert incident["message"] == "checkout failed"
    assert incident["logs"] == ["ab"]


def test_terminal_colour_codes_are_stripped_so_the_words_they_colour_are_read(
    client: TestClient,
) -> None:
    body = {
        "message": "\u001b[1;31m503 on lookups\u001b[0m",
        "logs": ["\u001b[31mERROR\u001b[0m plu-service GET /plu/v1/prices/7311 -> 503"],
    }
    created = client.post("/api/incidents", json=body)
    assert created.status_code == 201
    incident = client.get(f"/api/incidents/{created.json()['id']}").json()["incident"]
    assert incident["message"] == "503 on lookups"
    assert incident["logs"] == ["ERROR plu-service GET /plu/v1/prices/7311 -> 503"]
