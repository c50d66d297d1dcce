from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest
from tests.helpers import unique_name
from tests.rag.helpers import FakeReranker, code_of

from app.core.config import Settings
from app.core.errors import NotFound, UpstreamError, ValidationFailed
from app.rag.embedding import MiniLmEmbedder
from app.rag.engine import RetrievalEngine, build_retrieval_engine
from app.rag.engine_config import EngineConfig
from app.rag.ingest import KnowledgeChunk, chunk_id
from app.rag.knowledge import KnowledgeBase
from app.rag.packing import Complexity
from app.rag.query import retrieval_query
from app.rag.store import VectorStore
from app.rag.windows import is_window, with_windows

OUT_OF_DOMAIN = "LDAP bind failures on the VPN concentrator"


def chunk(text: str, **metadata: Any) -> KnowledgeChunk:
    return KnowledgeChunk(id=chunk_id(text, "user-"), text=text, metadata=dict(metadata))


@pytest.fixture
def user_store(knowledge: KnowledgeBase, embedder: MiniLmEmbedder) -> Iterator[VectorStore]:
    store = VectorStore(knowledge.store.client, embedder, unique_name("user"))
    store.add(
        [
            chunk(
                "Team runbook: payment provider timeouts at checkout (PAY-408) -- page the "
                "payments on-call and switch to the secondary provider.",
                source_id="runbook-payments",
            ),
            chunk("Team note: the loyalty service is slow on Mondays.", source_id="note-1"),
        ]
    )
    yield store
    store.client.delete_collection(store.collection_name)


@pytest.mark.parametrize(
    ("query", "code"),
    [
        ("pay 408", "PAY-408"),
        ("PAY408", "PAY-408"),
        ("pos-503-plu", "POS-503-PLU"),
        ("POS422QTY rejects from till 7", "POS-422-QTY"),
        ("co500 spike after the promo launch", "CO-500"),
    ],
)
def test_codes_typed_differently_rank_their_doc_first(
    engine: RetrievalEngine, query: str, code: str
) -> None:
    result = engine.retrieve(query, 5)
    top = result.docs[0]
    assert code_of(top) == code
    assert top.bm25_rank == 1
    assert top.code_match


def test_every_result_explains_its_rank(engine: RetrievalEngine) -> None:
    result = engine.retrieve("PAY-408 payment provider read timeout at checkout", 3)
    assert not result.low_confidence
    assert result.queries == ["PAY-408 payment provider read timeout at checkout"]
    top = result.docs[0]
    assert code_of(top) == "PAY-408"
    why = top.explanation()
    assert why["dense_rank"] == 1 and why["bm25_rank"] == 1 and why["code_match"] is True
    # Two first ranks under RRF k=60, plus the boost: the spread of the fused scores.
    lowest = min(d.fused_score or 0.0 for d in engine.retrieve(OUT_OF_DOMAIN + " PAY-408", 50).docs)
    assert why["fused_score"] > 2 / 61 and why["fused_score"] >= 2 * 2 / 61 - lowest - 1e-9
    assert why["rerank_score"] is None
    assert 0.0 < why["dense_score"] <= 1.0 and why["bm25_score"] > 0
    assert len(result.docs) <= 3


def test_paraphrase_without_code_is_found(engine: RetrievalEngine) -> None:
    result = engine.retrieve(
        "Card tenders at the tills keep failing with a bad gateway reply while cash works", 3
    )
    assert code_of(result.docs[0]) == "POS-502-CARD"
    assert not result.docs[0].code_match


TYPO_QUERY = "invetnory servce unavalable 503, stok lookups faling"


def test_misspelt_query_is_searched_repaired(engine: RetrievalEngine) -> None:
    result = engine.retrieve(TYPO_QUERY, 3)
    assert result.query == TYPO_QUERY
    assert result.queries == ["inventory service unavailable 503, stock lookups failing"]
    assert any("invetnory -> inventory" in note for note in result.notes)
    assert code_of(result.docs[0]) == "INV-503"
    # A query spelt right is searched once.
    assert engine.retrieve("inventory service unavailable", 3).queries == [
        "inventory service unavailable"
    ]


