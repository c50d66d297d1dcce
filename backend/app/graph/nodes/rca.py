"""The ``rca`` node: ask the configured generator for a draft."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from app.core.metrics import LLM_FALLBACKS
from app.graph.deps import GraphDeps
from app.graph.state import RcaState
from app.rca.base import RcaInput
from app.rca.evidence import incident_evidence


def rca_input(state: RcaState, deps: GraphDeps) -> RcaInput:
    """The generator's input: the incident, the docs of this run and the incident evidence."""
    return RcaInput(
        incident=state["incident"],
        docs=state.get("similar_error_docs", []),
        incident_evidence=incident_evidence(state["incident"]),
        low_confidence=state.get("low_confidence", True),
        knowledge_version=deps.knowledge_version(),
        notes=state.get("retrieval_notes", []),
    )


async def rca(state: RcaState, deps: GraphDeps) -> dict[str, Any]:
    """Write the draft; the generator itself fails open to the extractive path."""
    draft = await deps.generator.generate(rca_input(state, deps))
    if draft.provenance.fallback_reason:
        LLM_FALLBACKS.inc()
    return {
        "rca": draft.model_dump(mode="json"),
        "analyzed_at": datetime.now(UTC).isoformat(),
    }
