"""The ``whitelist`` node: keep only evidence that was actually supplied to the RCA.

It never trusts the generator: any cited id that is neither a doc of this run, a piece of this
incident nor an item collected for it is dropped and recorded; a claim left with no evidence is
marked unsupported.
"""

from __future__ import annotations

from typing import Any

from app.graph.state import RcaState
from app.rca.citations import allowed_evidence_ids, filter_rca


def whitelist(state: RcaState) -> dict[str, Any]:
    """Drop unsupplied citations and record them."""
    allowed = allowed_evidence_ids(
        state.get("similar_error_docs", []),
        state["incident"],
        state.get("collected_evidence", []),
    )
    filtered, dropped = filter_rca(state["rca"], allowed)
    return {"rca": filtered, "dropped_evidence_ids": dropped}
