"""Two uvicorn workers on one PostgreSQL: shared state, exactly-once decisions, crash safety.

Both workers also notify one webhook receiver and take Alertmanager posts, so the shared alert
fingerprints and the shared notification outbox are exercised across processes too.
"""

from __future__ import annotations

import asyncio
import time
from collections import Counter
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from tests.intake.helpers import Receiver, alert, notification
from tests.storage.helpers import Cluster

from app.sample_app import crash_checkout

TIMEOUT = 120.0


@pytest.fixture(scope="module")
def receiver() -> Iterator[Receiver]:
    """The webhook both workers notify."""
    with Receiver() as server:
        yield server


@pytest.fixture(scope="module")
def cluster(
    tmp_path_factory: pytest.TempPathFactory,
    module_postgres_url: str,
    redis_url: str,
    receiver: Receiver,
) -> Iterator[Cluster]:
    """Workers A and B, started once for the module, with rate limits out of the way."""
    workers = Cluster(
        tmp_path_factory.mktemp("cluster"),
        module_postgres_url,
        redis_url,
        RCA_RATE_LIMIT_PER_MINUTE="100000",
        RCA_NOTIFY_WEBHOOK_URL=receiver.url,
    )
    try:
        yield workers.start()
    finally:
        workers.stop()


def create(cluster: Cluster, base_url: str) -> dict[str, Any]:
    response = httpx.post(
        f"{base_url}/api/incidents", json=crash_checkout(), headers=cluster.auth(), timeout=TIMEOUT
    )
    assert response.status_code == 201, f"{response.text}\n{cluster.logs()}"
    body: dict[str, Any] = response.json()
    assert body["status"] == "awaiting_review"
    return body


def get(cluster: Cluster, base_url: str, path: str, **params: str) -> Any:
    response = httpx.get(
        f"{base_url}{path}", params=params, headers=cluster.auth(), timeout=TIMEOUT
    )
    assert response.status_code == 200, response.text
    return response.json()


def decide(cluster: Cluster, base_url: str, incident_id: str, who: str = "ana") -> httpx.Response:
    return httpx.post(
        f"{base_url}/api/incidents/{incident_id}/decision",
        json={"action": "approve"},
        headers=cluster.auth(who),
        timeout=TIMEOUT,
    )


def test_created_on_one_worker_read_and_decided_on_the_other(cluster: Cluster) -> None:
    created = create(cluster, cluster.a.base_url)
    incident_id = created["id"]

    pending = get(cluster, cluster.b.base_url, "/api/incidents", status="awaiting_review")
    assert incident_id in [i["id"] for i in pending["items"]]
    seen = get(cluster, cluster.b.base_url, f"/api/incidents/{incident_id}")
    assert seen["rca"] == created["rca"] and seen["incident"] == created["incident"]

    decided = decide(cluster, cluster.b.base_url, incident_id, who="bob")
    assert decided.status_code == 200, decided.text
    assert decided.json()["status"] == "approved"
    assert decided.json()["decision"]["reviewer"] == "bob"

    final = get(cluster, cluster.a.base_url, f"/api/incidents/{incident_id}")
    assert final["status"] == "approved" and final["final_rca"] == created["rca"]
    audit = get(cluster, cluster.a.base_url, f"/api/incidents/{incident_id}/audit")
    assert [e["type"] for e in audit["events"]] == ["created", "draft", "decision"]


async def test_twenty_concurrent_decisions_across_workers_have_one_winner(
    cluster: Cluster,
) -> None:
    incident_id = create(cluster, cluster.a.base_url)["id"]
    reviewers = ["ana", "bob", "eve"]

    async with httpx.AsyncClient(timeout=TIMEOUT) as client:

        async def one(n: int) -> int:
            worker = cluster.a if n % 2 else cluster.b
            response = await client.post(
                f"{worker.base_url}/api/incidents/{incident_id}/decision",
                json={"action": "approve", "comment": f"decision {n}"},
                headers=cluster.auth(reviewers[n % 3]),
            )
            return response.status_code

        statuses = Counter(await asyncio.gather(*(one(n) for n in range(20))))

    assert statuses == {200: 1, 409: 19}, f"{statuses}\n{cluster.logs()}"
    for worker in (cluster.a, cluster.b):
        final = get(cluster, worker.base_url, f"/api/incidents/{incident_id}")
        assert final["status"] == "approved"
    audit = get(cluster, cluster.b.base_url, f"/api/incidents/{incident_id}/audit")
    assert [e["type"] for e in audit["events"]].count("decision") == 1
    again = decide(cluster, cluster.b.base_url, incident_id)
    assert again.status_code == 409 and "already decided" in again.json()["error"]["message"]


