"""A pending review survives a SIGKILL of a real uvicorn process."""

from __future__ import annotations

from pathlib import Path

import httpx
from tests.helpers import ServiceProcess, unique_name

from app.sample_app import crash_checkout


def test_pending_review_survives_sigkill_and_restart(tmp_path: Path) -> None:
    key = "reviewer-key-for-restart-test"
    env = {
        "RCA_STATE_DIR": str(tmp_path / "state"),
        "RCA_COLLECTION_NAME": unique_name("kb"),
        "RCA_API_KEYS": f"reviewer:{key}:ana",
    }
    auth = {"X-API-Key": key}
    server = ServiceProcess(env).start()
    try:
        created = httpx.post(
            f"{server.base_url}/api/incidents", json=crash_checkout(), headers=auth, timeout=60
        )
        assert created.status_code == 201
        incident_id = created.json()["id"]
        server.kill()

        server = ServiceProcess(env, port=server.port).start()
        pending = httpx.get(
            f"{server.base_url}/api/incidents",
            params={"status": "awaiting_review"},
            headers=auth,
            timeout=30,
        ).json()
        assert [i["id"] for i in pending["items"]] == [incident_id]
        again = httpx.get(
            f"{server.base_url}/api/incidents/{incident_id}", headers=auth, timeout=30
        ).json()
        assert again["rca"] == created.json()["rca"]

        decided = httpx.post(
            f"{server.base_url}/api/incidents/{incident_id}/decision",
            json={"action": "approve"},
            headers=auth,
            timeout=60,
        )
        assert decided.status_code == 200 and decided.json()["status"] == "approved"
        assert decided.json()["decision"]["reviewer"] == "ana"
        final = httpx.get(
            f"{server.base_url}/api/incidents/{incident_id}", headers=auth, timeout=30
        ).json()
        assert final["status"] == "approved" and final["final_rca"] == created.json()["rca"]
    finally:
        server.stop()