def test_spelling_repair_can_be_switched_off(knowledge: KnowledgeBase) -> None:
    engine = RetrievalEngine(knowledge.store, EngineConfig(spelling_repair=False))
    result = engine.retrieve(TYPO_QUERY, 3)
    assert result.queries == [TYPO_QUERY]
    assert not any("spelling" in note for note in result.notes)


@pytest.mark.parametrize(
    "query",
    [OUT_OF_DOMAIN, "Guest Wi-Fi captive portal at head office does not load the splash page"],
)
def test_out_of_domain_queries_are_low_confidence(engine: RetrievalEngine, query: str) -> None:
    result = engine.retrieve(query, 5)
    assert result.low_confidence
    assert result.docs == []


def test_a_clear_lead_under_the_floor_is_kept_with_a_note(knowledge: KnowledgeBase) -> None:
    shipped = RetrievalEngine(knowledge.store, EngineConfig())
    result = shipped.retrieve("fridge data missing", 5)
    assert [code_of(d) for d in result.docs] == ["CH-502"]
    assert not result.low_confidence
    assert any("leads every other family" in note for note in result.notes)
    off = RetrievalEngine(knowledge.store, EngineConfig(lead_floor=0.0))
    assert off.retrieve("fridge data missing", 5).low_confidence


def test_exact_code_survives_a_floor_nothing_else_passes(knowledge: KnowledgeBase) -> None:
    engine = RetrievalEngine(knowledge.store, EngineConfig(score_floor=0.99))
    result = engine.retrieve("POS-422-QTY alert fired", 5)
    assert [code_of(d) for d in result.docs] == ["POS-422-QTY"]
    assert result.docs[0].code_match


def test_code_match_boost_can_be_switched_off(knowledge: KnowledgeBase) -> None:
    boosted = RetrievalEngine(knowledge.store, EngineConfig(fusion="rrf"))
    plain = RetrievalEngine(knowledge.store, EngineConfig(fusion="rrf", code_match_boost=0.0))
    top = plain.retrieve("PAY-408 payment timeout", 1).docs[0]
    # Without the boost the fused score is RRF alone: at most two first ranks.
    assert top.code_match and top.fused_score is not None and top.fused_score <= 2 / 61 + 1e-9
    lifted = boosted.retrieve("PAY-408 payment timeout", 1).docs[0]
    assert lifted.id == top.id and (lifted.fused_score or 0.0) > top.fused_score


def test_results_are_deterministic(engine: RetrievalEngine) -> None:
    first = engine.retrieve("checkout fails", 10)
    second = engine.retrieve("checkout fails", 10)
    assert [d.id for d in first.docs] == [d.id for d in second.docs]
    fused = [d.fused_score or 0.0 for d in first.docs]
    assert fused == sorted(fused, reverse=True)


@pytest.mark.parametrize("query", ["", "   \n\t"])
def test_blank_query_is_rejected(engine: RetrievalEngine, query: str) -> None:
    with pytest.raises(ValidationFailed):
        engine.retrieve(query, 5)


def test_a_too_long_query_is_cut_and_searched_and_a_bad_limit_rejected(
    knowledge: KnowledgeBase,
) -> None:
    engine = RetrievalEngine(knowledge.store, EngineConfig(query_max_chars=7))
    result = engine.retrieve("PAY-408 and a long tail of log text", 5)
    assert result.query == "PAY-408"
    assert code_of(result.docs[0]) == "PAY-408"
    assert "query cut to its first 7 characters" in result.notes
    with pytest.raises(ValidationFailed):
        engine.retrieve("PAY-408", 0)


def test_a_keyword_only_hit_is_judged_by_its_real_similarity(knowledge: KnowledgeBase) -> None:
    engine = RetrievalEngine(knowledge.store, EngineConfig(legs="keyword", score_floor=0.0))
    result = engine.retrieve("payment provider read timeout", 5)
    assert result.docs and all(d.bm25_rank is not None for d in result.docs)
    # The dense leg did not run, yet every doc carries its cosine from the stored vector.
    assert all(d.dense_rank is None and d.dense_score is not None for d in result.docs)
    assert all(0.0 <= (d.keyword_coverage or 0.0) <= 1.0 for d in result.docs)


