"""``GET /api/knowledge`` and ``POST /api/knowledge/reload`` through the real app and lifespan."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from fastapi import FastAPI
from fastapi.testclient import TestClient
from pydantic import SecretStr
from tests.helpers import unique_name
from tests.knowledge.helpers import edit_first_entry, make_sources

from app.core.config import Settings
from app.main import create_app
from app.rag.embedding import MODEL_ID
from app.rag.knowledge import KnowledgeBase

SUBMITTER = {"X-API-Key": "submitter-key-for-knowledge-tests"}
REVIEWER = {"X-API-Key": "reviewer-key-for-knowledge-tests"}
ADMIN = {"X-API-Key": "admin-key-for-knowledge-tests"}
KEYS = ",".join(
    f"{role}:{headers['X-API-Key']}:{role}"
    for role, headers in (("submitter", SUBMITTER), ("reviewer", REVIEWER), ("admin", ADMIN))
)


def knowledge_app(root: Path) -> FastAPI:
    """The real app over a private sources folder, with the knowledge router included."""
    settings = Settings(
        state_dir=root / "state",
        knowledge_dir=make_sources(root),
        collection_name=unique_name("kb"),
        api_keys=SecretStr(KEYS),
        rate_limit_per_minute=0,
        window_tokens=0,  # counts per entry below; windows: test_knowledge_sync
        _env_file=None,  # type: ignore[call-arg]
    )
    return create_app(settings)


@pytest.fixture
def client(tmp_path: Path) -> Iterator[TestClient]:
    with TestClient(knowledge_app(tmp_path)) as test_client:
        yield test_client


def sources(client: TestClient) -> Path:
    knowledge: KnowledgeBase = client.app.state.knowledge  # type: ignore[attr-defined]
    assert knowledge.source is not None
    return knowledge.source


def test_any_valid_key_reads_the_state_and_only_admins_reload(client: TestClient) -> None:
    assert client.get("/api/knowledge").status_code == 401
    body = client.get("/api/knowledge", headers=SUBMITTER).json()
    count = body["last_ingest"]["count"]
    assert body["model"]["id"] == MODEL_ID and len(body["model"]["sha256"]) == 64
    assert body["collections"][0] == {
        "name": body["collection"],
        "count": count,
        "embedding_model": MODEL_ID,
    }
    assert body["backend"] == "ephemeral" and body["reloading"] is False
    assert body["last_ingest"]["added"] == body["last_ingest"]["embedded"] == count > 10
    assert body["last_ingest"]["windows"] == 0 and len(body["families"]) == 10
    families = {f["error_code"]: f for f in body["families"]}
    assert families["PAY-408"]["services"][0] == "payment-service"
    assert "ReadTimeout" in families["PAY-408"]["signals"]["exceptions"]
    assert body["last_ingest"]["files"] == 3 and body["last_ingest"]["finished_at"]
    for headers in (SUBMITTER, REVIEWER):
        denied = client.post("/api/knowledge/reload", headers=headers)
        assert denied.status_code == 403
        assert denied.json()["error"]["code"] == "forbidden"


def test_reload_is_incremental_and_search_follows(client: TestClient) -> None:
    unchanged = client.post("/api/knowledge/reload", headers=ADMIN).json()
    count = unchanged["count"]
    assert (unchanged["added"], unchanged["unchanged"], unchanged["embedded"]) == (0, count, 0)

    query = {"query": "the walk-in freezer alarm sounds twice", "limit": 3}
    before = client.post("/rag/query", json=query, headers=SUBMITTER).json()
    assert all(n["file_name"] != "runbooks/extra.md" for n in before["nodes"])
    folder = sources(client)
    edit_first_entry(folder)
    (folder / "runbooks" / "extra.md").write_text(
        "# Freezer alarms\n\nWhen the walk-in freezer alarm sounds twice, call facilities.\n"
    )
    changed = client.post("/api/knowledge/reload", headers=ADMIN).json()
    assert (changed["added"], changed["removed"], changed["embedded"]) == (2, 1, 2)
    assert changed["count"] == count + 1 and changed["version"] != unchanged["version"]
    after = client.post("/rag/query", json=query, headers=SUBMITTER).json()
    assert after["nodes"][0]["file_name"] == "runbooks/extra.md"
    collection = client.app.state.knowledge.store.collection_name  # type: ignore[attr-defined]
    body = {**query, "collection_name": collection}
    ranked = client.post("/retrieve", json=body, headers=SUBMITTER).json()["context_chunks"]
    assert "freezer" in ranked[0]["text"]
    assert ranked[0]["explanation"]["bm25_rank"] == 1  # the keyword index was rebuilt
    state = client.get("/api/knowledge", headers=SUBMITTER).json()
    assert state["last_ingest"] == changed and state["collections"][0]["count"] == count + 1
    assert client.app.state.knowledge.version == changed["version"]  # type: ignore[attr-defined]


def test_malformed_source_is_rejected_and_nothing_changes(client: TestClient) -> None:
    before = client.get("/api/knowledge", headers=SUBMITTER).json()
    (sources(client) / "broken.txt").write_text("Symptoms: the Error line is missing\n")
    rejected = client.post("/api/knowledge/reload", headers=ADMIN)
    assert rejected.status_code == 422
    message = rejected.json()["error"]["message"]
    assert message.startswith("knowledge sources rejected: broken.txt: entry 1")
    assert str(sources(client)) not in message
    after = client.get("/api/knowledge", headers=SUBMITTER).json()
    assert after["last_ingest"] == before["last_ingest"]
    assert after["collections"] == before["collections"]


def test_a_second_reload_while_one_runs_is_409(client: TestClient) -> None:
    knowledge: KnowledgeBase = client.app.state.knowledge  # type: ignore[attr-defined]
    answers: list[int] = []

    def reload_over_http() -> None:
        answers.append(client.post("/api/knowledge/reload", headers=ADMIN).status_code)

    knowledge.reload(after=[reload_over_http])
    assert answers == [409]
    assert client.post("/api/knowledge/reload", headers=ADMIN).status_code == 200


def test_searches_are_served_while_reloading(client: TestClient) -> None:
    folder = sources(client)
    statuses: list[int] = []
    stop = threading.Event()

    def search() -> None:
        while not stop.is_set():
            answer = client.post("/rag/query", json={"query": "PAY-408"}, headers=SUBMITTER)
            statuses.append(answer.status_code)

    worker = threading.Thread(target=search)
    worker.start()
    try:
        for n in range(3):
            (folder / f"note-{n}.md").write_text(f"# Note {n}\n\nShelf label printer {n} jams.\n")
            assert client.post("/api/knowledge/reload", headers=ADMIN).status_code == 200
    finally:
        stop.set()
        worker.join(timeout=60)
    assert statuses and set(statuses) == {200}
