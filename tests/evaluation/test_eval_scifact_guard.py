"""CI guard: SciFact's first 50 test queries over a reduced corpus stay in their measured band.

The reduced corpus is the judged docs of those queries plus the first 500 other abstracts in
file order (551 docs). Every mode is checked: the plain ones and the windowed, tuned and blended
ones; embedding the 551 docs once (dense) and their 3,300-odd windows (dense-window, shared with
blend) takes about 50 s on two idle cores. A pipeline bug (padding, pooling, normalisation,
truncation, window cutting, tokenisation, fusion, blending) moves these numbers well outside the
band; the full-split figures are in docs/architecture/retrieval-evaluation.md.
"""

from __future__ import annotations

import pytest
from tests.shared_data import SCIFACT_DIR, require_shared

from app.evaluation.beir import evaluate_beir, load_beir
from app.rag.embedding import default_embedder

QUERIES = 50
OTHER_DOCS = 500
TOLERANCE = 0.02
#: Measured on the shared SciFact copy with the int8 MiniLM (see the architecture doc).
BANDS = {
    "dense": {"ndcg@10": 0.9052, "mrr@10": 0.8950, "recall@100": 1.0},
    "bm25": {"ndcg@10": 0.9052, "mrr@10": 0.9000, "recall@100": 0.98},
    "hybrid": {"ndcg@10": 0.9248, "mrr@10": 0.9077, "recall@100": 1.0},
    "dense-window": {"ndcg@10": 0.9379, "mrr@10": 0.9333, "recall@100": 1.0},
    "bm25-tuned": {"ndcg@10": 0.8876, "mrr@10": 0.8800, "recall@100": 0.98},
    "blend": {"ndcg@10": 0.9476, "mrr@10": 0.9317, "recall@100": 1.0},
}


@pytest.mark.slow
def test_scifact_subset_stays_in_band() -> None:
    folder = require_shared(SCIFACT_DIR)
    data = load_beir(folder, "test", limit=QUERIES, max_corpus=OTHER_DOCS)
    assert len(data.queries) == QUERIES
    assert len(data.doc_ids) == 551
    result = evaluate_beir(data, list(BANDS), default_embedder, cache_dir=None)
    measured = {
        mode: {metric: round(result["modes"][mode][metric], 4) for metric in band}
        for mode, band in BANDS.items()
    }
    for mode, band in BANDS.items():
        for metric, expected in band.items():
            assert measured[mode][metric] == pytest.approx(expected, abs=TOLERANCE), measured