def test_each_fusion_and_leg_ranks_the_named_code_first(knowledge: KnowledgeBase) -> None:
    for config in (
        EngineConfig(fusion="zscore", dense_weight=0.7),
        EngineConfig(legs="dense"),
        EngineConfig(legs="keyword"),
    ):
        engine = RetrievalEngine(knowledge.store, config)
        top = engine.retrieve("PAY-408 payment provider read timeout at checkout", 3).docs[0]
        assert code_of(top) == "PAY-408", config
        engine.close()


def test_multi_collection_search_fuses_both(
    engine: RetrievalEngine, user_store: VectorStore
) -> None:
    names = [engine.collection_name, user_store.collection_name]
    result = engine.retrieve_collections("payment provider timeouts at checkout PAY-408", names, 15)
    collections = {d.collection for d in result.docs}
    assert collections == set(names)
    assert result.notes == []
    runbook = next(d for d in result.docs if d.collection == user_store.collection_name)
    assert runbook.metadata["source_id"] == "runbook-payments"
    assert runbook.bm25_rank == 1


def test_multi_collection_partial_and_missing(
    engine: RetrievalEngine, user_store: VectorStore
) -> None:
    missing = unique_name("missing")
    result = engine.retrieve_collections("PAY-408", [missing, user_store.collection_name], 5)
    assert {d.collection for d in result.docs} == {user_store.collection_name}
    assert result.notes == [f"collection '{missing}' does not exist; skipped"]
    with pytest.raises(NotFound):
        engine.retrieve_collections("PAY-408", [missing, unique_name("gone")], 5)


def test_new_chunks_reach_the_keyword_index(
    engine: RetrievalEngine, user_store: VectorStore
) -> None:
    names = [user_store.collection_name]
    assert engine.retrieve_collections("zebra firmware", names, 5).low_confidence
    user_store.add([chunk("Zebra scanner firmware 7.1 drops EAN-13 reads.", source_id="n2")])
    result = engine.retrieve_collections("zebra firmware", names, 5)
    assert result.docs and result.docs[0].metadata["source_id"] == "n2"
    assert result.docs[0].bm25_rank == 1


def test_refresh_rebuilds_the_base_index(
    knowledge: KnowledgeBase, embedder: MiniLmEmbedder
) -> None:
    store = VectorStore(knowledge.store.client, embedder, unique_name("kb"))
    try:
        store.add([chunk("Error: ZZ-999 WIDGET_JAM\nSymptoms: widget jams.", error_code="ZZ-999")])
        engine = RetrievalEngine(store, EngineConfig(score_floor=0.99))
        assert code_of(engine.retrieve("zz 999", 3).docs[0]) == "ZZ-999"
        store.reset(
            [chunk("Error: YY-111 GADGET_JAM\nSymptoms: gadget jams.", error_code="YY-111")]
        )
        engine.refresh()
        assert engine.retrieve("zz 999", 3).low_confidence
        assert code_of(engine.retrieve("YY111", 3).docs[0]) == "YY-111"
    finally:
        store.client.delete_collection(store.collection_name)


class FailingStore(VectorStore):
    """A real store whose searches fail the way a lost Chroma server does."""

    def nearest(self, vector: Any, k: int) -> list[tuple[str, float]]:
        raise ConnectionError("chroma at /var/lib/secret:8000 refused the connection")


def test_store_failure_is_an_upstream_error(
    knowledge: KnowledgeBase, embedder: MiniLmEmbedder
) -> None:
    store = FailingStore(knowledge.store.client, embedder, knowledge.store.collection_name)
    engine = RetrievalEngine(store, EngineConfig())
    with pytest.raises(UpstreamError) as caught:
        engine.retrieve("PAY-408", 5)
    assert "secret" not in caught.value.message
    assert isinstance(caught.value.__cause__, ConnectionError)


def test_pack_context_uses_the_original_query(engine: RetrievalEngine) -> None:
    result = engine.retrieve("checkout errors", 10)
    packed = engine.pack_context("checkout errors", result.docs)
    assert packed.complexity == Complexity.SIMPLE
    assert packed.budget_chars == 512 * 4
    assert packed.chunks and packed.chunks == result.docs[: len(packed.chunks)]
    assert packed.citations == sorted({code_of(d) for d in packed.chunks})


