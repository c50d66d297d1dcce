"""The default RCA generator: deterministic, no LLM, built from the diagnosis and the docs.

It never invents a cause. The leading hypothesis is the family the diagnosis
(``app.rca.diagnosis``) leads with, its documented cause stated as unconfirmed; its claims cite
the incident evidence that confirms it (the decisive log line, the frame, the field, the
collected series) next to the knowledge doc. Each alternative says what supports it and what
speaks against it, or that only similarity brought it up ("no incident evidence"); missing
evidence lists the leading family's expected signals the incident does not show; remediation
and validation come from the entry's Solution and Validation fields. When the diagnosis
abstains it says "insufficient evidence" and why. The band comes from the diagnosis
(``diagnosis_band``).
"""

from __future__ import annotations

import re
from dataclasses import replace
from typing import Any

from app.rca.base import EvidenceItem, RcaInput
from app.rca.confidence import diagnosis_band
from app.rca.diagnosis import NO_HISTORY, Candidate, Diagnosis, diagnose
from app.rca.evidence import describe_frame, failure_location
from app.rca.explain import (
    cited_incident_ids,
    clip,
    evidence_claims,
    for_and_against,
    missing_evidence,
)
from app.rca.flags import hypothesis_flags
from app.rca.prompts import PROMPT_VERSION
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
#: Collected series cited in this order: the alert's own expression first, then the RED series.
METRIC_ORDER = ("alert", "error_ratio", "latency_p95", "restarts", "up")
_SENTENCE_RE = re.compile(r"(?<=[.;])\s+")


def split_steps(text: str) -> list[str]:
    """A doc field cut into short steps (sentences or comma-free clauses)."""
    steps = [s.strip().rstrip(".;") for s in _SENTENCE_RE.split(text or "") if s.strip()]
    return [s[0].upper() + s[1:] for s in steps if s]


def incident_label(incident: dict[str, Any]) -> str:
    """``CO-500 CHECKOUT_SERVICE_CRASH`` or whatever parts the incident has."""
    parts = [str(incident.get(k) or "").strip() for k in ("error_code", "event")]
    return " ".join(p for p in parts if p) or "an error"


def insufficient_rca(data: RcaInput, diagnosis: Diagnosis | None = None) -> Rca:
    """The honest answer when nothing known fits: no similar history, or none the evidence backs."""
    incident = data.incident
    reason = diagnosis.reason if diagnosis is not None else NO_HISTORY
    service = incident.get("service") or "the service"
    claims = []
    message = str(incident.get("message", ""))
    # A message of punctuation alone ("." typed to get past a form) has nothing to quote.
    if any(e.id == "incident:message" for e in data.incident_evidence) and any(
        ch.isalnum() for ch in message
    ):
        claims.append(
            Claim(
                text=f"The incident reports: {clip(message)}",
                evidence=[Citation(id="incident:message", quote=clip(message))],
            )
        )
    if any(e.id == "incident:service" for e in data.incident_evidence):
        # The service as written ("crm/loyalty-service") is the field's words, not the message's.
        claims.append(
            Claim(
                text=f"The incident shows service {service}: {clip(str(service))}",
                evidence=[Citation(id="incident:service", quote=clip(str(service)))],
            )
        )
    location = failure_location(data.incident_evidence)
    if location:
        frame, exception = location
        claims.extend(_location_claims(frame, exception))
    claims.extend(collected_claims(data.collected_evidence))
    return Rca(
        summary=(
            f"Insufficient evidence: {reason} for "
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
        ruled_out=_ruled_out(diagnosis) if diagnosis is not None else [],
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
                text="The exception raised was "
                + clip(exception.text.strip().removeprefix("Caused by:").strip()),
                evidence=[Citation(id=exception.id, quote=clip(exception.text))],
            )
        )
    return claims


def collected_claims(collected: list[dict[str, Any]]) -> list[Claim]:
    """Claims citing what the collected evidence shows: a series that changed, an error record.

    The series is the first that rose or fell (the alert's own expression, then the 5xx ratio,
    latency, restarts, up, then the rest); the record is the first error (one naming an
    exception preferred), else the first warning. Weighing what they mean is the diagnosis'
    job; this only makes them visible and cited.
    """
    claims: list[Claim] = []
    changed = [
        c
        for c in collected
        if c.get("kind") == "metric" and c.get("facts", {}).get("trend") in ("rising", "falling")
    ]
    changed.sort(key=lambda c: _metric_rank(str(c.get("facts", {}).get("template"))))
    if changed:
        summary = clip(str(changed[0]["summary"]))
        claims.append(Claim(text=summary, evidence=[Citation(id=changed[0]["id"], quote=summary)]))
    records = [c for c in collected if c.get("kind") == "log" and c.get("lines")]
    levels = {"error": 0, "warn": 1}
    records.sort(
        key=lambda c: (
            levels.get(str(c.get("facts", {}).get("level")), 2),
            not c.get("facts", {}).get("exception_type"),
        )
    )
    if records:
        record = records[0]
        claims.append(
            Claim(
                text=clip(str(record["summary"])),
                evidence=[Citation(id=record["id"], quote=clip(str(record["lines"][0]["text"])))],
            )
        )
    return claims


