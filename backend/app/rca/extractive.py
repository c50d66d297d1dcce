"""The default RCA generator: deterministic, no LLM, built from the docs' own fields.

It never invents a cause. The leading hypothesis is the top retrieved family's documented
cause, stated as unconfirmed (historical similarity is not proof); remediation and validation
come from that entry's Solution and Validation fields; the incident's own stack trace is cited
for where it failed. With nothing relevant retrieved it says "insufficient evidence".
"""

from __future__ import annotations

import re
from typing import Any

from app.graph.prompts import PROMPT_VERSION
from app.rca.base import EvidenceItem, RcaInput
from app.rca.confidence import confidence_band
from app.rca.evidence import describe_frame, failure_location
from app.rca.schema import (
    Citation,
    Claim,
    ConfidenceBand,
    Hypothesis,
    Outcome,
    Provenance,
    Rca,
)

MAX_ALTERNATIVES = 2
#: Incident text is quoted, not copied whole: a 4,000-character message stays readable.
MAX_QUOTED_CHARS = 500


def clip(text: str, limit: int = MAX_QUOTED_CHARS) -> str:
    """``text`` cut to ``limit`` characters with an ellipsis when it was longer."""
    text = text.strip()
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


_SENTENCE_RE = re.compile(r"(?<=[.;])\s+")


def split_steps(text: str) -> list[str]:
    """A doc field cut into short steps (sentences or comma-free clauses)."""
    steps = [s.strip().rstrip(".;") for s in _SENTENCE_RE.split(text or "") if s.strip()]
    return [s[0].upper() + s[1:] for s in steps if s]


def incident_label(incident: dict[str, Any]) -> str:
    """``CO-500 CHECKOUT_SERVICE_CRASH`` or whatever parts the incident has."""
    parts = [str(incident.get(k) or "").strip() for k in ("error_code", "event")]
    return " ".join(p for p in parts if p) or "an error"


def insufficient_rca(data: RcaInput) -> Rca:
    """The honest answer when no similar history was found."""
    incident = data.incident
    service = incident.get("service") or "the service"
    claims = []
    if any(e.id == "incident:message" for e in data.incident_evidence):
        claims.append(
            Claim(
                text=f"{service} reported: {clip(str(incident.get('message', '')))}",
                evidence=[
                    Citation(id="incident:message", quote=clip(str(incident.get("message", ""))))
                ],
            )
        )
    location = failure_location(data.incident_evidence)
    if location:
        frame, exception = location
        claims.extend(_location_claims(frame, exception))
    return Rca(
        summary=(
            f"Insufficient evidence: no similar history in the knowledge base for "
            f"{clip(incident_label(incident), 200)} on {clip(str(service), 200)}. "
            "No probable cause is proposed; "
            "investigate from the incident's own evidence."
        ),
        hypotheses=(
            [
                Hypothesis(
                    statement="No known error family matches this incident.",
                    claims=claims,
                    confidence=ConfidenceBand.INSUFFICIENT,
                )
            ]
            if claims
            else []
        ),
        missing_evidence=[
            "A knowledge-base entry describing this failure family",
            "Logs or a stack trace from the failing component, if not attached",
        ],
        next_checks=[
            "Read the failing component's logs around the incident time",
            "Check recent deploys and configuration changes of the service",
        ],
        remediation=[],
        outcome=Outcome.INSUFFICIENT_EVIDENCE,
        confidence=ConfidenceBand.INSUFFICIENT,
        provenance=Provenance(
            generator="extractive",
            prompt_version=PROMPT_VERSION,
            knowledge_version=data.knowledge_version,
        ),
    )


def _location_claims(frame: EvidenceItem, exception: EvidenceItem | None) -> list[Claim]:
    """Where it failed and what was raised, each citing the one trace line that shows it."""
    claims = [
        Claim(
            text=f"The failure surfaced at {clip(describe_frame(frame.text))}",
            evidence=[Citation(id=frame.id, quote=clip(frame.text))],
        )
    ]
    if exception:
        claims.append(
            Claim(
                text=f"The exception raised was {clip(exception.text)}",
                evidence=[Citation(id=exception.id, quote=clip(exception.text))],
            )
        )
    return claims


