"""The vector store over real Chroma: top-k, similarity clamp, reset."""

from __future__ import annotations

import chromadb
import pytest
from tests.helpers import unique_name

from app.rag.embedding import MiniLmEmbedder
from app.rag.ingest import KnowledgeChunk, chunk_id
from app.rag.knowledge import KnowledgeBase
from app.rag.store import VectorStore, similarity_from_distance


def chunk(text: str, code: str) -> KnowledgeChunk:
    return KnowledgeChunk(id=chunk_id(text), text=text, metadata={"error_code": code})


@pytest.mark.parametrize(
    ("distance", "expected"), [(0.0, 1.0), (0.25, 0.75), (1.0, 0.0), (1.7, 0.0), (-0.2, 1.0)]
)
def test_similarity_is_clamped(distance: float, expected: float) -> None:
    assert similarity_from_distance(distance) == pytest.approx(expected)


def test_top_k_is_capped_by_collection_size(embedder: MiniLmEmbedder) -> None:
    store = VectorStore(chromadb.EphemeralClient(), embedder, unique_name())
    store.reset(
        [chunk("payment timeout at the provider", "PAY-408"), chunk("chiller down", "CH-502")]
    )
    hits = store.query("payment provider slow", 5)
    assert [h.metadata["error_code"] for h in hits] == ["PAY-408", "CH-502"]
    assert all(0.0 <= h.similarity <= 1.0 for h in hits)
    assert hits[0].similarity > hits[1].similarity
    assert len(store.query("anything", 1)) == 1


def test_nearest_ids_match_the_full_query_and_chunks_reads_by_id(embedder: MiniLmEmbedder) -> None:
    store = VectorStore(chromadb.EphemeralClient(), embedder, unique_name())
    entries = [chunk("payment timeout at the provider", "PAY-408"), chunk("chiller down", "CH-502")]
    store.reset(entries)
    vector = embedder.embed_query("payment provider slow")
    full = store.query_vector(vector, 5)
    assert store.nearest(vector, 5) == [(h.id, h.similarity) for h in full]
    assert store.nearest(vector, 0) == []
    read = store.chunks([entries[1].id, "no-such-id"])
    assert [(c.id, c.text, c.metadata) for c in read] == [
        (entries[1].id, "chiller down", {"error_code": "CH-502"})
    ]


def test_reset_replaces_everything(embedder: MiniLmEmbedder) -> None:
    store = VectorStore(chromadb.EphemeralClient(), embedder, unique_name())
    store.reset([chunk("old entry", "OLD-1")])
    store.reset([chunk("new entry", "NEW-1")])
    assert store.count() == 1
    assert store.all_chunks()[0].metadata["error_code"] == "NEW-1"


def test_empty_store_returns_nothing(embedder: MiniLmEmbedder) -> None:
    store = VectorStore(chromadb.EphemeralClient(), embedder, unique_name())
    assert store.query("anything", 5) == []


def test_collection_uses_cosine_and_our_function(knowledge: KnowledgeBase) -> None:
    collection = knowledge.store.client.get_collection(knowledge.store.collection_name)
    configuration = collection.configuration_json
    assert configuration["hnsw"]["space"] == "cosine"
    assert configuration["embedding_function"]["name"] == "incident-rca-minilm-int8"


def test_knowledge_base_ranks_sample_incident_first(knowledge: KnowledgeBase) -> None:
    assert len(knowledge.documents()) == 10  # plus their windows (RCA_WINDOW_TOKENS)
    hits = knowledge.store.query(
        "CO-500 CHECKOUT_SERVICE_CRASH ZeroDivisionError while calculating checkout discount", 5
    )
    assert len(hits) == 5
    assert hits[0].metadata["error_code"] == "CO-500"


def test_whole_collection_reads_go_in_pages(
    embedder: MiniLmEmbedder, monkeypatch: pytest.MonkeyPatch
) -> None:
    # One get of ~33k chunks fails inside Chroma ("too many SQL variables"): reads are paged.
    store = VectorStore(chromadb.EphemeralClient(), embedder, unique_name())
    chunks = [chunk(f"entry number {n}", f"E-{n}") for n in range(11)]
    store.reset(chunks)
    monkeypatch.setattr("app.rag.store.READ_PAGE", 4)
    calls: list[int] = []
    collection = store._collection
    real_get = collection.get

    def counting_get(**kwargs: object) -> object:
        calls.append(1)
        return real_get(**kwargs)

    monkeypatch.setattr(collection, "get", counting_get)
    wanted = {c.id for c in chunks}
    assert {c.id for c in store.all_chunks()} == wanted
    assert len(calls) == 3  # 4 + 4 + 3
    assert set(store.ids()) == wanted == set(store.metadatas())
    assert set(store.vectors(sorted(wanted))) == wanted


def test_document_vectors_hold_each_doc_and_its_windows(embedder: MiniLmEmbedder) -> None:
    store = VectorStore(chromadb.EphemeralClient(), embedder, unique_name())
    doc = KnowledgeChunk("doc-1", "a long handbook", {"source_id": "h"})
    windows = [
        KnowledgeChunk(f"doc-1#w{n}", f"handbook part {n}", {"parent_id": "doc-1"})
        for n in range(3)
    ]
    single = KnowledgeChunk("doc-2", "a short note", {"source_id": "n"})
    store.reset([doc, *windows, single])
    found = store.document_vectors(["doc-1", "doc-2", "missing"])
    assert set(found) == {"doc-1", "doc-2"}
    assert (len(found["doc-1"]), len(found["doc-2"])) == (4, 1)
    own = store.vectors(["doc-1"])["doc-1"]
    assert any(list(map(float, v)) == list(map(float, own)) for v in found["doc-1"])
