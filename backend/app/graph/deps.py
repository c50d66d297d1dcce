"""The frozen dependencies a compiled graph's nodes are bound to."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from app.evidence.sources.collector import EvidenceCollector
from app.rag.history import IncidentHistory
from app.rag.query import incident_query
from app.rag.retrieve import Retriever
from app.rca.base import RcaGenerator
from app.rca.grounding import CitationChecker


@dataclass(frozen=True)
class GraphDeps:
    """What the nodes need; built once in the lifespan (or per test)."""

    retriever: Retriever
    generator: RcaGenerator
    knowledge_version: Callable[[], str]
    top_k: int = 5
    #: Turns an incident into the retrieval query (code, event, message, parsed terms, logs).
    build_query: Callable[[dict[str, Any]], str] = incident_query
    checker: CitationChecker | None = None
    history: IncidentHistory | None = None
    history_top_k: int = 3
    #: Live evidence sources run by the ``collect`` node; None = collect nothing.
    collector: EvidenceCollector | None = None
    #: Masks secrets in collected evidence before it enters the state (the service's redactor).
    redact: Callable[[Any], Any] | None = None