def test_factory_builds_from_settings(knowledge: KnowledgeBase) -> None:
    settings = Settings(rrf_k=5, score_floor=0.2, budget_simple=100, _env_file=None)  # type: ignore[call-arg]
    engine = build_retrieval_engine(settings, knowledge, reranker=FakeReranker("PAYMENT_TIMEOUT"))
    assert engine.config.rrf_k == 5 and engine.config.score_floor == 0.2
    assert engine.config.budgets.simple == 100
    assert [code_of(d) for d in engine.retrieve("payment timeout", 5).docs] == ["PAY-408"]
    assert build_retrieval_engine(Settings(_env_file=None), knowledge).reranker is None  # type: ignore[call-arg]


def test_one_code_lifts_one_doc_not_every_doc_tagged_with_it(
    knowledge: KnowledgeBase, embedder: MiniLmEmbedder
) -> None:
    store = VectorStore(knowledge.store.client, embedder, unique_name("tagged"))
    texts = [
        "IL-10 levels in septic patients predict mortality",
        "IL-10 knockout mice develop colitis",
        "IL-10 secretion by regulatory T cells",
        "Serum IL-10 after cardiac surgery",
    ]
    store.add([chunk(t, error_code="IL-10") for t in texts])
    try:
        engine = RetrievalEngine(store, EngineConfig(score_floor=0.0))
        docs = engine.retrieve("IL-10 knockout mice colitis", 4).docs
        fused = [d.fused_score or 0.0 for d in docs]
        assert docs[0].text == texts[1]
        # Only the best-fused doc of the code is lifted above the rest; the others keep the
        # small fused scores of their ranks instead of all jumping the queue.
        assert fused[0] - fused[1] > fused[1] - fused[-1]
        assert all(d.code_match for d in docs)
        engine.close()
    finally:
        store.client.delete_collection(store.collection_name)


def test_a_long_document_is_found_by_a_window_and_returned_whole(
    knowledge: KnowledgeBase, embedder: MiniLmEmbedder
) -> None:
    filler = " ".join(
        f"Section {n}: the nightly ledger export copies settled orders to the warehouse."
        for n in range(12)
    )
    tail = "Finally, the freezer compressor in aisle nine trips its breaker when defrosting."
    long_doc = chunk(f"Store operations handbook\n{filler} {tail}", source_id="handbook")
    other = chunk("Team note: the loyalty service is slow on Mondays.", source_id="note-1")
    stored = with_windows([long_doc, other], 48, 24)
    assert len(stored) > 3
    store = VectorStore(knowledge.store.client, embedder, unique_name("windows"))
    store.add(stored)
    engine = RetrievalEngine(store, EngineConfig())
    try:
        docs = engine.retrieve("freezer compressor trips its breaker while defrosting", 5).docs
        top = docs[0]
        # One candidate for the document, carrying its whole text, never a window's.
        assert (top.id, top.text) == (long_doc.id, long_doc.text)
        assert [d.id for d in docs].count(long_doc.id) == 1
        assert not any(is_window(d.metadata) for d in docs)
        # The dense leg scored its best window, closer than the whole handbook's vector.
        whole = store.vectors([long_doc.id])[long_doc.id]
        query = embedder.embed_query("freezer compressor trips its breaker while defrosting")
        assert top.dense_score is not None
        assert top.dense_score > float(sum(a * b for a, b in zip(query, whole, strict=True)))
        assert len(engine._indexes[store.collection_name].keywords) == 2  # windows not indexed
    finally:
        engine.close()
        store.client.delete_collection(store.collection_name)


def test_scored_unranked_gives_every_ranking_every_candidate(knowledge: KnowledgeBase) -> None:
    query = "customers cannot pay"
    vector = knowledge.store.embedder.embed_query(query)
    for unranked, complete in (("lowest", False), ("scored", True)):
        engine = RetrievalEngine(knowledge.store, EngineConfig(zscore_unranked=unranked))
        index = engine._keyword_index(knowledge.store)
        # One doc per leg: the legs disagree, so each list misses the candidate the other found.
        hits = engine._search_collection(knowledge.store, None, [query], [vector], [], 1)
        keys = set(hits.candidates)
        assert len(keys) == 2
        lists = [*hits.dense, *hits.keyword]
        assert all({k for k, _ in ranking} == keys for ranking in lists) is complete
        if complete:  # the added entries are that leg's own scores of those docs
            bm25 = index.keywords.score_documents(query, [k[1] for k in keys])
            assert dict(hits.keyword[0]) == pytest.approx({k: bm25[k[1]].score for k in keys})
            assert all(-1.0 <= s <= 1.0 for _, s in hits.dense[0])
        engine.close()


