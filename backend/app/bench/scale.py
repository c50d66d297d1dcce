"""``rca bench scale``: what the shipped engine costs as the knowledge base grows 100-fold.

At each size (default 1k, 10k and 100k chunks) a persistent Chroma store in a temporary folder
is filled with SciFact abstracts and generated variants of them, then measured:

- ``ingest_docs_per_s``: ``VectorStore.upsert`` with the vectors already computed (Chroma's
  write and index path); the model's own rate is measured once on real abstracts
  (``embed_docs_per_s``) since embedding 100k chunks takes hours on two cores;
- ``build_s``: the engine's start over the store (keyword index from every chunk);
- ``restart_s``: a new client on the unchanged folder, the store and the engine, as a restarted
  service does it;
- ``retrieve``: p50/p95 of ``RetrievalEngine.retrieve`` (shipped configuration, query embedded
  by the real model) over SciFact test queries;
- ``rss_mib``: this process's resident memory once the engine is ready.

Variants reuse an abstract's vector with a little seeded noise and drop a few of its words, so
every chunk is distinct and the keyword index grows like a real corpus. Afterwards the incident
history is filled with ``--history`` approved incidents and ``IncidentHistory.learn`` (the work
an approval adds) and ``search`` (the rag node's history lookup) are timed.
"""

from __future__ import annotations

import gc
import json
import random
import shutil
import statistics
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import chromadb
import numpy as np

from app.bench.common import (
    DEFAULT_SCIFACT_DIR,
    load_average,
    machine,
    rss_mib,
)
from app.core.config import get_settings
from app.evaluation.embedding_cache import CachedEmbedder
from app.rag.embedding import DIMENSIONS, Embedder, Vectors, default_embedder
from app.rag.engine import RetrievalEngine
from app.rag.engine_config import EngineConfig
from app.rag.history import IncidentHistory
from app.rag.ingest import KnowledgeChunk
from app.rag.store import VectorStore

DEFAULT_SIZES = (1_000, 10_000, 100_000)
#: Per-dimension noise of a variant's vector: cosine to its abstract about 0.93.
NOISE = 0.02


class TableEmbedder:
    """An ``Embedder`` that answers known texts from a table and the rest with the real model."""

    def __init__(self, inner: Embedder, table: dict[str, Vectors]) -> None:
        self.inner = inner
        self.model_id = inner.model_id
        self.table = table

    def embed_documents(self, texts: Sequence[str]) -> Vectors:
        """Table rows where known, the model for the rest."""
        missing = [t for t in texts if t not in self.table]
        fresh = (
            dict(zip(missing, self.inner.embed_documents(missing), strict=True)) if missing else {}
        )
        if not texts:
            return np.zeros((0, DIMENSIONS), dtype=np.float32)
        rows = [self.table[t] if t in self.table else fresh[t] for t in texts]
        return np.stack(rows).astype(np.float32)

    def embed_query(self, text: str) -> Vectors:
        """Queries always go to the model, as in the service."""
        return self.inner.embed_query(text)

    def count_tokens(self, text: str) -> int:
        """The model's token count."""
        return self.inner.count_tokens(text)


def _rows(path: Path) -> list[dict[str, Any]]:
    with path.open(encoding="utf-8") as handle:
        return [json.loads(line) for line in handle if line.strip()]


def _variant(text: str, n: int, rng: random.Random) -> str:
    words = text.split()
    kept = [w for w in words if rng.random() > 0.1] or words
    return f"{' '.join(kept)} v{n}"


def corpus(
    base: Sequence[str], vectors: Vectors, size: int, seed: int = 7
) -> tuple[list[KnowledgeChunk], dict[str, Vectors]]:
    """``size`` chunks: the base texts first, then seeded variants with perturbed vectors."""
    rng = random.Random(seed)
    noise = np.random.default_rng(seed)
    chunks: list[KnowledgeChunk] = []
    table: dict[str, Vectors] = {}
    for n in range(size):
        i = n % len(base)
        text = base[i] if n < len(base) else _variant(base[i], n, rng)
        vector = vectors[i]
        if n >= len(base):
            vector = vector + noise.normal(0.0, NOISE, DIMENSIONS).astype(np.float32)
            vector = vector / np.linalg.norm(vector)
        table[text] = vector.astype(np.float32)
        chunks.append(KnowledgeChunk(id=f"doc-{n}", text=text, metadata={"n": n}))
    return chunks, table


def _timing(values: Sequence[float]) -> dict[str, float]:
    return {
        "runs": len(values),
        "median_ms": round(statistics.median(values), 2),
        "p95_ms": round(float(np.percentile(values, 95)), 2),
    }


def _time_retrievals(engine: RetrievalEngine, queries: Sequence[str]) -> dict[str, float]:
    samples = []
    for query in queries:
        started = time.perf_counter()
        engine.retrieve(query, 10)
        samples.append((time.perf_counter() - started) * 1000)
    return _timing(samples)