def _doc_claims(doc: dict[str, Any], incident_message: str | None) -> list[Claim]:
    meta = doc.get("metadata", {})
    code, name = meta.get("error_code", "?"), meta.get("error_name", "")
    claims = []
    if incident_message:
        claims.append(
            Claim(
                text=f"The incident reports: {clip(incident_message)}",
                evidence=[Citation(id="incident:message", quote=clip(incident_message))],
            )
        )
    if meta.get("symptoms"):
        claims.append(
            Claim(
                text=f"Known symptoms of {code} {name}: {meta['symptoms']}",
                evidence=[Citation(id=doc["id"], quote=meta["symptoms"])],
            )
        )
    if meta.get("cause"):
        claims.append(
            Claim(
                text=f"In past {code} incidents the cause was: {meta['cause']}",
                evidence=[Citation(id=doc["id"], quote=meta["cause"])],
            )
        )
    return claims


class ExtractiveGenerator:
    """Builds the RCA from the incident and the retrieved docs' fields."""

    name = "extractive"

    async def generate(self, data: RcaInput) -> Rca:
        """Deterministic RCA; abstains when retrieval found nothing relevant."""
        return self.build(data)

    def build(self, data: RcaInput) -> Rca:
        """The synchronous core, also used as the LLM path's fallback."""
        if data.low_confidence or not data.docs:
            return insufficient_rca(data)
        incident, docs = data.incident, data.docs
        band = confidence_band(incident, docs, data.low_confidence)
        top = docs[0]
        meta = top.get("metadata", {})
        code = meta.get("error_code", "?")
        message_item = next((e for e in data.incident_evidence if e.id == "incident:message"), None)

        claims = _doc_claims(top, message_item.text if message_item else None)
        location = failure_location(data.incident_evidence)
        if location:
            claims.extend(_location_claims(*location))
        cause = meta.get("cause") or "not documented"
        hypotheses = [
            Hypothesis(
                statement=f"Probable cause (unconfirmed, similarity is not proof): {cause}",
                error_code=code,
                claims=claims,
                confidence=band,
            )
        ]
        seen = {code}
        for doc in docs[1:]:
            other = doc.get("metadata", {}).get("error_code")
            if other in seen or len(hypotheses) > MAX_ALTERNATIVES:
                continue
            seen.add(other)
            hypotheses.append(
                Hypothesis(
                    statement=(
                        f"Alternative: {other} {doc['metadata'].get('error_name', '')} — "
                        f"{doc['metadata'].get('cause', '')}"
                    ),
                    error_code=other,
                    claims=_doc_claims(doc, None)[-1:],
                    confidence=ConfidenceBand.LOW,
                )
            )
        service = incident.get("service") or "the service"
        message = clip(str(incident.get("message", ""))).rstrip(".")
        summary = (
            f"{service} reported {incident_label(incident)}: {message}. "
            f"The closest known family is {code} {meta.get('error_name', '')} "
            f"(similarity {float(top.get('similarity', 0.0)):.2f}). Historical similarity is not "
            "proof: confirm the cause with the checks below before acting."
        )
        return Rca(
            summary=summary,
            hypotheses=hypotheses,
            ruled_out=[],
            missing_evidence=[f"Confirm: {step}" for step in split_steps(meta.get("evidence", ""))],
            next_checks=split_steps(meta.get("validation", "")),
            remediation=split_steps(meta.get("solution", "")),
            outcome=Outcome.ANALYSIS,
            confidence=band,
            provenance=Provenance(
                generator="extractive",
                prompt_version=PROMPT_VERSION,
                knowledge_version=data.knowledge_version,
            ),
        )
