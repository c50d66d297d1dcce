"""Build the RCA graph: collect → rag → rca → whitelist → citation_check → approval → finalize.

``collect`` gathers live evidence (does nothing when no source is configured). A ``reanalyze``
decision routes from approval back to collect, so the evidence is collected again over a fresh
window before retrieval runs again.
"""

from __future__ import annotations

from functools import partial
from typing import Any

from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.graph import END, START, StateGraph
from langgraph.graph.state import CompiledStateGraph

from app.core.metrics import timed_node
from app.graph.deps import GraphDeps
from app.graph.nodes.approval import approval, route_after_approval
from app.graph.nodes.citation_check import citation_check
from app.graph.nodes.collect import collect
from app.graph.nodes.finalize import finalize
from app.graph.nodes.rag import rag
from app.graph.nodes.rca import rca
from app.graph.nodes.whitelist import whitelist
from app.graph.state import RcaState


def build_graph(
    deps: GraphDeps, checkpointer: BaseCheckpointSaver[Any] | None
) -> CompiledStateGraph[RcaState, Any, RcaState, RcaState]:
    """Compile the graph with ``deps`` bound into the nodes that need them."""
    graph = StateGraph(RcaState)
    nodes: dict[str, Any] = {
        "collect": partial(collect, deps=deps),
        "rag": partial(rag, deps=deps),
        "rca": partial(rca, deps=deps),
        "whitelist": whitelist,
        "citation_check": partial(citation_check, deps=deps),
        "approval": approval,
        "finalize": finalize,
    }
    for name, node in nodes.items():
        graph.add_node(name, timed_node(name, node))
    graph.add_edge(START, "collect")
    graph.add_edge("collect", "rag")
    graph.add_edge("rag", "rca")
    graph.add_edge("rca", "whitelist")
    graph.add_edge("whitelist", "citation_check")
    graph.add_edge("citation_check", "approval")
    graph.add_conditional_edges("approval", route_after_approval, ["collect", "finalize"])
    graph.add_edge("finalize", END)
    return graph.compile(checkpointer=checkpointer)