def test_a_pending_review_survives_a_killed_worker(cluster: Cluster) -> None:
    created = create(cluster, cluster.a.base_url)
    incident_id = created["id"]
    cluster.a.kill()

    pending = get(cluster, cluster.b.base_url, "/api/incidents", status="awaiting_review")
    assert incident_id in [i["id"] for i in pending["items"]]
    decided = decide(cluster, cluster.b.base_url, incident_id)
    assert decided.status_code == 200, decided.text
    assert decided.json()["final_rca"] == created["rca"]

    restarted = cluster.restart_a()
    final = get(cluster, restarted.base_url, f"/api/incidents/{incident_id}")
    assert final["status"] == "approved" and final["decision"]["reviewer"] == "ana"
    ready = httpx.get(f"{restarted.base_url}/ready", headers=cluster.auth(), timeout=TIMEOUT)
    assert ready.status_code == 200, ready.text
    assert ready.json()["components"]["database"] == {"ok": True}


def messages_about(receiver: Receiver, incident_id: str, settle: float = 3.0) -> list[str]:
    """Texts received about one incident, once nothing new has arrived for ``settle`` s.

    The settling time outlasts the dispatcher's interval, so a duplicate would have come.
    """
    seen = -1
    deadline = time.monotonic() + TIMEOUT
    while time.monotonic() < deadline:
        count = len(receiver.bodies())
        if count == seen:
            break
        seen = count
        time.sleep(settle)
    # Only what was posted to the webhook's own path: the port is the machine's, and a stray
    # request from another process (seen once under CI, with an empty body) is not a message.
    with receiver.arrived:
        bodies = [r["body"] for r in receiver.requests if r["path"] == "/hooks/rca"]
    messages = [b for b in bodies if isinstance(b, dict)]
    return [b["text"] for b in messages if f"/#/incidents/{incident_id}" in b["text"]]


async def test_one_alert_posted_to_both_workers_at_once_opens_one_incident(
    cluster: Cluster, receiver: Receiver
) -> None:
    body = notification(alert(alertname="PaymentProviderSlow", labels={"service": "checkout"}))
    async with httpx.AsyncClient(timeout=TIMEOUT) as client:

        async def post(base_url: str) -> dict[str, Any]:
            response = await client.post(
                f"{base_url}/api/intake/alertmanager", json=body, headers=cluster.auth()
            )
            assert response.status_code == 202, f"{response.text}\n{cluster.logs()}"
            answer: dict[str, Any] = response.json()
            return answer

        answers = await asyncio.gather(
            *(post(w.base_url) for w in (cluster.a, cluster.b, cluster.a, cluster.b))
        )
    created = [i for a in answers for i in a["incident_ids"]]
    assert len(created) == 1, answers
    assert sum(a["deduplicated"] for a in answers) == 3
    texts = await asyncio.to_thread(messages_about, receiver, created[0])
    assert [t.split(":")[0] for t in texts] == ["RCA ready for review"], texts


def test_each_milestone_is_notified_once_with_two_dispatchers(
    cluster: Cluster, receiver: Receiver
) -> None:
    incident_id = create(cluster, cluster.a.base_url)["id"]
    assert decide(cluster, cluster.b.base_url, incident_id, who="bob").status_code == 200
    texts = messages_about(receiver, incident_id)
    headlines = sorted(t.split(":")[0] for t in texts)
    assert headlines == ["RCA approved by bob", "RCA ready for review"], texts
