"""``rca bench scale``: the generated corpus and one size measured end to end (fake embedder)."""

from __future__ import annotations

import numpy as np
from tests.fakes import HashEmbedder

from app.bench.scale import TableEmbedder, corpus, format_scale_bench, measure_history, measure_size
from app.rag.engine_config import EngineConfig

BASE = [
    "payment provider timeout at checkout",
    "inventory service returned 503 for lookups",
    "chiller gateway answered 502",
]


def base_vectors() -> np.ndarray:
    return HashEmbedder().embed_documents(BASE)


def test_variants_are_distinct_unit_vectors_near_their_source() -> None:
    chunks, table = corpus(BASE, base_vectors(), 12)
    assert len(chunks) == 12 and len({c.text for c in chunks}) == 12
    assert [c.text for c in chunks[:3]] == BASE
    for chunk in chunks:
        vector = table[chunk.text]
        assert abs(float(np.linalg.norm(vector)) - 1.0) < 1e-5
    source = table[BASE[0]]
    assert float(source @ table[chunks[3].text]) > 0.8  # a variant stays near its abstract


def test_the_table_answers_known_texts_and_the_model_the_rest() -> None:
    _, table = corpus(BASE, base_vectors(), 3)
    embedder = TableEmbedder(HashEmbedder(), table)
    rows = embedder.embed_documents([BASE[1], "something new"])
    assert np.allclose(rows[0], table[BASE[1]])
    assert np.allclose(rows[1], HashEmbedder().embed_documents(["something new"])[0])


def test_one_size_and_the_history_are_measured() -> None:
    model = HashEmbedder()
    point = measure_size(30, BASE, base_vectors(), BASE, EngineConfig(), model)
    assert point["chunks"] == 30 and point["ingest_docs_per_s"] > 0
    assert point["retrieve"]["runs"] == 3 and point["restart_s"] > 0
    history = measure_history(20, BASE, base_vectors(), BASE, 4, model)
    assert history["entries"] == 20 and history["learn"]["runs"] == 4
    text = format_scale_bench(
        {
            "sizes": [point],
            "embed_docs_per_s": 1.0,
            "history": history,
            "machine": {"load_average_1m": {"before": 1.0, "after": 1.0}},
        }
    )
    assert "history of 20" in text and "30" in text
