"""The incident's ``service`` field as a retrieval signal: boost the docs of that service.

Knowledge docs declare the services they apply to (an error doc's ``Service:`` line, a
runbook's front matter; metadata ``services``). The incident's name is first reduced to its
service (``app.evidence.services.service_name``: no pod suffix, ordinal or rollout track), then
names match exactly after lower-casing --
``payments`` is not ``pos-payments`` and ``checkout`` is not the POS "till checkout endpoint".
For each retrieved doc ``service_match`` says how the incident's service relates to it:

- ``match``: the doc declares the incident's service (or an alias of it);
- ``other``: the incident's service belongs to a *different* doc of the knowledge base;
- ``part``: no doc declares it, but it is the start of a declared name (``web-shop`` of
  ``web-shop-checkout``): the larger system, which says where to look, not what fails;
- ``unknown``: no service given, or no doc declares it (possibly a system the knowledge base
  does not cover -- the diagnosis decides what that means, see ``app.rca.diagnosis``).

A matching doc gets ``SERVICE_MATCH_BOOST`` on its fused score, and the docs of that service
that the engine did not return (below the floor, or beyond the limit) are added, so a terse
"503 on lookups" from ``plu-service`` still sees the PLU family. The engine builds the
``ServiceCatalogue`` with its keyword index (``refresh``); the ``rag`` node calls
``apply_service`` once per incident.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from app.evidence.services import is_larger_system, known_service, service_name
from app.rag.ingest import KnowledgeChunk
from app.rag.signals import doc_services
from app.rag.store import VectorStore

#: Dense similarity of the query to some chunk ids (``dense_similarities`` bound to a query).
Similarity = Callable[[Sequence[str]], Mapping[str, float]]

#: Added to a matching doc's fused score: about one first place in one RRF ranking (k=60)
#: times three -- it reorders close candidates, never outweighs an exact error-code match (1.0).
SERVICE_MATCH_BOOST = 0.05
MATCH, OTHER, UNKNOWN = "match", "other", "unknown"
#: ``service_match`` of a service no doc declares that is the start of one's name (``web-shop``
#: of ``web-shop-checkout``): the larger system, which names no failing service.
LARGER_SYSTEM = "part"


@dataclass
class ServiceCatalogue:
    """Which knowledge chunks declare which service names."""

    by_name: dict[str, list[KnowledgeChunk]] = field(default_factory=dict)

    @classmethod
    def from_chunks(cls, chunks: Iterable[KnowledgeChunk]) -> ServiceCatalogue:
        """Index the chunks that declare services (chunks without any are left out)."""
        catalogue = cls()
        for chunk in chunks:
            for name in doc_services(chunk.metadata):
                catalogue.by_name.setdefault(name, []).append(chunk)
        return catalogue

    def resolve(self, service: str | None) -> str | None:
        """The declared name ``service`` means (``known_service``: a release or a typo aside)."""
        name = service_name(service)
        return None if name is None else known_service(name, self.by_name)

    def knows(self, service: str | None) -> bool:
        """Whether some doc declares ``service``."""
        return self.resolve(service) is not None

    def chunks_for(self, service: str | None) -> list[KnowledgeChunk]:
        """The chunks declaring ``service``, in ingest order."""
        return list(self.by_name.get(self.resolve(service) or "", []))

    def names(self) -> list[str]:
        """Every declared service name and alias."""
        return sorted(self.by_name)


def service_match(
    service: str | None, metadata: Mapping[str, Any], catalogue: ServiceCatalogue | None
) -> str:
    """``match``, ``other``, ``part`` or ``unknown`` (see the module docstring)."""
    name = service_name(service)
    if not name:
        return UNKNOWN
    declared = catalogue.resolve(name) if catalogue is not None else None
    if (declared or name) in doc_services(metadata):
        return MATCH
    if declared is not None:
        return OTHER
    if catalogue is not None and is_larger_system(name, catalogue.names()):
        return LARGER_SYSTEM
    return UNKNOWN


def apply_service(
    docs: Sequence[dict[str, Any]],
    service: str | None,
    catalogue: ServiceCatalogue | None,
    boost: float = SERVICE_MATCH_BOOST,
    collection: str = "",
    similarity: Similarity | None = None,
) -> list[dict[str, Any]]:
    """Mark, boost and complete retrieved docs (state form) by the incident's service.

    Args:
        docs: The ``rag`` node's docs (``id``, ``content``, ``similarity``, ``metadata``,
            ``collection``, ``why``), best first.
        service: The incident's ``service`` field.
        catalogue: The knowledge base's service catalogue; None leaves the order as it is.
        boost: Added to a matching doc's fused score.
        collection: The collection recorded on added docs.
        similarity: Scores added docs against the query (their dense similarity); without
            it an added doc's similarity is 0.

    Returns:
        New doc dicts, each ``why`` carrying ``service_match``; docs of the service that were
        not retrieved are added (``why.added_by == "service"``); ordered by fused score.
    """
    marked: list[dict[str, Any]] = []
    for doc in docs:
        match = service_match(service, doc.get("metadata") or {}, catalogue)
        why = dict(doc.get("why") or {})
        why["service_match"] = match
        if match == MATCH:
            why["fused_score"] = float(why.get("fused_score") or 0.0) + boost
        marked.append({**doc, "why": why})
    present = {d["id"] for d in marked}
    added = [c for c in (catalogue.chunks_for(service) if catalogue else []) if c.id not in present]
    added = list({c.id: c for c in added}.values())
    scores = similarity([c.id for c in added]) if similarity is not None and added else {}
    if added:
        for chunk in added:
            marked.append(
                {
                    "id": chunk.id,
                    "content": chunk.text,
                    "similarity": round(float(scores.get(chunk.id, 0.0)), 6),
                    "metadata": dict(chunk.metadata),
                    "collection": collection,
                    "why": {"fused_score": boost, "service_match": MATCH, "added_by": "service"},
                }
            )
    if not service:
        return marked
    order = sorted(
        range(len(marked)),
        key=lambda i: (-float(marked[i]["why"].get("fused_score") or 0.0), i),
    )
    return [marked[i] for i in order]


def dense_similarities(store: VectorStore, query: str, ids: Sequence[str]) -> dict[str, float]:
    """Cosine similarity of ``query`` to the stored vectors of ``ids``, clamped to [0, 1].

    Args:
        store: The collection holding the chunks.
        query: The retrieval query.
        ids: Chunk ids (unknown ones are left out).

    Returns:
        Id -> similarity.
    """
    vectors = store.vectors(ids)
    if not vectors:
        return {}
    query_vector = np.asarray(store.embedder.embed_query(query), dtype=float)
    out: dict[str, float] = {}
    for chunk_id, vector in vectors.items():
        doc = np.asarray(vector, dtype=float)
        denominator = float(np.linalg.norm(query_vector) * np.linalg.norm(doc))
        cosine = float(query_vector @ doc) / denominator if denominator else 0.0
        out[chunk_id] = max(0.0, min(1.0, cosine))
    return out
