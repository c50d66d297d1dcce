"""Faults: a dead LLM, an unreachable Redis, a busy checkpointer — clear answers, nothing lost."""

from __future__ import annotations

import sqlite3
import threading
import time
from pathlib import Path

from fastapi.testclient import TestClient
from pydantic import SecretStr
from tests.helpers import free_port, make_settings

from app.main import create_app
from app.sample_app import crash_checkout


def test_llm_endpoint_down_gives_a_fallback_rca_not_a_5xx(tmp_path: Path) -> None:
    dead = f"http://127.0.0.1:{free_port()}/v1"
    settings = make_settings(
        tmp_path,
        llm="openai:some-model",
        llm_base_url=dead,
        llm_api_key=SecretStr("test-key"),
        llm_timeout_seconds=5,
    )
    with TestClient(create_app(settings)) as client:
        response = client.post("/api/incidents", json=crash_checkout())
        assert response.status_code == 201
        provenance = response.json()["rca"]["provenance"]
        assert provenance["generator"] == "extractive"
        assert provenance["fallback_reason"].startswith("llm:openai/some-model")
        fallbacks = [
            line
            for line in client.get("/metrics").text.splitlines()
            if line.startswith("rca_llm_fallback_total ")
        ]
        assert fallbacks and float(fallbacks[0].split()[1]) >= 1


def test_unreachable_redis_makes_ready_false_with_a_reason(tmp_path: Path) -> None:
    settings = make_settings(tmp_path, redis_url=f"redis://127.0.0.1:{free_port()}/0")
    with TestClient(create_app(settings)) as client:
        response = client.get("/ready")
        assert response.status_code == 503
        body = response.json()
        assert body["components"]["redis"]["ok"] is False
        assert any(r.startswith("redis:") for r in body["reasons"])
        assert client.get("/health").status_code == 200


def test_busy_checkpointer_is_waited_for_not_failed(tmp_path: Path) -> None:
    settings = make_settings(tmp_path)
    with TestClient(create_app(settings)) as client:
        holder = sqlite3.connect(settings.checkpoint_db_path, timeout=30, check_same_thread=False)
        holder.execute("BEGIN IMMEDIATE")  # another writer holds the database lock

        def release() -> None:
            time.sleep(1.0)
            holder.rollback()

        releaser = threading.Thread(target=release)
        releaser.start()
        response = client.post("/api/incidents", json=crash_checkout())
        releaser.join()
        holder.close()
        assert response.status_code == 201
        assert response.json()["status"] == "awaiting_review"


async def test_concurrent_incidents_do_not_lock_the_database(tmp_path: Path) -> None:
    """Regression: two SQLite connections made concurrent creates fail with "database is locked"."""
    import asyncio

    import httpx

    from app.main import lifespan

    app = create_app(make_settings(tmp_path))
    async with lifespan(app):
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://test") as client:
            responses = await asyncio.gather(
                *(client.post("/api/incidents", json=crash_checkout()) for _ in range(16))
            )
    assert [r.status_code for r in responses] == [201] * 16
