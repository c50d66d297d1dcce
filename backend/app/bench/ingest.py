"""``rca bench ingest``: SciFact documents per second into Chroma, beside the embedding alone.

The first ``docs`` SciFact abstracts (``title + " " + text``) become chunks with content-hash
ids, like every knowledge source. Two contenders go through the same texts, interleaved one
write batch at a time (``time_passes``):

- ``embed_only``: our embedder's ``embed_documents``, nothing stored;
- ``ingest``: ``VectorStore.upsert`` into a fresh in-memory collection -- the embed-and-write
  step ``sync_store`` runs for new chunks (``rca ingest``, the admin reload), with the
  configured ingest batch size.

What Chroma's writes cost is measured inside ``ingest`` itself (its time minus the time its
embedder took), not as the difference of the two contenders, which the machine's load swamps.
After each pass ``sync_store`` runs once more over the filled collection: everything is
unchanged, so it measures the diff that a restart with an unchanged corpus pays instead of
embedding again.
"""

from __future__ import annotations

import statistics
import time
import uuid
from collections.abc import Callable, Sequence
from dataclasses import asdict
from pathlib import Path
from typing import Any

from chromadb.api import ClientAPI

from app.bench.common import (
    DEFAULT_SCIFACT_DIR,
    embedded_settings,
    format_footer,
    load_average,
    machine,
    memory,
    rss_mib,
    scifact_docs,
    time_passes,
)
from app.core.config import Settings
from app.rag.embedding import Embedder, Vectors, default_embedder
from app.rag.ingest import KnowledgeChunk, chunk_id
from app.rag.knowledge import sync_store
from app.rag.store import VectorStore, make_chroma_client

ID_PREFIX = "scifact-"
CONTENDERS = ("embed_only", "ingest")


def as_chunks(texts: list[str]) -> list[KnowledgeChunk]:
    """Texts as knowledge chunks with content-hash ids."""
    return [KnowledgeChunk(chunk_id(t, ID_PREFIX), t, {"source": "scifact"}) for t in texts]


class TimedEmbedder:
    """An embedder that adds up the seconds spent embedding documents."""

    def __init__(self, inner: Embedder) -> None:
        self.inner = inner
        self.model_id = inner.model_id
        self.seconds = 0.0

    def embed_documents(self, texts: Sequence[str]) -> Vectors:
        """The inner embedder's vectors, timed."""
        started = time.perf_counter()
        try:
            return self.inner.embed_documents(texts)
        finally:
            self.seconds += time.perf_counter() - started

    def embed_query(self, text: str) -> Vectors:
        """The inner embedder's query vector (not timed)."""
        return self.inner.embed_query(text)

    def count_tokens(self, text: str) -> int:
        """The inner embedder's token count."""
        return self.inner.count_tokens(text)


class Ingest:
    """The ``ingest`` contender: upsert texts as chunks, keeping the time spent in Chroma."""

    def __init__(self, store: VectorStore, embedder: TimedEmbedder, batch_size: int) -> None:
        self.store = store
        self.embedder = embedder
        self.batch_size = batch_size
        self.docs = 0
        self.store_seconds = 0.0

    def __call__(self, texts: list[str]) -> None:
        """Upsert ``texts``; what the embedder did not take went to hashing and Chroma."""
        embedding_before = self.embedder.seconds
        started = time.perf_counter()
        self.store.upsert(as_chunks(texts), batch_size=self.batch_size)
        elapsed = time.perf_counter() - started
        self.store_seconds += elapsed - (self.embedder.seconds - embedding_before)
        self.docs += len(texts)


def _one_pass(
    client: ClientAPI, embedder: Embedder, texts: list[str], batch: int
) -> tuple[dict[str, Any], float]:
    """Both contenders over ``texts`` into a new collection, then the unchanged re-sync.

    Args:
        client: The in-memory Chroma client; the collection is dropped afterwards.
        embedder: Our embedder, shared by both contenders.
        texts: The documents.
        batch: Chunks per write, and texts per interleaving round.

    Returns:
        The pass's throughput per contender plus ``store_ms_per_doc``, and the re-sync seconds.
    """
    timed = TimedEmbedder(embedder)
    store = VectorStore(client, timed, f"bench-ingest-{uuid.uuid4().hex[:10]}")
    try:
        ingest = Ingest(store, timed, batch)
        contenders: dict[str, Callable[[list[str]], object]] = {
            "embed_only": embedder.embed_documents,
            "ingest": ingest,
        }
        result: dict[str, Any] = {
            k: asdict(v) for k, v in time_passes(contenders, texts, chunk=batch).items()
        }
        result["store_ms_per_doc"] = round(ingest.store_seconds / ingest.docs * 1000, 3)
        started = time.perf_counter()
        sync_store(store, as_chunks(texts), batch_size=batch)
        resync_seconds = time.perf_counter() - started
        if store.count() != len(texts):
            raise RuntimeError(f"the collection holds {store.count()} of {len(texts)} docs")
        return result, resync_seconds
    finally:
        client.delete_collection(store.collection_name)


