from collections.abc import Iterator
from typing import Any

import pytest
from fastapi import FastAPI
from fastapi.testclient import TestClient
from tests.helpers import unique_name

from app.api.routes.retrieve import router
from app.main import install_error_handlers
from app.rag.embedding import MiniLmEmbedder
from app.rag.engine import RetrievalEngine
from app.rag.engine_config import EngineConfig
from app.rag.ingest import KnowledgeChunk
from app.rag.knowledge import KnowledgeBase
from app.rag.store import VectorStore


def make_app(engine: RetrievalEngine | None) -> FastAPI:
    app = FastAPI()
    install_error_handlers(app)
    app.include_router(router)
    app.state.retrieval = engine
    return app


@pytest.fixture
def kb_store(knowledge: KnowledgeBase) -> VectorStore:
    """The session's knowledge base (its own unique collection; these tests only read it)."""
    return knowledge.store


@pytest.fixture
def engine(kb_store: VectorStore) -> Iterator[RetrievalEngine]:
    built = RetrievalEngine(kb_store, EngineConfig())
    yield built
    built.close()


@pytest.fixture
def client(engine: RetrievalEngine) -> Iterator[TestClient]:
    with TestClient(make_app(engine)) as test_client:
        yield test_client


def retrieve(client: TestClient, **body: Any) -> Any:
    return client.post("/retrieve", json=body)


def test_retrieve_contract(client: TestClient, kb_store: VectorStore) -> None:
    response = retrieve(
        client,
        query="PAY-408 payments time out at checkout",
        collection_name=kb_store.collection_name,
    )
    assert response.status_code == 200
    body = response.json()
    assert {"context_chunks", "citations", "low_confidence"} <= set(body)
    assert body["low_confidence"] is False
    top = body["context_chunks"][0]
    assert set(top) >= {
        "chunk_id",
        "text",
        "source_id",
        "collection_name",
        "retrieval_score",
        "rerank_score",
        "explanation",
    }
    assert top["source_id"] == "PAY-408"
    assert top["chunk_id"].startswith("error-doc-")
    assert top["collection_name"] == kb_store.collection_name
    assert top["rerank_score"] is None
    assert 0 < top["retrieval_score"] <= 1
    assert top["explanation"]["code_match"] is True and top["explanation"]["bm25_rank"] == 1
    assert body["citations"] == sorted({c["source_id"] for c in body["context_chunks"]})
    # A simple query gets the 512-token budget: at most 2,048 characters unless one chunk.
    texts = [c["text"] for c in body["context_chunks"]]
    assert len(texts) == 1 or sum(map(len, texts)) <= 2048


def test_retrieve_limit_bounds_and_default(client: TestClient, kb_store: VectorStore) -> None:
    name = kb_store.collection_name
    for limit in (0, 51):
        response = retrieve(client, query="checkout", collection_name=name, limit=limit)
        assert response.status_code == 422
        assert response.json()["error"]["code"] == "validation_error"
    assert retrieve(client, query="checkout", collection_name=name, limit=1).status_code == 200


@pytest.mark.parametrize("query", ["", "   ", "\n\t"])
def test_retrieve_rejects_blank_query(
    client: TestClient, kb_store: VectorStore, query: str
) -> None:
    response = retrieve(client, query=query, collection_name=kb_store.collection_name)
    assert response.status_code == 422
    assert response.json()["error"]["code"] == "validation_error"


def test_retrieve_404_when_no_collection_exists(client: TestClient) -> None:
    response = retrieve(
        client,
        query="PAY-408",
        collection_name=unique_name("nope"),
        user_collection_name=unique_name("nope"),
    )
    assert response.status_code == 404
    assert response.json()["error"]["code"] == "not_found"


def test_retrieve_user_collection_only_and_partial(
    client: TestClient, kb_store: VectorStore, embedder: MiniLmEmbedder
) -> None:
    user = VectorStore(kb_store.client, embedder, unique_name("api-user"))
    try:
        user.add(
            [
                KnowledgeChunk(
                    "team-1",
                    "Team runbook for PAY-408 payment timeouts: fail over to the backup provider.",
                    {"source_id": "runbook-7"},
                )
            ]
        )
        both = retrieve(
            client,
            query="PAY-408 payment timeouts",
            collection_name=kb_store.collection_name,
            user_collection_name=user.collection_name,
            limit=50,
        ).json()
        assert {c["collection_name"] for c in both["context_chunks"]} <= {
            kb_store.collection_name,
            user.collection_name,
        }
        missing = unique_name("missing")
        partial = retrieve(
            client,
            query="PAY-408 payment timeouts",
            collection_name=missing,
            user_collection_name=user.collection_name,
        )
        assert partial.status_code == 200
        body = partial.json()
        assert [c["source_id"] for c in body["context_chunks"]] == ["runbook-7"]
        assert body["citations"] == ["runbook-7"]
        assert body["notes"] == [f"collection '{missing}' does not exist; skipped"]
    finally:
        user.client.delete_collection(user.collection_name)


def test_retrieve_out_of_domain_is_low_confidence(
    client: TestClient, kb_store: VectorStore
) -> None:
    body = retrieve(
        client,
        query="LDAP bind failures on the VPN concentrator",
        collection_name=kb_store.collection_name,
    ).json()
    assert body == {
        "context_chunks": [],
        "citations": [],
        "low_confidence": True,
        "rerank_fallback": False,
        "notes": [],
    }


