"""The MCP server: the product's own retrieval and incident service as tools, docs as resources.

Tools: ``search_knowledge``, ``analyze_incident`` (the incident goes to a human reviewer, as it
does through the API), ``get_incident`` and ``list_pending_reviews``. There is no decision tool:
approving or rejecting an RCA stays with people. Every knowledge-base doc is a resource
``knowledge://docs/{id}``. The same server object serves both transports; tools find the
service's objects through ``runtime()``, and the caller's identity on the HTTP request.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from contextlib import AbstractAsyncContextManager
from typing import Annotated, Any, TypeVar

import anyio
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ResourceNotFoundError, ToolError
from mcp_types import Resource
from pydantic import BaseModel, Field

from app.core.errors import AppError, NotReady
from app.core.security import LOCAL_IDENTITY, Identity, Role
from app.intake.notify.messages import incident_url
from app.rag.ingest import KnowledgeChunk
from app.runtime import Runtime
from app.schemas import IncidentCreate, IncidentList, IncidentPublic, IncidentStatus

SERVER_NAME = "incident-rca"
DOC_URI = "knowledge://docs/{doc_id}"
INSTRUCTIONS = (
    "Root-cause analysis for production incidents. search_knowledge finds the known error "
    "families that match a symptom; analyze_incident drafts an evidence-cited RCA that a human "
    "reviewer approves or rejects in the RCA UI (there is no tool to decide); get_incident and "
    "list_pending_reviews read incidents."
)

RuntimeSource = Callable[[], Runtime | None]
Lifespan = Callable[[MCPServer[Any]], AbstractAsyncContextManager[Any]]


class KnowledgeHit(BaseModel):
    """One ranked knowledge-base doc."""

    id: str
    error_code: str | None
    text: str
    score: float = Field(description="Rerank score when reranked, else dense cosine similarity.")
    why: dict[str, Any] = Field(description="Dense and keyword ranks and scores, fusion, boosts.")


class KnowledgeSearch(BaseModel):
    """The ranked docs for a query."""

    query: str
    low_confidence: bool = Field(description="True when no doc passed the relevance gates.")
    hits: list[KnowledgeHit]
    notes: list[str] = Field(default_factory=list)


class AnalysisPublic(BaseModel):
    """A drafted RCA waiting for a human reviewer."""

    id: str
    status: IncidentStatus
    review_url: str = Field(description="Where a reviewer approves or rejects the draft.")
    draft: dict[str, Any] | None = Field(description="The RCA draft with its cited evidence.")
    low_confidence: bool


def identity_of(ctx: Context[Any, Any]) -> Identity:
    """Who is calling: the identity the HTTP gate found, or the local user over stdio."""
    request = ctx.request_context.request
    if request is None:
        return LOCAL_IDENTITY
    identity = getattr(getattr(request, "state", None), "identity", None)
    if not isinstance(identity, Identity):
        # The gate authenticates every HTTP request first; reaching here means it was bypassed.
        raise ToolError("unauthenticated request")
    return identity


def _error_code(metadata: dict[str, Any]) -> str | None:
    code = metadata.get("error_code")
    return str(code) if code else None


def _doc_name(chunk: KnowledgeChunk) -> str:
    parts = [str(chunk.metadata.get(k) or "") for k in ("error_code", "error_name")]
    return " ".join(p for p in parts if p) or chunk.id


class RcaMcpServer(MCPServer[Any]):
    """``MCPServer`` whose resource list is the knowledge base as it is right now."""

    def __init__(self, runtime: RuntimeSource, lifespan: Lifespan | None = None) -> None:
        super().__init__(SERVER_NAME, instructions=INSTRUCTIONS, version="0.1.0", lifespan=lifespan)
        self._runtime_source = runtime

    def runtime(self) -> Runtime:
        """The service's objects; NotReady while they are being built."""
        runtime = self._runtime_source()
        if runtime is None:
            raise NotReady("the service is starting; try again shortly")
        return runtime

    async def knowledge_docs(self) -> list[KnowledgeChunk]:
        """Every doc of the knowledge collection (read off the event loop)."""
        return await anyio.to_thread.run_sync(self.runtime().knowledge.documents)

    async def list_resources(self) -> list[Resource]:
        """The static resources plus one per knowledge-base doc."""
        docs = await self.knowledge_docs()
        return [
            *await super().list_resources(),
            *[
                Resource(
                    uri=DOC_URI.format(doc_id=chunk.id),
                    name=_doc_name(chunk),
                    description=f"Knowledge-base entry {_doc_name(chunk)}",
                    mime_type="text/plain",
                )
                for chunk in docs
            ],
        ]


