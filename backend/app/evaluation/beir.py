"""Load a BEIR-layout folder: ``corpus.jsonl``, ``queries.jsonl`` and ``qrels/<split>.tsv``.

A doc's text is its title and body joined by a space; the title and body are also kept apart for
modes that treat the title on its own. Only the queries judged in the chosen
split are evaluated, in ``queries.jsonl`` order; ``limit`` keeps the first N of them. A reduced
corpus (``max_corpus``) keeps every doc judged for the evaluated queries plus the first N other
docs in file order, so small CI runs are deterministic and still contain every right answer.
"""

from __future__ import annotations

import hashlib
import json
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from app.core.errors import ConfigurationError
from app.evaluation.metrics import evaluate_rankings
from app.evaluation.modes import MODES, Corpus, ModeContext, ModeOptions
from app.rag.embedding import Embedder, sha256_of
from app.rag.rerank import Reranker


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

    @property
    def corpus_key(self) -> str:
        """Identity of the doc set actually loaded: corpus file digest, size and ids digest."""
        ids_digest = hashlib.sha256("\n".join(self.doc_ids).encode("utf-8")).hexdigest()
        return f"{self.corpus_sha256[:16]}-n{len(self.doc_ids)}-{ids_digest[:12]}"

    def corpus(self) -> Corpus:
        """The loaded docs as the modes index them."""
        return Corpus(
            ids=self.doc_ids,
            texts=self.doc_texts,
            key=self.corpus_key,
            titles=self.doc_titles,
            bodies=self.doc_bodies,
        )


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


def evaluate_beir(
    dataset: BeirDataset,
    modes: Sequence[str],
    embedder_factory: Callable[[], Embedder],
    cache_dir: Path | None = None,
    options: ModeOptions | None = None,
    reranker: Reranker | None = None,
) -> dict[str, Any]:
    """Rank every evaluated query with each mode and average the standard metrics.

    Args:
        dataset: The loaded split.
        modes: Registered mode names, e.g. ``["dense", "bm25", "hybrid"]``.
        embedder_factory: Builds the embedder the first time a mode needs it.
        cache_dir: Where doc embeddings are cached (``None``: no cache).
        options: The modes' parameters (RRF k, depth, windows, blend weight); ``depth`` is
            also how many docs each query retrieves (recall@100 needs 100).
        reranker: The second stage of ``hybrid+rerank`` (that mode needs one).

    Returns:
        ``{"dataset", "split", "queries", "docs", "corpus_docs", "modes": {mode: metrics}}``;
        each mode also carries ``build_s`` and ``query_s`` wall-clock seconds.

    Raises:
        ConfigurationError: When a mode name is not registered.
    """
    unknown = [m for m in modes if m not in MODES]
    if unknown:
        raise ConfigurationError(f"unknown mode(s) {', '.join(unknown)}; known: {', '.join(MODES)}")
    options = options or ModeOptions()
    context = ModeContext(dataset.corpus(), embedder_factory, cache_dir, options, reranker)
    depth = options.depth
    texts = [q.text for q in dataset.queries]
    results: dict[str, dict[str, float]] = {}
    for mode in modes:
        started = time.perf_counter()
        ranker = context.ranker(mode)
        built = time.perf_counter()
        ranked = ranker.rank(texts, depth)
        done = time.perf_counter()
        rankings = {q.id: [d for d, _ in r] for q, r in zip(dataset.queries, ranked, strict=True)}
        metrics = evaluate_rankings(rankings, dataset.qrels)
        metrics["build_s"] = round(built - started, 3)
        metrics["query_s"] = round(done - built, 3)
        results[mode] = metrics
    return {
        "dataset": dataset.name,
        "split": dataset.split,
        "queries": len(dataset.queries),
        "docs": len(dataset.doc_ids),
        "corpus_docs": dataset.corpus_size,
        "modes": results,
    }
