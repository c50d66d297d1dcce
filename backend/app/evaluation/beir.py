"""BEIR evaluation of the product's retrieval engine: load a folder, store it, rank, score.

The folder has ``corpus.jsonl``, ``queries.jsonl`` and ``qrels/<split>.tsv``. Each mode
(``app.evaluation.configurations``) builds the product's own ``RetrievalEngine`` over an
in-memory Chroma collection of the corpus, embedded by the product embedder through the on-disk
cache (``app.evaluation.embedding_cache``), and asks it for 100 docs per query through
``retrieve`` — the call the rag node, ``POST /retrieve`` and ``POST /rag/query`` make. With
``windows`` > 0 a long document is stored with its windows (``app.rag.windows``), as the
knowledge base's ingest stores its long entries.

A doc's text is its title and body joined by a space; the title is also kept in its metadata
(the BM25 title field). Only the queries judged in the chosen
split are evaluated, in ``queries.jsonl`` order; ``limit`` keeps the first N of them. A reduced
corpus (``max_corpus``) keeps every doc judged for the evaluated queries plus the first N other
docs in file order, so small CI runs are deterministic and still contain every right answer.
"""

from __future__ import annotations

import json
import logging
import time
import uuid
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import chromadb

from app.core.errors import ConfigurationError
from app.evaluation.configurations import Configuration
from app.evaluation.embedding_cache import CachedEmbedder
from app.evaluation.metrics import evaluate_rankings
from app.rag.embedding import Embedder, sha256_of
from app.rag.engine import RetrievalEngine
from app.rag.ingest import KnowledgeChunk
from app.rag.retrieve import RankedDoc
from app.rag.store import VectorStore
from app.rag.windows import PARENT_KEY, batch_offsets, window_chunks

logger = logging.getLogger(__name__)

#: Docs asked of the engine per query.
DEPTH = 100


@dataclass(frozen=True)
class BeirQuery:
    """One evaluated query."""

    id: str
    text: str


@dataclass(frozen=True)
class BeirDataset:
    """The docs, evaluated queries and judgements of one split of a BEIR folder."""

    name: str
    split: str
    doc_ids: list[str]
    doc_texts: list[str]
    doc_titles: list[str]
    doc_bodies: list[str]
    queries: list[BeirQuery]
    qrels: dict[str, dict[str, int]]
    corpus_sha256: str
    corpus_size: int


def _read_jsonl(path: Path) -> Iterator[tuple[int, dict[str, Any]]]:
    try:
        handle = path.open(encoding="utf-8")
    except OSError as exc:
        raise ConfigurationError(f"cannot read {path}: {exc.strerror}") from exc
    with handle:
        for number, line in enumerate(handle, start=1):
            if not line.strip():
                continue
            try:
                row = json.loads(line)
            except json.JSONDecodeError as exc:
                raise ConfigurationError(f"{path}:{number}: not valid JSON ({exc.msg})") from exc
            if not isinstance(row, dict) or "_id" not in row:
                raise ConfigurationError(f"{path}:{number}: expected an object with an '_id'")
            yield number, row


def load_qrels(path: Path) -> dict[str, dict[str, int]]:
    """Read a ``query-id<TAB>corpus-id<TAB>score`` file whose first line is a header.

    Args:
        path: The ``qrels/<split>.tsv`` file.

    Returns:
        Query id to (doc id to grade).

    Raises:
        ConfigurationError: When the file is missing or a line is malformed.
    """
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except OSError as exc:
        raise ConfigurationError(f"cannot read qrels {path}: {exc.strerror}") from exc
    qrels: dict[str, dict[str, int]] = {}
    for number, line in enumerate(lines[1:], start=2):
        if not line.strip():
            continue
        parts = line.split("\t")
        try:
            query_id, doc_id, grade = parts[0], parts[1], int(parts[2])
        except (IndexError, ValueError) as exc:
            raise ConfigurationError(
                f"{path}:{number}: expected 'query-id<TAB>corpus-id<TAB>score'"
            ) from exc
        qrels.setdefault(query_id, {})[doc_id] = grade
    return qrels


def load_beir(
    folder: Path, split: str = "test", limit: int | None = None, max_corpus: int | None = None
) -> BeirDataset:
    """Load one split of a BEIR folder.

    Args:
        folder: Holds ``corpus.jsonl``, ``queries.jsonl`` and ``qrels/<split>.tsv``.
        split: The qrels split to evaluate.
        limit: Evaluate only the first N judged queries (``queries.jsonl`` order).
        max_corpus: Keep only the judged docs of the evaluated queries plus the first N others.

    Returns:
        The dataset.

    Raises:
        ConfigurationError: When a file is missing or malformed, or no query is judged.
    """
    qrels_path = folder / "qrels" / f"{split}.tsv"
    all_qrels = load_qrels(qrels_path)
    queries: list[BeirQuery] = []
    for _, row in _read_jsonl(folder / "queries.jsonl"):
        query_id = str(row["_id"])
        if query_id in all_qrels:
            queries.append(BeirQuery(id=query_id, text=str(row.get("text", ""))))
    if limit is not None:
        queries = queries[: max(limit, 0)]
    if not queries:
        raise ConfigurationError(f"no query of {folder / 'queries.jsonl'} is judged in {split}")
    qrels = {q.id: all_qrels[q.id] for q in queries}
    judged = {doc_id for judgements in qrels.values() for doc_id in judgements}

    corpus_path = folder / "corpus.jsonl"
    doc_ids: list[str] = []
    doc_texts: list[str] = []
    doc_titles: list[str] = []
    doc_bodies: list[str] = []
    others = 0
    corpus_size = 0
    for _, row in _read_jsonl(corpus_path):
        corpus_size += 1
        doc_id = str(row["_id"])
        if max_corpus is not None and doc_id not in judged:
            if others >= max_corpus:
                continue
            others += 1
        title = str(row.get("title") or "")
        text = str(row.get("text") or "")
        doc_ids.append(doc_id)
        doc_texts.append(f"{title} {text}".strip())
        doc_titles.append(title)
        doc_bodies.append(text)
    return BeirDataset(
        name=folder.resolve().name,
        split=split,
        doc_ids=doc_ids,
        doc_texts=doc_texts,
        doc_titles=doc_titles,
        doc_bodies=doc_bodies,
        queries=queries,
        qrels=qrels,
        corpus_sha256=sha256_of(corpus_path),
        corpus_size=corpus_size,
    )