class CountingStore(VectorStore):
    """A real store that records which documents' vectors it was asked for."""

    asked: list[str]

    def document_vectors(self, doc_ids: Any) -> dict[str, list[Any]]:
        self.asked = [*self.asked, *doc_ids]
        return super().document_vectors(doc_ids)


def test_stored_vectors_are_read_once_per_index(
    knowledge: KnowledgeBase, embedder: MiniLmEmbedder
) -> None:
    store = CountingStore(knowledge.store.client, embedder, knowledge.store.collection_name)
    store.asked = []
    # One doc per leg: the legs disagree on it, so each has a candidate to score from vectors.
    engine = RetrievalEngine(store, EngineConfig(candidates=1))
    try:
        first = engine.retrieve("customers cannot pay", 1)
        asked = list(store.asked)
        assert asked and len(asked) == len(set(asked))
        again = engine.retrieve("customers cannot pay", 1)
        assert store.asked == asked  # the second request read no vector from the store
        assert [(d.id, d.fused_score) for d in again.docs] == [
            (d.id, d.fused_score) for d in first.docs
        ]
        engine.refresh()  # a new index starts with no vectors read
        engine.retrieve("customers cannot pay", 1)
        assert len(store.asked) > len(asked)
    finally:
        engine.close()


def test_a_chunk_written_after_the_index_is_read_from_the_store(
    knowledge: KnowledgeBase, embedder: MiniLmEmbedder
) -> None:
    store = VectorStore(knowledge.store.client, embedder, unique_name("late"))
    store.add([chunk("Team note: the loyalty service is slow on Mondays.", source_id="note-1")])
    engine = RetrievalEngine(store, EngineConfig())
    try:
        late = chunk("Freezer compressor in aisle nine trips its breaker.", source_id="late")
        store.add([late])  # no refresh(): the base index is re-counted at most once a second
        docs = engine.retrieve("freezer compressor breaker trips", 5).docs
        assert (docs[0].id, docs[0].text, docs[0].metadata) == (late.id, late.text, late.metadata)
    finally:
        engine.close()
        store.client.delete_collection(store.collection_name)


def test_feedback_searches_the_dense_leg_again_with_the_moved_query(
    knowledge: KnowledgeBase,
) -> None:
    query = "customers cannot pay at the tills"
    store = knowledge.store
    plain = RetrievalEngine(store, EngineConfig())
    moved_engine = RetrievalEngine(store, EngineConfig(prf_docs=2, prf_weight=0.8))
    try:
        first = plain.retrieve(query, 10).docs
        vector = np.asarray(store.embedder.embed_query(query), dtype=np.float32)
        family = store.document_vectors([d.id for d in first[:2]])
        best = [max(np.asarray(family[d.id]), key=lambda c: float(c @ vector)) for d in first[:2]]
        moved = vector + 0.8 * np.mean(best, axis=0)
        moved /= np.linalg.norm(moved)
        docs = moved_engine.retrieve(query, 10).docs
        assert docs and [d.id for d in docs] != [d.id for d in first]
        for doc in docs:
            chunks = np.asarray(store.document_vectors([doc.id])[doc.id])
            assert doc.dense_score == pytest.approx(float(np.max(chunks @ moved)), abs=1e-4)
    finally:
        plain.close()
        moved_engine.close()


def test_a_foreign_report_finds_its_family(engine: RetrievalEngine) -> None:
    message = "De kassa weigert de retour van een klant: 'aantal moet groter dan 0 zijn'."
    raw = engine.retrieve(message, 3)
    assert raw.low_confidence and not raw.docs  # the Dutch words say nothing to the model
    found = engine.retrieve(retrieval_query({"message": message}), 3)
    assert not found.low_confidence
    assert found.docs[0].metadata["error_code"] == "POS-422-QTY"
