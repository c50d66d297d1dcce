"""The ``rca`` node: diagnose the incident against the retrieved families, then draft the RCA."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from app.core.metrics import LLM_FALLBACKS
from app.graph.deps import GraphDeps
from app.graph.state import RcaState
from app.rca.base import RcaInput
from app.rca.diagnosis import diagnose
from app.rca.evidence import incident_evidence


def rca_input(state: RcaState, deps: GraphDeps) -> RcaInput:
    """The generator's input: the incident, the docs, the evidence and the diagnosis.

    The diagnosis takes the retrieval gate's decision as one input and makes the final one:
    ``low_confidence`` here is the diagnosis' abstain decision.
    """
    incident = state["incident"]
    docs = state.get("similar_error_docs", [])
    collected = state.get("collected_evidence", [])
    retrieval_low = state.get("retrieval_low_confidence", state.get("low_confidence", True))
    diagnosis = diagnose(
        incident, docs, retrieval_low_confidence=retrieval_low, collected=collected
    )
    return RcaInput(
        incident=incident,
        docs=docs,
        incident_evidence=incident_evidence(incident),
        low_confidence=diagnosis.abstained,
        knowledge_version=deps.knowledge_version(),
        notes=state.get("retrieval_notes", []),
        collected_evidence=collected,
        diagnosis=diagnosis,
    )


async def rca(state: RcaState, deps: GraphDeps) -> dict[str, Any]:
    """Diagnose, then write the draft; the generator itself fails open to the extractive path."""
    data = rca_input(state, deps)
    draft = await deps.generator.generate(data)
    if draft.provenance.fallback_reason:
        LLM_FALLBACKS.inc()
    diagnosis = data.diagnosis.as_dict() if data.diagnosis is not None else None
    return {
        "rca": draft.model_dump(mode="json"),
        "diagnosis": diagnosis,
        "low_confidence": data.low_confidence,
        "analyzed_at": datetime.now(UTC).isoformat(),
    }
