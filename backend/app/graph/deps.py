"""The frozen dependencies a compiled graph's nodes are bound to."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from app.rag.history import IncidentHistory
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
    checker: CitationChecker | None = None
    history: IncidentHistory | None = None
    history_top_k: int = 3
