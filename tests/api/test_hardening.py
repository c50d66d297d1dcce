"""Limits, headers, request ids, metrics and opaque internal errors."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from fastapi.testclient import TestClient
from tests.helpers import make_settings

from app.main import create_app
from app.sample_app import crash_checkout


@pytest.fixture(scope="module")
def limited(tmp_path_factory: pytest.TempPathFactory) -> Iterator[TestClient]:
    settings = make_settings(
        tmp_path_factory.mktemp("limits"), rate_limit_per_minute=3, max_body_bytes=2048
    )
    with TestClient(create_app(settings)) as client:
        yield client


def test_rate_limit_answers_429_with_retry_after(limited: TestClient) -> None:
    headers = {"X-API-Key": "bucket-of-this-test-only"}
    statuses = [limited.get("/api/incidents", headers=headers).status_code for _ in range(4)]
    assert statuses[:3] == [200, 200, 200] and statuses[3] == 429
    response = limited.get("/api/incidents", headers=headers)
    assert response.json()["error"]["code"] == "rate_limited"
    assert 1 <= int(response.headers["Retry-After"]) <= 60
    assert all(limited.get("/health").status_code == 200 for _ in range(5))


def test_body_size_cap_is_413(tmp_path: Path) -> None:
    # Its own app: with auth off every request counts against the one client address.
    settings = make_settings(tmp_path, rate_limit_per_minute=0, max_body_bytes=2048)
    with TestClient(create_app(settings)) as client:
        response = client.post("/api/incidents", json={"message": "x" * 3000})
    assert response.status_code == 413
    assert response.json()["error"]["code"] == "payload_too_large"


def test_request_id_is_returned_and_accepted(shared_client: TestClient) -> None:
    given = shared_client.get("/health", headers={"X-Request-ID": "abc-123"})
    assert given.headers["X-Request-ID"] == "abc-123"
    generated = shared_client.get("/health", headers={"X-Request-ID": "bad id with spaces"})
    assert generated.headers["X-Request-ID"] != "bad id with spaces"
    assert len(generated.headers["X-Request-ID"]) == 32


def test_security_headers(shared_client: TestClient) -> None:
    headers = shared_client.get("/health").headers
    csp = headers["Content-Security-Policy"]
    assert "script-src 'self'" in csp and "unsafe-inline" not in csp
    assert "frame-ancestors 'none'" in csp
    assert headers["X-Content-Type-Options"] == "nosniff"


def test_cors_closed_by_default(shared_client: TestClient) -> None:
    response = shared_client.options(
        "/api/incidents",
        headers={"Origin": "https://evil.example", "Access-Control-Request-Method": "POST"},
    )
    assert "access-control-allow-origin" not in {k.lower() for k in response.headers}


def test_docs_hidden_unless_debug(shared_client: TestClient) -> None:
    assert shared_client.get("/docs").status_code == 404
    assert shared_client.get("/openapi.json").status_code == 404


def test_metrics_expose_latency_nodes_and_pending_reviews(shared_client: TestClient) -> None:
    shared_client.post("/api/incidents", json=crash_checkout())
    body = shared_client.get("/metrics").text
    assert "rca_http_request_duration_seconds_bucket" in body
    assert 'rca_graph_node_duration_seconds_count{node="rag"}' in body
    assert 'rca_graph_node_duration_seconds_count{node="citation_check"}' in body
    assert "rca_reviews_pending" in body and "rca_llm_fallback_total" in body


def test_internal_error_is_opaque_500_with_an_id(tmp_path: Path) -> None:
    app = create_app(make_settings(tmp_path))

    @app.get("/boom")
    async def boom() -> None:
        raise RuntimeError("secret internal detail at /srv/app/db.py")

    with TestClient(app, raise_server_exceptions=False) as client:
        response = client.get("/boom")
    assert response.status_code == 500
    message = response.json()["error"]["message"]
    assert message.startswith("internal error (id ") and "secret" not in response.text
