"""Evaluate the product itself: each incident goes through the real graph up to the review point.

``GraphAnalyzer`` builds what the service builds (``app.runtime``'s retrieval engine and query
builder over a private knowledge-base collection, the configured RCA generator, the citation
check) with an in-memory checkpointer, runs each incident to the approval interrupt and
reports the product's answer — the RCA's hypotheses and its final abstain decision (the state's
``low_confidence`` or an ``insufficient_evidence`` outcome) — beside what retrieval alone ranked
and what the ``rag`` node's gate decided.
"""

from __future__ import annotations

import asyncio
import time
import uuid
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from typing import Any, cast

from langgraph.checkpoint.memory import InMemorySaver

from app.core.config import Settings
from app.evaluation.cases import Analysis, hypothesis_codes, ranked_families
from app.evidence.sources.collector import EvidenceCollector
from app.graph.deps import GraphDeps
from app.graph.graph import build_graph
from app.incidents.redaction import Redactor
from app.incidents.text import received
from app.rag.embedding import default_embedder
from app.rag.knowledge import build_knowledge_base
from app.rca.factory import build_generator
from app.rca.grounding import CitationChecker
from app.rca.schema import Outcome
from app.runtime import build_retriever, intake_settings, query_builder


def analysis_from_state(state: Mapping[str, Any], retrieval_abstained: bool) -> Analysis:
    """The product's answer read from the graph state at the review point.

    Args:
        state: The state values with the approval ``__interrupt__``.
        retrieval_abstained: The ``rag`` node's own gate decision.

    Returns:
        The hypotheses' codes, the final abstain decision (``low_confidence`` or an
        ``insufficient_evidence`` outcome), the reviewed RCA with what the whitelist and the
        check removed, the retrieved families and the diagnosis when the state has one.
    """
    payload = state["__interrupt__"][0].value
    rca = {
        **payload["rca"],
        "dropped_evidence_ids": payload.get("dropped_evidence_ids", []),
        "unsupported_citations": payload.get("unsupported_citations", []),
    }
    abstained = bool(state.get("low_confidence", True)) or (
        rca.get("outcome") == Outcome.INSUFFICIENT_EVIDENCE.value
    )
    return Analysis(
        answer=hypothesis_codes(rca),
        abstained=abstained,
        rca=rca,
        retrieval=ranked_families(payload["similar_error_docs"]),
        retrieval_abstained=retrieval_abstained,
        diagnosis=state.get("diagnosis"),
    )


class GraphAnalyzer:
    """Runs incidents through the compiled graph; one event loop for the whole evaluation."""

    def __init__(
        self,
        settings: Settings,
        parse_evidence: bool = True,
        collector: EvidenceCollector | None = None,
    ) -> None:
        if not parse_evidence:
            settings = settings.model_copy(update={"parse_evidence": False})
        embedder = default_embedder()
        self.collection = f"eval-{uuid.uuid4().hex[:10]}"
        self.knowledge = build_knowledge_base(settings, embedder, collection_name=self.collection)
        self.engine = build_retriever(settings, self.knowledge)
        deps = GraphDeps(
            retriever=self.engine,
            generator=build_generator(settings),
            knowledge_version=lambda: self.knowledge.version,
            top_k=settings.top_k,
            checker=CitationChecker(embedder),
            build_query=query_builder(intake_settings(settings)),
            collector=collector,
        )
        self.graph = build_graph(deps, InMemorySaver())
        self.redactor = Redactor(settings.redaction_patterns)
        self.loop = asyncio.new_event_loop()
        self.seconds: list[float] = []

    async def _run(self, incident: Mapping[str, Any]) -> tuple[dict[str, Any], bool]:
        """The state at the review point and the ``rag`` node's own gate decision."""
        thread = uuid.uuid4().hex
        state: dict[str, Any] = {}
        gated = True
        async for mode, chunk in self.graph.astream(
            # What the service would store and run: stripped and masked as it receives it.
            {"incident_id": thread, "incident": received(incident, self.redactor)},
            {"configurable": {"thread_id": thread}},
            stream_mode=["updates", "values"],
        ):
            update = cast(dict[str, Any], chunk)
            if mode == "values":
                state = update
            elif "rag" in update:
                gated = bool(update["rag"].get("low_confidence", True))
        return state, gated

    def __call__(self, incident: Mapping[str, Any]) -> Analysis:
        """Run one incident to the review point."""
        start = time.perf_counter()
        state, gated = self.loop.run_until_complete(self._run(incident))
        self.seconds.append(time.perf_counter() - start)
        return analysis_from_state(state, gated)

    def close(self) -> None:
        """Release the engine's threads and the event loop; drop the private collection."""
        self.engine.close()
        self.loop.close()
        self.knowledge.store.client.delete_collection(self.collection)


@contextmanager
def graph_analyzer(
    settings: Settings, parse_evidence: bool = True, collector: EvidenceCollector | None = None
) -> Iterator[GraphAnalyzer]:
    """A ``GraphAnalyzer`` (with ``collector`` as its live evidence) closed afterwards."""
    analyzer = GraphAnalyzer(settings, parse_evidence, collector)
    try:
        yield analyzer
    finally:
        analyzer.close()