def _doc_metadata(doc_id: str, title: str) -> dict[str, str | int]:
    return {PARENT_KEY: doc_id, "title": title} if title else {PARENT_KEY: doc_id}


def corpus_chunks(
    dataset: BeirDataset, windows: int, stride: int, sentences: bool = False
) -> list[KnowledgeChunk]:
    """The corpus as the knowledge collection stores it: whole docs, plus windows of long ones."""
    if windows <= 0 and not sentences:
        return [
            KnowledgeChunk(id=i, text=t, metadata=_doc_metadata(i, title))
            for i, t, title in zip(
                dataset.doc_ids, dataset.doc_texts, dataset.doc_titles, strict=True
            )
        ]
    offsets = batch_offsets(dataset.doc_bodies, windows)
    return [
        chunk
        for i, title, body, spans in zip(
            dataset.doc_ids, dataset.doc_titles, dataset.doc_bodies, offsets, strict=True
        )
        for chunk in window_chunks(
            i, title, body, size=windows, stride=stride, offsets=spans, sentences=sentences
        )
    ]


class _Collections:
    """One in-memory collection per way of storing the corpus, shared by the modes."""

    def __init__(self, dataset: BeirDataset, embedder: Embedder) -> None:
        self.dataset = dataset
        self.embedder = embedder
        self.client = chromadb.EphemeralClient()
        self._stores: dict[tuple[int, int, bool], VectorStore] = {}

    def store(self, windows: int, stride: int, sentences: bool = False) -> VectorStore:
        key = (windows, stride if windows else 0, sentences)
        if key not in self._stores:
            name = f"beir-{uuid.uuid4().hex[:10]}"
            store = VectorStore(self.client, self.embedder, name)
            chunks = corpus_chunks(self.dataset, *key)
            store.upsert(chunks, batch_size=self.client.get_max_batch_size())
            logger.info("stored %d chunk(s) as %s", len(chunks), name)
            self._stores[key] = store
        return self._stores[key]

    def close(self) -> None:
        for store in self._stores.values():
            self.client.delete_collection(store.collection_name)


def doc_ranking(docs: Sequence[RankedDoc]) -> list[str]:
    """Document ids in rank order (a window counts as its document)."""
    return [str(d.metadata.get(PARENT_KEY) or d.id) for d in docs]


def evaluate_beir(
    dataset: BeirDataset,
    modes: Sequence[Configuration],
    embedder: CachedEmbedder,
    depth: int = DEPTH,
) -> dict[str, Any]:
    """Rank every evaluated query with the product engine in each mode and average the metrics.

    Args:
        dataset: The loaded split.
        modes: Engine configurations (``parse_mode``).
        embedder: The product embedder behind the cache; the queries are embedded in one batch.
        depth: Docs asked of the engine per query (recall@100 needs 100).

    Returns:
        ``{"dataset", "split", "queries", "docs", "corpus_docs", "modes": {mode: metrics}}``;
        each mode also carries its ``config``, ``build_s`` and ``query_s`` wall-clock seconds,
        ``short@10`` (queries given fewer than 10 docs) and ``empty`` (given none).
    """
    texts = [q.text for q in dataset.queries]
    started = time.perf_counter()
    caps = {m.engine.query_max_chars for m in modes}
    embedder.warm([t[:cap] for cap in caps for t in texts])
    warmed = round(time.perf_counter() - started, 3)
    collections = _Collections(dataset, embedder)
    results: dict[str, dict[str, Any]] = {}
    try:
        for mode in modes:
            started = time.perf_counter()
            store = collections.store(mode.window_tokens, mode.window_stride, mode.sentences)
            engine = RetrievalEngine(store, mode.engine)
            built = time.perf_counter()
            rankings: dict[str, list[str]] = {}
            short = empty = 0
            try:
                for query in dataset.queries:
                    docs = engine.retrieve(query.text, depth).docs if query.text.strip() else []
                    rankings[query.id] = doc_ranking(docs)
                    short += len(docs) < 10
                    empty += not docs
            finally:
                engine.close()
            done = time.perf_counter()
            metrics: dict[str, Any] = dict(evaluate_rankings(rankings, dataset.qrels))
            metrics.update(
                {
                    "short@10": short,
                    "empty": empty,
                    "build_s": round(built - started, 3),
                    "query_s": round(done - built, 3),
                    "config": mode.summary(),
                }
            )
            results[mode.name] = metrics
            logger.info("%s: ndcg@10 %.4f", mode.name, metrics["ndcg@10"])
    finally:
        collections.close()
    return {
        "dataset": dataset.name,
        "split": dataset.split,
        "queries": len(dataset.queries),
        "docs": len(dataset.doc_ids),
        "corpus_docs": dataset.corpus_size,
        "query_embedding_s": warmed,
        "modes": results,
    }