def measure_size(
    size: int,
    base: Sequence[str],
    vectors: Vectors,
    queries: Sequence[str],
    config: EngineConfig,
    model: Embedder,
) -> dict[str, Any]:
    """Every figure of one size, in a temporary persistent store removed afterwards."""
    folder = Path(tempfile.mkdtemp(prefix=f"rca-scale-{size}-"))
    try:
        chunks, table = corpus(base, vectors, size)
        embedder = TableEmbedder(model, table)
        client = chromadb.PersistentClient(path=str(folder))
        store = VectorStore(client, embedder, "scale")
        started = time.perf_counter()
        store.upsert(chunks, batch_size=client.get_max_batch_size())
        ingest_s = time.perf_counter() - started
        started = time.perf_counter()
        engine = RetrievalEngine(store, config)
        build_s = time.perf_counter() - started
        engine.retrieve(queries[0], 10)  # warm the query path
        retrieve = _time_retrievals(engine, queries)
        rss = rss_mib()
        engine.close()
        del engine, store, client
        gc.collect()
        started = time.perf_counter()
        client = chromadb.PersistentClient(path=str(folder))
        store = VectorStore(client, embedder, "scale")
        engine = RetrievalEngine(store, config)
        engine.retrieve(queries[0], 10)
        restart_s = time.perf_counter() - started
        engine.close()
        del engine, store, client
        gc.collect()
        return {
            "chunks": size,
            "ingest_docs_per_s": round(size / ingest_s, 1),
            "build_s": round(build_s, 2),
            "restart_s": round(restart_s, 2),
            "retrieve": retrieve,
            "rss_mib": rss,
        }
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def measure_history(
    entries: int,
    base: Sequence[str],
    vectors: Vectors,
    queries: Sequence[str],
    runs: int,
    model: Embedder,
) -> dict[str, Any]:
    """``learn`` and ``search`` of the incident history holding ``entries`` past incidents."""
    chunks, table = corpus(base, vectors, entries)
    history_chunks = [
        KnowledgeChunk(
            id=f"incident-{c.id}",
            text=c.text,
            metadata={"incident_id": c.id, "error_code": "", "decided_at": "", "summary": ""},
        )
        for c in chunks
    ]
    embedder = TableEmbedder(model, table)
    client = chromadb.EphemeralClient()
    store = VectorStore(client, embedder, "scale-history")
    store.upsert(history_chunks, batch_size=client.get_max_batch_size())
    history = IncidentHistory(store, floor=0.4)
    learn, search = [], []
    for n in range(runs):
        incident = {"error_code": "PAY-408", "message": f"{queries[n % len(queries)]} #{n}"}
        rca = {"summary": "provider timeout", "hypotheses": [{"statement": "timeout"}]}
        started = time.perf_counter()
        history.learn(f"bench-{n}", incident, rca, "2026-01-01T00:00:00Z", "bench")
        learn.append((time.perf_counter() - started) * 1000)
        started = time.perf_counter()
        history.search(queries[n % len(queries)], 3)
        search.append((time.perf_counter() - started) * 1000)
    client.delete_collection("scale-history")
    return {"entries": entries, "learn": _timing(learn), "search": _timing(search)}


def run_scale_bench(
    sizes: Sequence[int] = DEFAULT_SIZES,
    queries: int = 50,
    history: int = 10_000,
    scifact_dir: Path = DEFAULT_SCIFACT_DIR,
) -> dict[str, Any]:
    """The curve over ``sizes`` and the history figures; see the module docstring."""
    load_before = load_average()
    settings = get_settings()
    docs = _rows(scifact_dir / "corpus.jsonl")
    base = [f"{d.get('title') or ''} {d.get('text') or ''}".strip() for d in docs]
    test_ids = {line.split("\t")[0] for line in (scifact_dir / "qrels" / "test.tsv").open()}
    texts = [q["text"] for q in _rows(scifact_dir / "queries.jsonl") if q["_id"] in test_ids]
    texts = texts[:queries]
    cache = CachedEmbedder(default_embedder(), settings.state_dir / "cache" / "embeddings")
    sample = base[:200]
    started = time.perf_counter()
    default_embedder().embed_documents(sample)
    embed_rate = len(sample) / (time.perf_counter() - started)
    vectors = cache.embed_documents(base)
    cache.close()
    config = EngineConfig.from_settings(settings)
    model = default_embedder()
    points = [measure_size(size, base, vectors, texts, config, model) for size in sizes]
    return {
        "sizes": points,
        "embed_docs_per_s": round(embed_rate, 1),
        "history": measure_history(history, base, vectors, texts, 30, model),
        "machine": machine(load_before),
    }


def format_scale_bench(result: dict[str, Any]) -> str:
    """The curve as a table, then the history line."""
    header = (
        f"{'chunks':>8}{'ingest/s':>10}{'build s':>9}{'restart s':>11}"
        f"{'p50 ms':>9}{'p95 ms':>9}{'RSS MiB':>9}"
    )
    lines = ["rca bench scale: the shipped engine as the store grows", header, "-" * len(header)]
    for p in result["sizes"]:
        r = p["retrieve"]
        lines.append(
            f"{p['chunks']:>8}{p['ingest_docs_per_s']:>10.0f}{p['build_s']:>9.1f}"
            f"{p['restart_s']:>11.1f}{r['median_ms']:>9.1f}{r['p95_ms']:>9.1f}{p['rss_mib']:>9.0f}"
        )
    h = result["history"]
    lines.append(f"model embedding: {result['embed_docs_per_s']:.1f} docs/s")
    lines.append(
        f"history of {h['entries']}: learn p50 {h['learn']['median_ms']:.1f} ms "
        f"(p95 {h['learn']['p95_ms']:.1f}), search p50 {h['search']['median_ms']:.1f} ms"
    )
    load = result["machine"]["load_average_1m"]
    lines.append(f"load average (1 min) before/after: {load['before']} / {load['after']}")
    return "\n".join(lines)
