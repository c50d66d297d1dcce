"""The smoke run: crash the sample app and push that incident through the system."""

from __future__ import annotations

from app.core.config import get_settings
from app.rag.embedding import default_embedder
from app.rag.knowledge import build_knowledge_base
from app.sample_app import crash_checkout

EXPECTED_TOP_CODE = "CO-500"


def retrieval_query(incident: dict[str, str]) -> str:
    """The rag query: error code, event and message, skipping missing parts."""
    parts = (incident.get("error_code"), incident.get("event"), incident.get("message"))
    return " ".join(p.strip() for p in parts if p and p.strip())


def run_smoke() -> int:
    """Print what happened at each step; 0 only when every expectation holds."""
    settings = get_settings()
    knowledge = build_knowledge_base(settings, default_embedder())
    print(f"ingested {knowledge.report.count} error-doc chunk(s)")
    incident = crash_checkout()
    print(f"incident: {incident['error_code']} {incident['event']}: {incident['message']}")
    docs = knowledge.store.query(retrieval_query(incident), settings.top_k)
    for rank, doc in enumerate(docs, start=1):
        print(f"  {rank}. {doc.metadata['error_code']:<20} similarity={doc.similarity:.3f} {doc.id}")
    top = docs[0].metadata["error_code"] if docs else None
    if top != EXPECTED_TOP_CODE:
        print(f"FAIL: top doc is {top}, expected {EXPECTED_TOP_CODE}")
        return 1
    print(f"OK: top doc is {EXPECTED_TOP_CODE}")
    return 0
