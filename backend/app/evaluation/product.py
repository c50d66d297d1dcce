"""Evaluate the product itself: each incident goes through the real graph up to the review point.

``GraphAnalyzer`` builds what the service builds (knowledge base, hybrid retrieval engine with
its gates, the configured RCA generator, the citation check) over an in-memory checkpointer,
runs each incident to the approval interrupt and reports the ranked error families, whether it
abstained ("no similar history"), and the RCA with what the whitelist and the check removed.
"""

from __future__ import annotations

import asyncio
import time
import uuid
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from typing import Any

from langgraph.checkpoint.memory import InMemorySaver

from app.core.config import Settings
from app.evaluation.incidents import Analysis
from app.graph.deps import GraphDeps
from app.graph.graph import build_graph
from app.intake.parser import enriched_incident_query
from app.rag.embedding import default_embedder
from app.rag.engine import build_retrieval_engine, incident_query
from app.rag.knowledge import build_knowledge_base
from app.rca.factory import build_generator
from app.rca.grounding import CitationChecker


def ranked_codes(docs: list[dict[str, Any]]) -> list[tuple[str, float]]:
    """Error families in rank order (first occurrence), scored by dense similarity."""
    ranked: dict[str, float] = {}
    for doc in docs:
        code = str(doc.get("metadata", {}).get("error_code") or "")
        if code and code not in ranked:
            ranked[code] = float(doc.get("similarity", 0.0))
    return list(ranked.items())


class GraphAnalyzer:
    """Runs incidents through the compiled graph; one event loop for the whole evaluation."""

    def __init__(self, settings: Settings, parse_evidence: bool = True) -> None:
        embedder = default_embedder()
        name = f"eval-{uuid.uuid4().hex[:10]}"
        self.knowledge = build_knowledge_base(settings, embedder, collection_name=name)
        self.engine = build_retrieval_engine(settings, self.knowledge)
        build_query = enriched_incident_query if parse_evidence else incident_query
        deps = GraphDeps(
            retriever=self.engine,
            generator=build_generator(settings),
            knowledge_version=lambda: self.knowledge.version,
            top_k=settings.top_k,
            checker=CitationChecker(embedder),
            build_query=build_query,
        )
        self.graph = build_graph(deps, InMemorySaver())
        self.loop = asyncio.new_event_loop()
        self.seconds: list[float] = []

    def __call__(self, incident: Mapping[str, Any]) -> Analysis:
        """Run one incident to the review point."""
        thread = uuid.uuid4().hex
        start = time.perf_counter()
        out = self.loop.run_until_complete(
            self.graph.ainvoke(
                {"incident_id": thread, "incident": dict(incident)},
                {"configurable": {"thread_id": thread}},
            )
        )
        self.seconds.append(time.perf_counter() - start)
        payload = out["__interrupt__"][0].value
        rca = {
            **payload["rca"],
            "dropped_evidence_ids": payload.get("dropped_evidence_ids", []),
            "unsupported_citations": payload.get("unsupported_citations", []),
        }
        abstained = rca.get("outcome") == "insufficient_evidence"
        return Analysis(ranked_codes(payload["similar_error_docs"]), abstained, rca)

    def close(self) -> None:
        """Release the engine's threads and the event loop."""
        self.engine.close()
        self.loop.close()


@contextmanager
def graph_analyzer(settings: Settings, parse_evidence: bool = True) -> Iterator[GraphAnalyzer]:
    """A ``GraphAnalyzer`` that is closed afterwards."""
    analyzer = GraphAnalyzer(settings, parse_evidence)
    try:
        yield analyzer
    finally:
        analyzer.close()