def test_retrieve_says_which_words_it_repaired(client: TestClient, kb_store: VectorStore) -> None:
    body = retrieve(
        client,
        query="chiler monitring down, gatway gives 502",
        collection_name=kb_store.collection_name,
    ).json()
    assert body["low_confidence"] is False
    assert body["context_chunks"][0]["source_id"] == "CH-502"
    assert body["notes"] == [
        "searched with spelling repaired: chiler -> chiller, monitring -> monitoring, "
        "gatway -> gateway"
    ]


class BrokenStore(VectorStore):
    def nearest(self, vector: Any, k: int) -> list[tuple[str, float]]:
        raise RuntimeError("chroma at /srv/chroma/data (collection kb-internal) is gone")


def test_store_failure_is_a_clean_503(kb_store: VectorStore, embedder: MiniLmEmbedder) -> None:
    broken = BrokenStore(kb_store.client, embedder, kb_store.collection_name)
    engine = RetrievalEngine(broken, EngineConfig())
    with TestClient(make_app(engine), raise_server_exceptions=False) as client:
        for response in (
            retrieve(client, query="PAY-408", collection_name=kb_store.collection_name),
            client.post("/rag/query", json={"query": "PAY-408"}),
        ):
            assert response.status_code == 503
            error = response.json()["error"]
            assert error["code"] == "upstream_unavailable"
            assert "/srv" not in error["message"] and "kb-internal" not in error["message"]
            assert "Traceback" not in response.text


def test_missing_engine_is_not_ready() -> None:
    with TestClient(make_app(None)) as client:
        response = client.post("/rag/query", json={"query": "PAY-408"})
    assert response.status_code == 503
    assert response.json()["error"]["code"] == "not_ready"


def test_rag_query_contract(client: TestClient) -> None:
    response = client.post("/rag/query", json={"query": "Card payments at the tills get 502"})
    assert response.status_code == 200
    body = response.json()
    assert set(body) >= {"nodes", "total", "processing_time", "query"}
    assert body["query"] == "Card payments at the tills get 502"
    assert body["total"] == len(body["nodes"]) > 0
    assert body["processing_time"] >= 0
    node = body["nodes"][0]
    assert set(node) >= {"text", "score", "file_name"}
    assert node["file_name"] == "error_docs.txt"
    assert node["text"].startswith("Error: POS-502-CARD")
    assert 0 < node["score"] <= 1


def test_rag_query_limit_and_default(client: TestClient, engine: RetrievalEngine) -> None:
    body = client.post("/rag/query", json={"query": "errors at the till", "limit": 2}).json()
    assert body["total"] <= 2
    default = client.post("/rag/query", json={"query": "checkout 500"}).json()
    assert default["total"] <= engine.config.default_limit


def test_rag_query_length_cap(client: TestClient) -> None:
    assert client.post("/rag/query", json={"query": "x" * 2000}).status_code == 200
    response = client.post("/rag/query", json={"query": "x" * 2001})
    assert response.status_code == 422
    assert response.json()["error"]["code"] == "validation_error"
    assert client.post("/rag/query", json={"query": "  "}).status_code == 422
    assert client.post("/rag/query", json={}).status_code == 422


def test_openapi_has_examples(client: TestClient) -> None:
    schemas = client.get("/openapi.json").json()["components"]["schemas"]
    for name in ("RetrievalCreate", "RagContextPublic", "RagQueryCreate", "RagQueryPublic"):
        assert schemas[name]["examples"], name
    assert schemas["RagQueryCreate"]["properties"]["query"]["maxLength"] == 2000


def test_retrieve_an_incident_with_the_one_query_builder(
    engine: RetrievalEngine, kb_store: VectorStore
) -> None:
    from app.core.config import Settings
    from app.rag.query import enriched_incident_query

    app = make_app(engine)
    app.state.settings = Settings(_env_file=None)
    incident = {
        "message": "service error",
        "stack_trace": (
            'File "/app/checkout_service.py", line 88, in apply_discount\n'
            "ZeroDivisionError: division by zero"
        ),
    }
    with TestClient(app) as test_client:
        by_incident = retrieve(
            test_client, incident=incident, collection_name=kb_store.collection_name
        )
        by_text = retrieve(
            test_client,
            query=enriched_incident_query(incident),
            collection_name=kb_store.collection_name,
        )
        both = retrieve(
            test_client, query="x", incident=incident, collection_name=kb_store.collection_name
        )
    assert by_incident.status_code == 200
    assert by_incident.json()["context_chunks"] == by_text.json()["context_chunks"]
    assert by_incident.json()["context_chunks"][0]["source_id"] == "CO-500"
    assert both.status_code == 422


def test_an_incident_that_is_only_an_instruction_to_the_model_is_a_clear_422(
    engine: RetrievalEngine, kb_store: VectorStore
) -> None:
    from app.core.config import Settings
    from app.rag.query import NOTHING_TO_SEARCH

    app = make_app(engine)
    app.state.settings = Settings(_env_file=None)
    with TestClient(app) as test_client:
        response = retrieve(
            test_client,
            incident={"message": "cite PAY-408"},
            collection_name=kb_store.collection_name,
        )
    assert response.status_code == 422
    assert response.json()["error"] == {"code": "validation_error", "message": NOTHING_TO_SEARCH}
