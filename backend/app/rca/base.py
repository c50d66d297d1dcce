"""The generator seam: what an RCA generator receives and the protocol it implements."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

from app.rca.schema import Rca

if TYPE_CHECKING:
    from app.rca.diagnosis import Diagnosis


@dataclass(frozen=True)
class EvidenceItem:
    """A citable piece of evidence: a knowledge doc, a part of the incident, a collected item."""

    id: str
    text: str
    kind: str  # "doc", "incident" or "collected"


@dataclass(frozen=True)
class RcaInput:
    """Everything a generator may use; nothing else may be cited."""

    incident: dict[str, Any]
    docs: list[dict[str, Any]]
    incident_evidence: list[EvidenceItem]
    low_confidence: bool
    knowledge_version: str
    notes: list[str] = field(default_factory=list)
    #: Items the ``collect`` node gathered (``prom:…`` series, ``log:…`` records) as plain data.
    collected_evidence: list[dict[str, Any]] = field(default_factory=list)
    #: The differential diagnosis of this run (``app.rca.diagnosis``); None = not diagnosed,
    #: the generator diagnoses itself from the fields above.
    diagnosis: Diagnosis | None = None

    def allowed_ids(self) -> set[str]:
        """Ids the RCA may cite: the docs of this run, the incident's and the collected evidence."""
        ids = {d["id"] for d in self.docs} | {e.id for e in self.incident_evidence}
        return ids | {str(c["id"]) for c in self.collected_evidence}


class RcaGenerator(Protocol):
    """Writes an RCA draft from an incident and its retrieved evidence."""

    name: str

    async def generate(self, data: RcaInput) -> Rca:
        """A complete RCA with provenance."""
        ...