def run_ingest_bench(
    docs: int = 1000,
    runs: int = 1,
    scifact_dir: Path = DEFAULT_SCIFACT_DIR,
    base: Settings | None = None,
    log: Callable[[str], None] = print,
) -> dict[str, Any]:
    """Measure documents per second of embedding alone and of ingesting into Chroma.

    Args:
        docs: SciFact abstracts to ingest (the first ones in the file).
        runs: Passes over them, each into a fresh collection; docs/s is their median.
        scifact_dir: The BEIR SciFact folder (``corpus.jsonl``).
        base: Settings to start from (default: the configured ones); see ``embedded_settings``.
        log: Progress and the skip reason go here.

    Returns:
        ``docs_per_s`` (median per contender), ``passes``, ``store_ms_per_doc`` (ingest
        time outside embedding), ``resync_unchanged_s``, ``config``, ``machine``, ``rss_mib``
        and ``skipped`` (the reason when the corpus is absent, and then no numbers).
    """
    load_before = load_average()
    rss_start = rss_mib()
    corpus = scifact_dir / "corpus.jsonl"
    if not corpus.is_file():
        reason = f"SciFact ingest skipped: {corpus} not found"
        log(reason)
        return {"skipped": {"scifact": reason}}
    # Equal texts would share an id; Chroma refuses a repeated id within one write.
    texts = list(dict.fromkeys(scifact_docs(scifact_dir, docs)))
    settings = embedded_settings(base)
    embedder = default_embedder()
    client = make_chroma_client(settings)
    batch = settings.ingest_batch_size
    passes: list[dict[str, Any]] = []
    resync_seconds: list[float] = []
    for run in range(runs):
        log(f"pass {run + 1}/{runs}: {len(texts)} SciFact docs, interleaved: embed_only, ingest")
        result, seconds = _one_pass(client, embedder, texts, batch)
        passes.append(result)
        resync_seconds.append(seconds)
    docs_per_s = {
        name: round(statistics.median(p[name]["docs_per_s"] for p in passes), 2)
        for name in CONTENDERS
    }
    return {
        "machine": machine(load_before),
        "config": {
            "runs": runs,
            "docs": len(texts),
            "corpus": str(corpus),
            "batch_size": batch,
        },
        "docs_per_s": docs_per_s,
        "passes": passes,
        "store_ms_per_doc": statistics.median(p["store_ms_per_doc"] for p in passes),
        "resync_unchanged_s": round(statistics.median(resync_seconds), 3),
        "rss_mib": memory(start=rss_start),
        "skipped": {},
    }


def format_ingest_bench(result: dict[str, Any]) -> str:
    """The ingest bench result as a plain-text table.

    Args:
        result: The output of ``run_ingest_bench``.

    Returns:
        Printable text.
    """
    if "docs_per_s" not in result:
        return "\n".join(f"skipped: {reason}" for reason in result["skipped"].values())
    config = result["config"]
    lines = [f"{'contender':<12}{'docs':>6}{'passes':>8}{'docs/s':>10}"]
    for name, rate in result["docs_per_s"].items():
        lines.append(f"{name:<12}{config['docs']:>6}{config['runs']:>8}{rate:>10.2f}")
    ingest_ms = 1000 / result["docs_per_s"]["ingest"]
    lines.append(
        f"Chroma write (ingest time outside embedding): {result['store_ms_per_doc']:.2f} of "
        f"{ingest_ms:.1f} ms/doc, batches of {config['batch_size']}; re-sync of the unchanged "
        f"corpus: {result['resync_unchanged_s']:.2f} s"
    )
    lines += format_footer(result)
    return "\n".join(lines)
