"""The ``citation_check`` node: verify that each cited text supports its claim.

Runs after ``whitelist`` (which proved each id was supplied) and before ``approval``. Every
(claim, citation) pair gets a verdict from the ``CitationChecker``; unsupported citations are
removed from the claim and kept in ``unsupported_citations`` for the audit trail; a claim with
no supported citation is flagged; a claim resting only on the reporter's words
(``rests_on_reporter``) is at best weak; the confidence band is then adjusted for grounding.
"""

from __future__ import annotations

import asyncio
from typing import Any

from app.graph.deps import GraphDeps
from app.graph.state import RcaState
from app.rca.confidence import grounded_band
from app.rca.evidence import collected_items, incident_evidence
from app.rca.grounding import CitationChecker, Support, rests_on_reporter

_RANK = {Support.SUPPORTED.value: 2, Support.WEAK.value: 1, Support.UNSUPPORTED.value: 0}


def check_rca(
    rca: dict[str, Any],
    docs: list[dict[str, Any]],
    incident: dict[str, Any],
    checker: CitationChecker,
    collected: list[dict[str, Any]] | None = None,
) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """A copy of ``rca`` with verdicts on every citation, and the removed citations.

    A collected item is checked against its summary and, for a log record, its lines.
    """
    doc_texts = {d["id"]: d["content"] for d in docs}
    evidence = incident_evidence(incident) + collected_items(collected or [])
    texts = {**doc_texts, **{e.id: e.text for e in evidence}}
    removed: list[dict[str, Any]] = []
    hypotheses = []
    for hypothesis in rca.get("hypotheses", []):
        claims = []
        for claim in hypothesis.get("claims", []):
            kept = []
            for citation in claim.get("evidence", []):
                cited = texts.get(citation["id"])
                if cited is None:
                    continue
                alternatives = (
                    [t for i, t in doc_texts.items() if i != citation["id"]]
                    if citation["id"] in doc_texts
                    else None
                )
                result = checker.check(claim["text"], cited, alternatives)
                verdict = {
                    **citation,
                    "support": result.support.value,
                    "score": result.score,
                    "sentence": result.sentence,
                    "span": list(result.span),
                }
                if result.support is Support.UNSUPPORTED:
                    removed.append({"claim": claim["text"], **verdict})
                else:
                    kept.append(verdict)
            if kept and rests_on_reporter(claim["text"], [c["id"] for c in kept]):
                # The reporter's words only show what was reported, not that it is the cause.
                kept = [
                    {**c, "support": Support.WEAK.value} if c["support"] == "supported" else c
                    for c in kept
                ]
            best = max((_RANK[c["support"]] for c in kept), default=0)
            support = next(k for k, v in _RANK.items() if v == best)
            claims.append({**claim, "evidence": kept, "supported": best == 2, "support": support})
        hypotheses.append({**hypothesis, "claims": claims})
    checked = {**rca, "hypotheses": hypotheses}
    band = grounded_band(
        str(rca.get("confidence", "low")), hypotheses[0]["claims"] if hypotheses else []
    )
    checked["confidence"] = band
    if hypotheses:
        checked["hypotheses"][0] = {**hypotheses[0], "confidence": band}
    return checked, removed


async def citation_check(state: RcaState, deps: GraphDeps) -> dict[str, Any]:
    """Verdicts for every citation; unsupported ones move to ``unsupported_citations``."""
    if deps.checker is None:
        return {"unsupported_citations": []}
    checked, removed = await asyncio.to_thread(
        check_rca,
        state["rca"],
        state.get("similar_error_docs", []),
        state["incident"],
        deps.checker,
        state.get("collected_evidence", []),
    )
    return {"rca": checked, "unsupported_citations": removed}
