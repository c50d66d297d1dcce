"""The ``whitelist`` node: keep only evidence that was actually supplied to the RCA.

It never trusts the generator: any cited id that is neither a doc of this run, a piece of this
incident nor an item collected for it is dropped and recorded; a claim left with no evidence is
marked unsupported. In a model-written draft, ids and error codes the free text names without
their being supplied are cut out of the text and recorded the same way (``scrub_free_text``);
the extractive generator's text is built from the supplied evidence only, and quoting the
reporter's message there is labelled as such, so it is not scrubbed.
"""

from __future__ import annotations

from typing import Any

from app.graph.state import RcaState
from app.rca.citations import (
    allowed_error_codes,
    allowed_evidence_ids,
    filter_rca,
    scrub_free_text,
)


def whitelist(state: RcaState) -> dict[str, Any]:
    """Drop unsupplied citations and record them."""
    allowed = allowed_evidence_ids(
        state.get("similar_error_docs", []),
        state["incident"],
        state.get("collected_evidence", []),
    )
    filtered, dropped = filter_rca(state["rca"], allowed)
    if not str(filtered.get("provenance", {}).get("generator", "")).startswith("llm"):
        return {"rca": filtered, "dropped_evidence_ids": dropped}
    codes = allowed_error_codes(state.get("similar_error_docs", []), state["incident"])
    scrubbed, cut = scrub_free_text(filtered, allowed, codes)
    return {"rca": scrubbed, "dropped_evidence_ids": list(dict.fromkeys(dropped + cut))}
