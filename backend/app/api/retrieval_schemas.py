"""Request and response models of the retrieval APIs (``POST /retrieve``, ``POST /rag/query``).

``/retrieve`` follows the RAG-service contract: ranked context chunks under a token budget,
citations and a ``low_confidence`` flag. ``/rag/query`` returns an agent-tool friendly list of
``{text, score, file_name}`` nodes. For knowledge-base chunks ``chunk_id`` is the chunk's stable id
(``error-doc-<sha256 prefix>``) and ``source_id`` its ``error_code`` (``PAY-408``), so citations
are error codes; chunks of other collections cite their ``source_id`` metadata, else their source
file. Each chunk also says why it ranked (``explanation``).
"""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, field_validator, model_validator

from app.rag.packing import PackedContext, default_source_id
from app.rag.retrieve import RankedDoc, Retrieval
from app.schemas import JsonInt, reject_bool

#: Schema-level cap on query length; ``RCA_QUERY_MAX_CHARS`` may lower it, never raise it.
QUERY_MAX_CHARS = 2000
#: Chroma's longest collection name.
COLLECTION_NAME_MAX_CHARS = 512


def _not_blank(value: str) -> str:
    if not value.strip():
        raise ValueError("must not be empty or whitespace")
    return value


class RankExplanationPublic(BaseModel):
    """Why a chunk ranked where it did."""

    dense_rank: int | None = Field(description="Rank by dense cosine similarity (1 = best).")
    dense_score: float | None = Field(description="Dense cosine similarity in [0, 1].")
    bm25_rank: int | None = Field(description="Rank by BM25 keyword score (1 = best).")
    bm25_score: float | None = Field(description="BM25 keyword score (unbounded).")
    fused_score: float | None = Field(description="Reciprocal-rank-fusion score incl. boosts.")
    code_match: bool = Field(description="The query names this chunk's error code exactly.")
    rerank_score: float | None = Field(description="Reranker score; null without a reranker.")

    @classmethod
    def from_doc(cls, doc: RankedDoc) -> RankExplanationPublic:
        """The explanation of one ranked doc."""
        return cls.model_validate(doc.explanation())


#: At least one part of a retrieval incident must carry text, or the built query is empty.
_INCIDENT_HAS_TEXT: dict[str, Any] = {
    "anyOf": [
        *(
            {"required": [name], "properties": {name: {"type": "string", "pattern": r"\S"}}}
            for name in ("error_code", "event", "message", "stack_trace")
        ),
        {
            "required": ["logs"],
            "properties": {
                "logs": {"type": "array", "contains": {"type": "string", "pattern": r"\S"}}
            },
        },
    ]
}


class RetrievalIncident(BaseModel):
    """An incident to retrieve for: its search text is built by the one query builder."""

    model_config = ConfigDict(extra="forbid", json_schema_extra=_INCIDENT_HAS_TEXT)

    error_code: str | None = Field(default=None, max_length=200)
    event: str | None = Field(default=None, max_length=500)
    service: str | None = Field(default=None, max_length=200)
    message: str | None = Field(default=None, max_length=20_000)
    stack_trace: str | None = Field(default=None, max_length=100_000)
    logs: list[str] | None = Field(default=None, max_length=1_000)


class RetrievalCreate(BaseModel):
    """A retrieval over a base collection and an optional per-user/team collection.

    Give either ``query`` (free text) or ``incident`` (its retrieval text is built by
    ``app.rag.query``, exactly as for an incident the graph analyses).
    """

    model_config = ConfigDict(
        json_schema_extra={
            "examples": [
                {
                    "query": "PAY-408 payments time out at checkout",
                    "collection_name": "error_docs",
                    "user_collection_name": "error_docs_team_payments",
                    "limit": 15,
                }
            ],
            # Exactly one of the two, as ``_query_or_incident`` enforces.
            "oneOf": [
                {
                    "required": ["query"],
                    "properties": {"query": {"type": "string"}, "incident": {"type": "null"}},
                },
                {
                    "required": ["incident"],
                    "properties": {"incident": {"type": "object"}, "query": {"type": "null"}},
                },
            ],
        }
    )

    query: str | None = Field(
        default=None,
        min_length=1,
        max_length=QUERY_MAX_CHARS,
        description="Free text.",
        json_schema_extra={"pattern": r"\S"},
    )
    incident: RetrievalIncident | None = Field(
        default=None, description="An incident whose retrieval text is built for you."
    )
    collection_name: str = Field(
        min_length=1, max_length=COLLECTION_NAME_MAX_CHARS, description="Base collection."
    )
    user_collection_name: str | None = Field(
        default=None,
        max_length=COLLECTION_NAME_MAX_CHARS,
        description="Optional per-user or per-team collection, searched alongside the base.",
    )
    limit: JsonInt = Field(default=15, ge=1, le=50, description="Maximum chunks before packing.")

    @field_validator("query")
    @classmethod
    def _check_query(cls, value: str | None) -> str | None:
        return None if value is None else _not_blank(value)

    @model_validator(mode="after")
    def _query_or_incident(self) -> RetrievalCreate:
        if (self.query is None) == (self.incident is None):
            raise ValueError("give exactly one of 'query' or 'incident'")
        return self

    def collection_names(self) -> list[str]:
        """The collections to search, base first."""
        names = [self.collection_name]
        if self.user_collection_name:
            names.append(self.user_collection_name)
        return names