def _metric_rank(template: str) -> int:
    return METRIC_ORDER.index(template) if template in METRIC_ORDER else len(METRIC_ORDER)


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
    """Builds the RCA from the diagnosis, the incident and the retrieved docs' fields."""

    name = "extractive"

    async def generate(self, data: RcaInput) -> Rca:
        """Deterministic RCA; abstains when the diagnosis does."""
        return self.build(data)

    def build(self, data: RcaInput) -> Rca:
        """The synchronous core, also used as the LLM path's fallback."""
        diagnosis = diagnosis_of(data)
        leading = diagnosis.leading
        docs_by_id = {d["id"]: d for d in data.docs}
        if leading is None or leading.doc_id not in docs_by_id:
            return insufficient_rca(data, diagnosis)
        incident = data.incident
        top = docs_by_id[leading.doc_id]
        meta = top.get("metadata", {})
        code = leading.error_code or meta.get("error_code", "?")
        band = diagnosis_band(diagnosis, data.docs)
        texts = evidence_texts(data)
        claims = evidence_claims(leading, texts)
        message_item = next((e for e in data.incident_evidence if e.id == "incident:message"), None)
        cited = cited_incident_ids(claims)
        message = message_item.text if message_item and "incident:message" not in cited else None
        claims.extend(_doc_claims(top, message))
        location = failure_location(data.incident_evidence)
        if location and location[0].id not in cited_incident_ids(claims):
            claims.extend(_location_claims(*location))
        for causal_id, lead in (
            (diagnosis.causal_log_id, "The first error record in the logs reads"),
            (diagnosis.causal_stack_id, "The stack trace says what failed"),
        ):
            causal = next((e for e in data.incident_evidence if e.id == causal_id), None)
            if causal and causal.id not in cited_incident_ids(claims):
                claims.append(
                    Claim(
                        text=f"{lead}: {clip(causal.text)}",
                        evidence=[Citation(id=causal.id, quote=clip(causal.text))],
                    )
                )
        claims.extend(
            c for c in collected_claims(data.collected_evidence) if c.evidence[0].id not in cited
        )
        cause = meta.get("cause") or "not documented"
        basis = (
            "confirmed by the incident's evidence, still unconfirmed as the cause"
            if diagnosis.basis == "evidence"
            else "unconfirmed, similarity is not proof"
        )
        hypotheses = [
            Hypothesis(
                statement=f"Probable cause ({basis}): {cause}",
                error_code=code,
                claims=claims[:20],
                confidence=band,
            )
        ]
        hypotheses.extend(_alternatives(diagnosis, leading, docs_by_id, texts))
        service = incident.get("service") or "the service"
        message_text = clip(str(incident.get("message", ""))).rstrip(".")
        summary = (
            f"{service} reported {incident_label(incident)}: {message_text}. "
            f"The closest known family is {code} {meta.get('error_name', '')} "
            f"(similarity {leading.similarity:.2f}; {for_and_against(leading)}). Historical "
            "similarity is not proof: confirm the cause with the checks below before acting."
        )
        if diagnosis.overruled_code:
            summary += (
                f" The error_code field named {diagnosis.overruled_code}, but the incident's "
                "records contradict that family; the records were followed."
            )
        return Rca(
            summary=clip(summary, 4000),
            hypotheses=hypotheses,
            ruled_out=_ruled_out(diagnosis),
            missing_evidence=missing_evidence(leading),
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


def diagnosis_of(data: RcaInput) -> Diagnosis:
    """The run's diagnosis, or one computed from the input when the caller gave none."""
    if data.diagnosis is not None:
        return data.diagnosis
    diagnosis = diagnose(
        data.incident,
        data.docs,
        retrieval_low_confidence=data.low_confidence,
        collected=data.collected_evidence,
    )
    if data.low_confidence:
        # Without a diagnosis of the run, ``low_confidence`` is the caller's decision to abstain.
        return replace(diagnosis, abstained=True, reason=NO_HISTORY, basis="abstain")
    return diagnosis


def evidence_texts(data: RcaInput) -> dict[str, str]:
    """Evidence id -> text for the incident's pieces and the collected items."""
    texts = {e.id: e.text for e in data.incident_evidence}
    for item in data.collected_evidence:
        lines = [str(x.get("text", "")) for x in item.get("lines") or [] if x.get("text")]
        # A log record is quoted by its first line, a series by its summary.
        texts[str(item["id"])] = lines[0] if lines else str(item.get("summary") or "")
    return texts


def _alternatives(
    diagnosis: Diagnosis,
    leading: Candidate,
    docs_by_id: dict[str, dict[str, Any]],
    texts: dict[str, str],
) -> list[Hypothesis]:
    """Up to ``MAX_ALTERNATIVES`` other candidates, each with what supports and opposes it."""
    out: list[Hypothesis] = []
    others = [c for c in diagnosis.candidates if c is not leading and c.doc_id in docs_by_id]
    others.sort(key=lambda c: not c.offered)
    for candidate in others[:MAX_ALTERNATIVES]:
        doc = docs_by_id[candidate.doc_id]
        meta = doc.get("metadata", {})
        claims = _doc_claims(doc, None)[-1:] + evidence_claims(candidate, texts, limit=2)
        alternative = Hypothesis(
            statement=clip(
                f"Alternative: {candidate.key} {meta.get('error_name', '')} — "
                f"{meta.get('cause', '')} ({for_and_against(candidate)})",
                4000,
            ),
            error_code=candidate.error_code,
            claims=claims,
            confidence=ConfidenceBand.LOW,
        )
        out.append(
            alternative.model_copy(update={"flags": hypothesis_flags(alternative, diagnosis)})
        )
    return out


def _ruled_out(diagnosis: Diagnosis) -> list[str]:
    """Candidates the diagnosis did not offer, with the evidence against them."""
    return [
        clip(f"{c.key}: {for_and_against(c)}", 1000) for c in diagnosis.candidates if not c.offered
    ][: MAX_ALTERNATIVES + 3]