T = TypeVar("T")


async def _call(what: Callable[[], Awaitable[T]]) -> T:
    """Await ``what()``; domain errors become tool errors the agent can read."""
    try:
        return await what()
    except AppError as exc:
        raise ToolError(exc.message) from exc


def build_mcp_server(runtime: RuntimeSource, lifespan: Lifespan | None = None) -> RcaMcpServer:
    """The MCP server over the objects ``runtime()`` returns.

    Args:
        runtime: Returns the running service's objects, or None while they are being built.
        lifespan: Opens the runtime for a transport that owns it (stdio); None over HTTP,
            where the application's lifespan does.

    Returns:
        The server, with its tools and resources registered.
    """
    server = RcaMcpServer(runtime, lifespan)

    @server.tool()
    async def search_knowledge(
        query: Annotated[str, Field(min_length=1, max_length=2000, description="A symptom.")],
        limit: Annotated[int | None, Field(ge=1, le=50, description="Maximum docs.")] = None,
    ) -> KnowledgeSearch:
        """Rank the knowledge base's error families for a symptom, error code or log line."""

        async def search() -> KnowledgeSearch:
            engine = server.runtime().retriever
            top = limit or engine.config.default_limit
            found = await anyio.to_thread.run_sync(engine.retrieve, query, top)
            hits = [
                KnowledgeHit(
                    id=doc.id,
                    error_code=_error_code(doc.metadata),
                    text=doc.text,
                    score=doc.rerank_score if doc.rerank_score is not None else doc.similarity,
                    why=doc.explanation(),
                )
                for doc in found.docs
            ]
            return KnowledgeSearch(
                query=found.query,
                low_confidence=found.low_confidence,
                hits=hits,
                notes=list(found.notes),
            )

        return await _call(search)

    @server.tool()
    async def analyze_incident(incident: IncidentCreate, ctx: Context[Any, Any]) -> AnalysisPublic:
        """Draft an evidence-cited RCA for an incident; a human reviewer then decides on it.

        Needs an API key with the submitter role. The incident is masked like any other.
        """
        caller = identity_of(ctx)
        if not caller.can(Role.SUBMITTER):
            raise ToolError(f"this API key lacks the '{Role.SUBMITTER.name.lower()}' role")

        async def analyze() -> AnalysisPublic:
            runtime = server.runtime()
            created = await runtime.incidents.create(incident)
            return AnalysisPublic(
                id=created.id,
                status=created.status,
                review_url=incident_url(runtime.settings.ui_base_url, created.id),
                draft=created.rca,
                low_confidence=created.low_confidence,
            )

        return await _call(analyze)

    @server.tool()
    async def get_incident(
        incident_id: Annotated[str, Field(min_length=1, max_length=100)],
    ) -> IncidentPublic:
        """One incident with its draft, the docs it saw, the decision and the final RCA."""

        async def get() -> IncidentPublic:
            return await server.runtime().incidents.get(incident_id)

        return await _call(get)

    @server.tool()
    async def list_pending_reviews(
        limit: Annotated[int, Field(ge=1, le=200)] = 20,
        offset: Annotated[int, Field(ge=0)] = 0,
    ) -> IncidentList:
        """Incidents whose draft RCA awaits a human reviewer, newest first."""

        async def page() -> IncidentList:
            service = server.runtime().incidents
            return await service.page(IncidentStatus.AWAITING_REVIEW.value, limit, offset)

        return await _call(page)

    @server.resource(DOC_URI, name="knowledge-doc", mime_type="text/plain")
    async def knowledge_doc(doc_id: str) -> str:
        """One knowledge-base entry, as the retrieval indexes it."""
        for chunk in await server.knowledge_docs():
            if chunk.id == doc_id:
                return chunk.text
        raise ResourceNotFoundError(f"no knowledge doc '{doc_id}'")

    return server
