"""The ``finalize`` node: turn the reviewer's decision into the final state."""

from __future__ import annotations

from typing import Any

from app.graph.state import RcaState


def finalize(state: RcaState) -> dict[str, Any]:
    """Approved (as drafted or edited) or rejected; the original draft is always kept."""
    decision = state["decision"]
    action = decision["action"]
    if action == "reject":
        return {"status": "rejected", "decided_at": decision["decided_at"]}
    final = decision.get("rca") if action == "edit" else state["rca"]
    return {"status": "approved", "final_rca": final, "decided_at": decision["decided_at"]}
