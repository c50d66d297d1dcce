"""CI guard: SciFact's first 50 test queries over a reduced corpus stay in their measured band.

The reduced corpus is the judged docs of those queries plus the first 150 other abstracts in
file order (201 docs), small enough to embed in seconds on two cores. A pipeline bug (padding,
pooling, normalisation, truncation, tokenisation, fusion) moves these numbers well outside the
band; the full-split figures are in docs/architecture/retrieval-evaluation.md.
"""

from __future__ import annotations

import pytest
from tests.shared_data import SCIFACT_DIR, require_shared

from app.evaluation.beir import evaluate_beir, load_beir
from app.rag.embedding import default_embedder

QUERIES = 50
OTHER_DOCS = 150
TOLERANCE = 0.02
#: Measured on the shared SciFact copy with the int8 MiniLM (see the architecture doc).
BANDS = {
    "dense": {"ndcg@10": 0.9313, "mrr@10": 0.9102, "recall@100": 1.0},
    "bm25": {"ndcg@10": 0.9371, "mrr@10": 0.9287, "recall@100": 0.98},
    "hybrid": {"ndcg@10": 0.9456, "mrr@10": 0.9340, "recall@100": 1.0},
}


@pytest.mark.slow
def test_scifact_subset_stays_in_band() -> None:
    folder = require_shared(SCIFACT_DIR)
    data = load_beir(folder, "test", limit=QUERIES, max_corpus=OTHER_DOCS)
    assert len(data.queries) == QUERIES
    assert len(data.doc_ids) == 201
    result = evaluate_beir(data, list(BANDS), default_embedder, cache_dir=None)
    measured = {
        mode: {metric: round(result["modes"][mode][metric], 4) for metric in band}
        for mode, band in BANDS.items()
    }
    for mode, band in BANDS.items():
        for metric, expected in band.items():
            assert measured[mode][metric] == pytest.approx(expected, abs=TOLERANCE), measured
