"""``rca bench retrieve``: the product's retrieval modes side by side on the real knowledge base.

The knowledge sources (``data/knowledge``) are ingested with the real embedder into an in-memory
Chroma collection and the engine is built over them by ``build_retriever``, as the service does.
The queries are incidents from ``data/eval/incidents.jsonl`` turned into retrieval queries by the
product's query builder (head, parsed evidence terms, stack trace, log lines). Modes, each called
once per run on the same query, in rotating order:

- ``dense``: embed the query and take the engine's candidate depth from Chroma (its dense leg);
- ``bm25``: the engine's keyword index over the same collection at the same depth (its BM25 leg);
- ``hybrid``: ``RetrievalEngine.retrieve``, the product path: both legs, the error-code lookup,
  reciprocal rank fusion and the score floor (what the rag node and ``POST /retrieve`` run).
"""

from __future__ import annotations

import statistics
from collections.abc import Callable
from dataclasses import asdict
from typing import Any

from app.bench.common import (
    embedded_settings,
    format_footer,
    format_timings,
    load_average,
    machine,
    memory,
    rss_mib,
    time_calls,
)
from app.bench.http import EVAL_CASES, sample_incidents
from app.core.config import PROJECT_ROOT, Settings
from app.rag.bm25 import KeywordIndex
from app.rag.embedding import default_embedder
from app.rag.engine import RetrievalEngine
from app.rag.knowledge import build_knowledge_base
from app.runtime import build_retriever, intake_settings, query_builder


def retrieval_modes(engine: RetrievalEngine, limit: int) -> dict[str, Callable[[str], object]]:
    """Each mode as a function of the query, over the engine's own collection.

    Args:
        engine: The product's engine (its store is the knowledge-base collection).
        limit: Docs the hybrid mode returns; the single legs return the candidate depth.

    Returns:
        Mode name to a function running one retrieval.
    """
    store = engine.store
    # The same index the engine builds in ``refresh``: BM25 over every stored chunk.
    index = KeywordIndex(store.all_chunks(), engine.config.bm25)
    depth = max(limit, engine.config.candidates)
    return {
        "dense": lambda query: store.query(query, depth),
        "bm25": lambda query: index.search(query, depth),
        "hybrid": lambda query: engine.retrieve(query, limit),
    }


def _on_query(retrieve: Callable[[str], object], queries: list[str]) -> Callable[[int], object]:
    """Run ``i`` retrieves query ``i`` (cycling)."""
    return lambda i: retrieve(queries[i % len(queries)])


def run_retrieve_bench(
    runs: int = 100,
    warmup: int = 3,
    base: Settings | None = None,
    log: Callable[[str], None] = print,
) -> dict[str, Any]:
    """Time every retrieval mode on the same incident queries, interleaved.

    Args:
        runs: Timed retrievals per mode; run ``i`` uses incident ``i`` (cycling past the end).
        warmup: Untimed rounds first.
        base: Settings to start from (default: the configured ones); see ``embedded_settings``.
        log: Progress goes here.

    Returns:
        ``modes`` (median and p95 ms per mode), ``config``, ``machine`` and ``rss_mib``.
    """
    load_before = load_average()
    rss_start = rss_mib()
    settings = embedded_settings(base)
    knowledge = build_knowledge_base(settings, default_embedder())
    engine = build_retriever(settings, knowledge)
    try:
        build_query = query_builder(intake_settings(settings))
        queries = [build_query(incident) for incident in sample_incidents(limit=runs)]
        modes = retrieval_modes(engine, settings.top_k)
        rss_ready = rss_mib()
        log(f"retrieval, interleaved: {', '.join(modes)} ({runs} runs each)")
        timings = time_calls(
            {name: _on_query(f, queries) for name, f in modes.items()}, runs, warmup
        )
    finally:
        engine.close()
        knowledge.store.client.delete_collection(knowledge.store.collection_name)
    return {
        "machine": machine(load_before),
        "config": {
            "runs": runs,
            "warmup": warmup,
            "queries": len(queries),
            "queries_from": str(EVAL_CASES.relative_to(PROJECT_ROOT)),
            "median_query_chars": statistics.median(len(q) for q in queries),
            "kb_chunks": knowledge.report.count,
            "limit": settings.top_k,
            "candidates": engine.config.candidates,
        },
        "modes": {name: asdict(timing) for name, timing in timings.items()},
        "rss_mib": memory(start=rss_start, ready=rss_ready),
    }


def format_retrieve_bench(result: dict[str, Any]) -> str:
    """The retrieval bench result as a plain-text table.

    Args:
        result: The output of ``run_retrieve_bench``.

    Returns:
        Printable text.
    """
    lines = format_timings("mode", result["modes"], width=10)
    config = result["config"]
    lines.append(
        f"{config['queries']} incident queries from {config['queries_from']} (median "
        f"{config['median_query_chars']:.0f} chars), {config['kb_chunks']} knowledge chunks, "
        f"depth {config['candidates']}, limit {config['limit']}"
    )
    lines += format_footer(result)
    return "\n".join(lines)