class ContextChunkPublic(BaseModel):
    """One chunk of retrieved context."""

    chunk_id: str
    text: str
    source_id: str | None = Field(description="What the chunk cites (an error code for the KB).")
    collection_name: str
    retrieval_score: float = Field(description="Dense cosine similarity (0 if keyword-only).")
    rerank_score: float | None
    explanation: RankExplanationPublic

    @classmethod
    def from_doc(cls, doc: RankedDoc) -> ContextChunkPublic:
        """The public form of one ranked doc."""
        return cls(
            chunk_id=doc.id,
            text=doc.text,
            source_id=default_source_id(doc),
            collection_name=doc.collection,
            retrieval_score=doc.similarity,
            rerank_score=doc.rerank_score,
            explanation=RankExplanationPublic.from_doc(doc),
        )


class RagContextPublic(BaseModel):
    """Ranked, budgeted context with citations; ``low_confidence`` when nothing survived."""

    model_config = ConfigDict(
        json_schema_extra={
            "examples": [
                {
                    "context_chunks": [
                        {
                            "chunk_id": "error-doc-3f9a61c2d4b7e805",
                            "text": "Error: PAY-408 PAYMENT_TIMEOUT\nComponent: payment provider…",
                            "source_id": "PAY-408",
                            "collection_name": "error_docs",
                            "retrieval_score": 0.62,
                            "rerank_score": None,
                            "explanation": {
                                "dense_rank": 1,
                                "dense_score": 0.62,
                                "bm25_rank": 1,
                                "bm25_score": 9.8,
                                "fused_score": 1.0328,
                                "code_match": True,
                                "rerank_score": None,
                            },
                        }
                    ],
                    "citations": ["PAY-408"],
                    "low_confidence": False,
                    "rerank_fallback": False,
                    "notes": [],
                }
            ]
        }
    )

    context_chunks: list[ContextChunkPublic]
    citations: list[str]
    low_confidence: bool
    rerank_fallback: bool = Field(
        default=False, description="A reranker is configured but failed; fusion order kept."
    )
    notes: list[str] = Field(
        default_factory=list,
        description="Skipped collections, fallbacks, spelling repairs.",
    )

    @classmethod
    def from_results(cls, retrieval: Retrieval, packed: PackedContext) -> RagContextPublic:
        """The response for a retrieval and its packed context."""
        return cls(
            context_chunks=[ContextChunkPublic.from_doc(d) for d in packed.chunks],
            citations=packed.citations,
            low_confidence=not packed.chunks,
            rerank_fallback=retrieval.rerank_fallback,
            notes=list(retrieval.notes),
        )


class RagQueryCreate(BaseModel):
    """A question for the knowledge base, as an agent tool would ask it."""

    model_config = ConfigDict(
        json_schema_extra={"examples": [{"query": "Why do card payments at the tills get 502?"}]}
    )

    query: str = Field(min_length=1, max_length=QUERY_MAX_CHARS)
    limit: Annotated[int, Field(ge=1, le=50), BeforeValidator(reject_bool)] | None = Field(
        default=None, description="Maximum nodes (default RCA_RETRIEVE_DEFAULT_LIMIT)."
    )

    _check_query = field_validator("query")(_not_blank)


class RagNodePublic(BaseModel):
    """One retrieved passage."""

    text: str
    score: float = Field(description="Rerank score when reranked, else dense cosine similarity.")
    file_name: str | None = Field(description="The source file the passage came from.")
    chunk_id: str

    @classmethod
    def from_doc(cls, doc: RankedDoc) -> RagNodePublic:
        """The public form of one ranked doc."""
        source: Any = doc.metadata.get("source")
        return cls(
            text=doc.text,
            score=doc.rerank_score if doc.rerank_score is not None else doc.similarity,
            file_name=str(source) if source is not None else None,
            chunk_id=doc.id,
        )


class RagQueryPublic(BaseModel):
    """Ranked passages for a query."""

    model_config = ConfigDict(
        json_schema_extra={
            "examples": [
                {
                    "nodes": [
                        {
                            "text": "Error: POS-502-CARD CARD_PAYMENT_GATEWAY_ERROR\nComponent: …",
                            "score": 0.58,
                            "file_name": "error_docs.txt",
                            "chunk_id": "error-doc-0b1c2d3e4f5a6b7c",
                        }
                    ],
                    "total": 1,
                    "processing_time": 0.031,
                    "query": "Why do card payments at the tills get 502?",
                    "low_confidence": False,
                }
            ]
        }
    )

    nodes: list[RagNodePublic]
    total: int
    processing_time: float = Field(description="Seconds spent retrieving.")
    query: str
    low_confidence: bool

    @classmethod
    def from_retrieval(cls, retrieval: Retrieval, seconds: float) -> RagQueryPublic:
        """The response for one retrieval."""
        nodes = [RagNodePublic.from_doc(d) for d in retrieval.docs]
        return cls(
            nodes=nodes,
            total=len(nodes),
            processing_time=round(seconds, 4),
            query=retrieval.query,
            low_confidence=retrieval.low_confidence,
        )
