"""One candidate family weighed against an incident: the signals that confirm or contradict it.

A ``SignalHit`` is one expected signal with the incident evidence ids that confirm it (or, for
a contradiction, what was observed instead); a ``Candidate`` collects them with its score and
whether the diagnosis offers it as a probable cause (``app.rca.diagnosis``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from app.evidence.signals import (
    CODE,
    CONDITION,
    EXCEPTION,
    FILE,
    IDENTIFIER,
    PATH,
    PHRASE,
    SERVICE,
    STATUS_CLASS,
)

#: Confirmed kinds that point at one family rather than a class of symptoms (the band rule). A
#: failure condition counts only where the family's doc names it ("exhausted its connection pool").
SPECIFIC_KINDS = frozenset({CODE, SERVICE, PATH, FILE, IDENTIFIER, EXCEPTION, PHRASE, CONDITION})
#: Confirmed kinds that say where a failure runs or how broadly it fails, not which failure it
#: is: a service, an endpoint, a status class.
WHERE_KINDS = frozenset({SERVICE, PATH, STATUS_CLASS})


@dataclass
class SignalHit:
    """One expected signal and the incident evidence that confirms or contradicts it."""

    kind: str
    signal: str
    evidence_ids: list[str] = field(default_factory=list)
    observed: str | None = None
    weak: bool = False
    why: str | None = None

    def as_dict(self) -> dict[str, Any]:
        """Plain form for the state and the API."""
        out: dict[str, Any] = {
            "kind": self.kind,
            "signal": self.signal,
            "evidence_ids": list(self.evidence_ids),
        }
        if self.observed is not None:
            out["observed"] = self.observed
        if self.weak:
            out["weak"] = True
        if self.why:
            out["why"] = self.why
        return out


@dataclass
class Candidate:
    """One family weighed against the incident."""

    error_code: str | None
    error_name: str
    doc_id: str
    similarity: float
    retrieval_rank: int
    service_match: str = "unknown"
    confirmed: list[SignalHit] = field(default_factory=list)
    contradicted: list[SignalHit] = field(default_factory=list)
    missing: list[SignalHit] = field(default_factory=list)
    hints: list[SignalHit] = field(default_factory=list)
    score: float = 0.0
    offered: bool = True
    why: list[str] = field(default_factory=list)

    @property
    def key(self) -> str:
        """The family's code, or the doc id for a runbook without one."""
        return self.error_code or self.doc_id

    @property
    def supported(self) -> bool:
        """Offered, confirmed by the incident's evidence, and contradicted by none of it.

        A status class alone (``5xx``) is too generic to count as support.
        """
        confirmed = [h for h in self.confirmed if h.kind != STATUS_CLASS]
        return self.offered and bool(confirmed) and not self.contradicted

    def specific(self, *, strong_only: bool = True) -> set[str]:
        """Kinds of confirmed signals that point at this family rather than a symptom class."""
        return {
            h.kind
            for h in self.confirmed
            if h.kind in SPECIFIC_KINDS and not (strong_only and h.weak)
        }

    def as_dict(self) -> dict[str, Any]:
        """Plain form for the state and the API (the reviewer's diagnosis table)."""
        return {
            "error_code": self.error_code,
            "error_name": self.error_name,
            "doc_id": self.doc_id,
            "similarity": round(self.similarity, 4),
            "retrieval_rank": self.retrieval_rank,
            "score": round(self.score, 4),
            "offered": self.offered,
            "supported": self.supported,
            "service_match": self.service_match,
            "confirmed": [h.as_dict() for h in self.confirmed],
            "contradicted": [h.as_dict() for h in self.contradicted],
            "missing": [h.as_dict() for h in self.missing],
            "hints": [h.as_dict() for h in self.hints],
            "why": list(self.why),
        }
