"""The ``collect`` node: gather live evidence (metrics, log lines) before anything is retrieved.

It runs first and again on every re-analysis, each time over a fresh window that ends now. The
configured sources run concurrently within their timeouts and the collection budget
(``app.evidence.sources.collector``); what they found goes to ``collected_evidence`` and the
sources they could not read to ``sources_unavailable``. With no source configured it returns
nothing, so the state -- and everything downstream -- is exactly as without it.
"""

from __future__ import annotations

import logging
from datetime import UTC, datetime
from typing import Any

from app.evidence.sources.base import iso
from app.graph.deps import GraphDeps
from app.graph.state import RcaState

logger = logging.getLogger(__name__)


async def collect(state: RcaState, deps: GraphDeps) -> dict[str, Any]:
    """Collected items and unavailable sources for the incident; nothing without sources."""
    if deps.collector is None:
        return {}
    now = datetime.now(UTC)
    request = deps.collector.request_for(state["incident"], state.get("created_at"), now)
    collection = await deps.collector.collect(request)
    if collection.unavailable:
        logger.info(
            "incident %s: sources unavailable: %s",
            state.get("incident_id"),
            "; ".join(f"{u['source']}: {u['reason']}" for u in collection.unavailable),
        )
    items: list[dict[str, Any]] = collection.items
    if deps.redact is not None:
        # Log lines come from files anyone can write to: masked before they are stored.
        items = deps.redact(items)
    return {
        "collected_evidence": items,
        "sources_unavailable": collection.unavailable,
        "collected_at": iso(now),
    }
