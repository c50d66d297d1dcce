"""The generator seam: what an RCA generator receives and the protocol it implements."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol

from app.rca.schema import Rca


@dataclass(frozen=True)
class EvidenceItem:
    """A citable piece of evidence: a knowledge doc or a part of the incident."""

    id: str
    text: str
    kind: str  # "doc" or "incident"


@dataclass(frozen=True)
class RcaInput:
    """Everything a generator may use; nothing else may be cited."""

    incident: dict[str, Any]
    docs: list[dict[str, Any]]
    incident_evidence: list[EvidenceItem]
    low_confidence: bool
    knowledge_version: str
    notes: list[str] = field(default_factory=list)

    def allowed_ids(self) -> set[str]:
        """Ids the RCA may cite: the docs of this run and the incident's own evidence."""
        return {d["id"] for d in self.docs} | {e.id for e in self.incident_evidence}


class RcaGenerator(Protocol):
    """Writes an RCA draft from an incident and its retrieved evidence."""

    name: str

    async def generate(self, data: RcaInput) -> Rca:
        """A complete RCA with provenance."""
        ...
