"""The incident API with evidence sources: what was collected, and what could not be read."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta

import pytest
from fastapi.testclient import TestClient
from tests.helpers import free_port, make_settings

from app.main import create_app


@pytest.fixture(scope="module")
def collecting_client(tmp_path_factory: pytest.TempPathFactory) -> Iterator[TestClient]:
    """An app whose Prometheus is unreachable and whose log file holds one error."""
    tmp_path = tmp_path_factory.mktemp("collect")
    moment = (datetime.now(UTC) - timedelta(minutes=1)).strftime("%Y-%m-%dT%H:%M:%SZ")
    (tmp_path / "logs").mkdir()
    (tmp_path / "logs" / "pos.log").write_text(
        f"{moment} ERROR pos-api POST /sale status=503 PLU lookup timed out after 3000ms\n"
    )
    sources = tmp_path / "sources.yml"
    sources.write_text("services:\n  pos-api:\n    logs: [logs/*.log]\n")
    settings = make_settings(
        tmp_path / "state",
        prometheus_url=f"http://127.0.0.1:{free_port()}",
        sources_file=sources,
        collect_timeout_seconds=3,
    )
    with TestClient(create_app(settings)) as client:
        yield client


def test_an_unreachable_prometheus_is_named_and_the_incident_still_created(
    collecting_client: TestClient,
) -> None:
    response = collecting_client.post(
        "/api/incidents",
        json={
            "message": "POS sales fail: PLU lookups time out",
            "service": "pos-api",
            "labels": {"job": "pos", "instance": "till-7:9100"},
            "started_at": datetime.now(UTC).isoformat(),
        },
    )
    assert response.status_code == 201, response.text
    body = response.json()
    assert body["status"] == "awaiting_review"
    [unavailable] = body["sources_unavailable"]
    assert unavailable["source"] == "prometheus"
    assert "cannot connect to Prometheus" in unavailable["reason"]
    [item] = body["collected_evidence"]
    assert item["id"] == "log:pos.log:1" and item["kind"] == "log" and item["source"] == "logs"
    assert set(item) >= {"id", "source", "kind", "summary", "query", "range", "lines"}
    cited = [c["id"] for cl in body["rca"]["hypotheses"][0]["claims"] for c in cl["evidence"]]
    assert "log:pos.log:1" in cited

    audit = collecting_client.get(f"/api/incidents/{body['id']}/audit").json()["events"]
    [draft] = [e for e in audit if e["type"] == "draft"]
    assert [i["id"] for i in draft["collected_evidence"]] == ["log:pos.log:1"]
    assert draft["sources_unavailable"] == body["sources_unavailable"]


def test_an_edit_may_cite_collected_evidence(collecting_client: TestClient) -> None:
    created = collecting_client.post(
        "/api/incidents", json={"message": "POS sales fail", "service": "pos-api"}
    ).json()
    edited = {
        **created["rca"],
        "hypotheses": [
            {
                "statement": "PLU lookups time out",
                "claims": [
                    {
                        "text": "pos-api logged a PLU lookup timeout",
                        "evidence": [
                            {"id": "log:pos.log:1", "quote": "PLU lookup timed out"},
                            {"id": "prom:0000000000", "quote": "made up"},
                        ],
                    }
                ],
                "confidence": "medium",
            }
        ],
    }
    decided = collecting_client.post(
        f"/api/incidents/{created['id']}/decision",
        json={"action": "edit", "reviewer": "ana", "rca": edited},
    )
    assert decided.status_code == 200, decided.text
    evidence = decided.json()["final_rca"]["hypotheses"][0]["claims"][0]["evidence"]
    assert [e["id"] for e in evidence] == ["log:pos.log:1"]


def test_a_bad_start_time_is_rejected(collecting_client: TestClient) -> None:
    response = collecting_client.post(
        "/api/incidents", json={"message": "x", "started_at": "2026-11-29T10:00:00"}
    )
    assert response.status_code == 422
    assert "started_at" in response.json()["error"]["message"]
