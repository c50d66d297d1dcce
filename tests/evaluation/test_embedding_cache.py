"""The embedding cache: each text is embedded once per model, across processes and runs."""

from __future__ import annotations

from pathlib import Path

import numpy as np
from tests.fakes import CountingEmbedder

from app.evaluation.embedding_cache import CachedEmbedder


def test_vectors_are_the_embedders_and_computed_once(tmp_path: Path) -> None:
    inner = CountingEmbedder()
    cache = CachedEmbedder(inner, tmp_path)
    first = cache.embed_documents(["alpha beta", "gamma", "alpha beta"])
    assert inner.documents_embedded == 2
    assert np.allclose(first, inner.embed_documents(["alpha beta", "gamma", "alpha beta"]))
    assert np.allclose(cache.embed_query("gamma"), first[1])
    cache.close()

    again = CountingEmbedder()
    reopened = CachedEmbedder(again, tmp_path)
    reopened.warm(["gamma", "delta"])
    assert again.documents_embedded == 1  # only "delta" is new
    assert np.allclose(reopened.embed_documents(["alpha beta"])[0], first[0])
    assert reopened.model_id == inner.model_id
    reopened.close()


def test_without_a_folder_vectors_stay_in_memory() -> None:
    inner = CountingEmbedder()
    cache = CachedEmbedder(inner, None)
    cache.embed_documents(["x y"])
    cache.embed_documents(["x y"])
    assert inner.documents_embedded == 1 and cache.computed == 1
    assert cache.embed_documents([]).shape == (0, 384)
