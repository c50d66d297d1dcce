"""The RCA document every generator produces (schema version 2).

A draft is a ranked list of hypotheses; each hypothesis rests on claims, and each claim cites
evidence by id: a knowledge-base doc (``error-doc-…``) or a piece of the incident itself
(``incident:message``, ``incident:stack:3``, ``incident:log:12``). Confidence is a band derived
from evidence, never a model's self-report.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

SCHEMA_VERSION = 2


class ConfidenceBand(StrEnum):
    """How strongly the evidence supports the leading hypothesis."""

    HIGH = "high"
    MEDIUM = "medium"
    LOW = "low"
    INSUFFICIENT = "insufficient"


class Outcome(StrEnum):
    """Whether the RCA names a probable cause or abstains."""

    ANALYSIS = "analysis"
    INSUFFICIENT_EVIDENCE = "insufficient_evidence"


class Citation(BaseModel):
    """One cited piece of evidence: its id and, optionally, the words relied on.

    The citation check fills ``support``, ``score`` and the best supporting ``sentence`` with
    its character ``span`` in the cited text; clients never need to send them.
    """

    model_config = ConfigDict(extra="ignore")

    id: str = Field(min_length=1, max_length=200)
    quote: str = Field(default="", max_length=2000)
    support: str | None = None
    score: float | None = None
    sentence: str | None = None
    span: list[int] | None = None


class Claim(BaseModel):
    """A statement and the evidence it rests on."""

    model_config = ConfigDict(extra="ignore")

    text: str = Field(min_length=1, max_length=4000)
    evidence: list[Citation] = Field(default_factory=list, max_length=20)
    supported: bool = True
    support: str | None = None


#: A flag's message is a summary for the reviewer; what it lists is cut to fit.
MAX_FLAG_CHARS = 1000


class Flag(BaseModel):
    """A warning for the reviewer: e.g. a hypothesis the diagnosis contradicts.

    ``kind`` is one of ``contradicted`` (the diagnosis contradicts the hypothesis),
    ``no_incident_evidence`` (it cites nothing from the incident) or ``not_diagnosed`` (its
    family is not among the diagnosed candidates).
    """

    model_config = ConfigDict(extra="ignore")

    kind: str = Field(min_length=1, max_length=64)
    message: str = Field(default="", max_length=MAX_FLAG_CHARS)


class Hypothesis(BaseModel):
    """A candidate root cause with its claims."""

    model_config = ConfigDict(extra="ignore")

    statement: str = Field(min_length=1, max_length=4000)
    error_code: str | None = None
    claims: list[Claim] = Field(default_factory=list, max_length=20)
    confidence: ConfidenceBand = ConfidenceBand.LOW
    #: Set by the product (never taken from a model's reply): see ``Flag``.
    flags: list[Flag] = Field(default_factory=list, max_length=10)


class Provenance(BaseModel):
    """Who or what wrote the draft, from which prompt and knowledge."""

    model_config = ConfigDict(extra="ignore")

    generator: str = "extractive"
    prompt_version: str | None = None
    knowledge_version: str | None = None
    fallback_reason: str | None = None


class RcaDraft(BaseModel):
    """The content a generator writes; validated for LLM output too."""

    model_config = ConfigDict(extra="ignore")

    summary: str = Field(min_length=1, max_length=4000)
    hypotheses: list[Hypothesis] = Field(default_factory=list, max_length=10)
    ruled_out: list[str] = Field(default_factory=list, max_length=20)
    missing_evidence: list[str] = Field(default_factory=list, max_length=20)
    next_checks: list[str] = Field(default_factory=list, max_length=20)
    remediation: list[str] = Field(default_factory=list, max_length=20)


class Rca(RcaDraft):
    """A complete RCA as stored and shown: content plus outcome, band and provenance."""

    schema_version: int = SCHEMA_VERSION
    outcome: Outcome = Outcome.ANALYSIS
    confidence: ConfidenceBand = ConfidenceBand.LOW
    provenance: Provenance = Field(default_factory=Provenance)
    #: Draft-level flags for the reviewer (see ``Flag``).
    flags: list[Flag] = Field(default_factory=list, max_length=20)

    def cited_ids(self) -> list[str]:
        """Every evidence id cited anywhere, in order of first appearance."""
        seen: dict[str, None] = {}
        for hypothesis in self.hypotheses:
            for claim in hypothesis.claims:
                for citation in claim.evidence:
                    seen.setdefault(citation.id, None)
        return list(seen)


def rca_to_state(rca: Rca) -> dict[str, Any]:
    """Plain JSON-serialisable form for the graph state."""
    return rca.model_dump(mode="json")
