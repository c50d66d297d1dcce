"""Candidates: one per document, whichever of its chunks a leg ranked."""

from __future__ import annotations

from app.rag.candidates import CollectionHits
from app.rag.ingest import KnowledgeChunk
from app.rag.store import ScoredChunk
from app.rag.windows import PARENT_KEY, WINDOW_END_KEY, WINDOW_START_KEY


def window(doc: str, n: int, similarity: float) -> ScoredChunk:
    metadata = {PARENT_KEY: doc, WINDOW_START_KEY: n * 10, WINDOW_END_KEY: n * 10 + 20}
    return ScoredChunk(
        id=f"{doc}#w{n}", text=f"{doc} part {n}", metadata=metadata, similarity=similarity
    )


def test_a_dense_ranking_holds_documents_at_their_best_chunk_cut_at_the_depth() -> None:
    hits = CollectionHits()
    chunks = [
        window("a", 2, 0.9),
        window("a", 0, 0.8),
        ScoredChunk(id="b", text="b whole", metadata={}, similarity=0.7),
        window("c", 1, 0.6),
        window("d", 0, 0.5),
    ]
    hits.add_dense("kb", chunks, documents=3)
    # As long as the keyword leg's list, whatever the windows: a, b, c (d is past the depth).
    assert hits.dense == [[(("kb", "a"), 0.9), (("kb", "b"), 0.7), (("kb", "c"), 0.6)]]
    assert set(hits.candidates) == {("kb", "a"), ("kb", "b"), ("kb", "c")}
    assert hits.candidates[("kb", "a")].id == "a"  # the document, not the window


def test_a_candidate_first_seen_as_a_window_becomes_its_document() -> None:
    hits = CollectionHits()
    hits.add_dense("kb", [window("a", 1, 0.9)], documents=5)
    whole = KnowledgeChunk(id="a", text="the whole text of a", metadata={"error_code": "X-1"})
    hits.resolve_windows({"a": whole}.get)
    candidate = hits.candidates[("kb", "a")]
    assert (candidate.id, candidate.text, candidate.metadata) == (
        "a",
        "the whole text of a",
        {"error_code": "X-1"},
    )
    assert candidate.dense_score == 0.9
