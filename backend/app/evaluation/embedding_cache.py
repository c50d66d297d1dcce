"""An on-disk embedding cache keyed by model and text, for evaluations and benchmarks.

Embedding a BEIR corpus takes minutes on two cores, so ``CachedEmbedder`` wraps the product's
embedder and keeps every vector it computes in one SQLite file (``<dir>/<model id>.sqlite``),
keyed by the sha256 of the text. Any later run over the same texts — another engine
configuration, another split, a reduced corpus — reads them back instead of running the model.
Vectors are the embedder's own, so the engine ranks exactly as it would without the cache.
"""

from __future__ import annotations

import hashlib
import logging
import sqlite3
import threading
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from app.rag.embedding import DIMENSIONS, Embedder, Vectors

logger = logging.getLogger(__name__)

#: Texts looked up or written per SQLite statement.
_BATCH = 500


def text_key(text: str) -> str:
    """The cache key of one text."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


class CachedEmbedder:
    """An ``Embedder`` that computes each distinct text once per model and remembers it."""

    def __init__(self, inner: Embedder, cache_dir: Path | None) -> None:
        """Wrap ``inner``; ``cache_dir`` ``None`` keeps the vectors in memory only."""
        self.inner = inner
        self.model_id = inner.model_id
        self.model_sha256 = str(getattr(inner, "model_sha256", "") or "")
        self._memory: dict[str, Vectors] = {}
        self._lock = threading.Lock()
        self._db: sqlite3.Connection | None = None
        if cache_dir is not None:
            cache_dir.mkdir(parents=True, exist_ok=True)
            self._db = sqlite3.connect(
                cache_dir / f"{inner.model_id}.sqlite", check_same_thread=False
            )
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.execute("CREATE TABLE IF NOT EXISTS vectors (key TEXT PRIMARY KEY, v BLOB)")
        self.computed = 0

    def _lookup(self, keys: Sequence[str]) -> dict[str, Vectors]:
        found = {k: self._memory[k] for k in keys if k in self._memory}
        missing = [k for k in keys if k not in found]
        if self._db is None or not missing:
            return found
        for start in range(0, len(missing), _BATCH):
            part = missing[start : start + _BATCH]
            marks = ",".join("?" * len(part))
            rows = self._db.execute(f"SELECT key, v FROM vectors WHERE key IN ({marks})", part)
            for key, blob in rows:
                found[key] = np.frombuffer(blob, dtype=np.float32)
        return found

    def _store(self, vectors: dict[str, Vectors]) -> None:
        self._memory.update(vectors)
        if self._db is None or not vectors:
            return
        rows = [(k, np.asarray(v, dtype=np.float32).tobytes()) for k, v in vectors.items()]
        with self._db:
            self._db.executemany("INSERT OR REPLACE INTO vectors VALUES (?, ?)", rows)

    def embed_documents(self, texts: Sequence[str]) -> Vectors:
        """Cached vectors for known texts; the rest embedded in one batch and remembered."""
        if not texts:
            return np.zeros((0, DIMENSIONS), dtype=np.float32)
        keys = [text_key(t) for t in texts]
        with self._lock:
            found = self._lookup(list(dict.fromkeys(keys)))
        todo = list(dict.fromkeys(k for k in keys if k not in found))
        if todo:
            first = {k: t for k, t in zip(keys, texts, strict=True) if k in set(todo)}
            logger.info("embedding %d of %d text(s) not in the cache", len(todo), len(keys))
            matrix = self.inner.embed_documents([first[k] for k in todo])
            fresh = {k: matrix[i] for i, k in enumerate(todo)}
            self.computed += len(todo)
            with self._lock:
                self._store(fresh)
            found.update(fresh)
        return np.stack([found[k] for k in keys]).astype(np.float32)

    def embed_query(self, text: str) -> Vectors:
        """One query, from the cache when seen before (``warm`` embeds many in one batch)."""
        vector: Vectors = self.embed_documents([text])[0]
        return vector

    def warm(self, texts: Sequence[str]) -> None:
        """Embed every text not yet cached, in batches (queries before a run)."""
        self.embed_documents(list(dict.fromkeys(texts)))

    def count_tokens(self, text: str) -> int:
        """The wrapped embedder's token count."""
        return self.inner.count_tokens(text)

    def close(self) -> None:
        """Close the cache file."""
        if self._db is not None:
            self._db.close()
            self._db = None
