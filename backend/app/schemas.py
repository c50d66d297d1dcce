"""API models: what clients send (``…Create``) and what they get back (``…Public``)."""

from __future__ import annotations

from enum import StrEnum
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

MAX_MESSAGE_CHARS = 4_000
MAX_STACK_TRACE_CHARS = 50_000
MAX_LOG_LINES = 500
MAX_LOG_LINE_CHARS = 4_000
MAX_COMMENT_CHARS = 4_000


class IncidentStatus(StrEnum):
    """Where an incident is in its life."""

    ANALYZING = "analyzing"
    AWAITING_REVIEW = "awaiting_review"
    DECIDING = "deciding"
    APPROVED = "approved"
    REJECTED = "rejected"
    FAILED = "failed"


class DecisionAction(StrEnum):
    """What a reviewer can do with a pending review."""

    APPROVE = "approve"
    REJECT = "reject"
    EDIT = "edit"
    REANALYZE = "reanalyze"


def _not_blank(value: str | None) -> str | None:
    if value is not None and not value.strip():
        raise ValueError("must not be blank")
    return value


class IncidentCreate(BaseModel):
    """An incident as reported by a person or a monitoring system."""

    model_config = ConfigDict(
        extra="forbid",
        json_schema_extra={
            "examples": [
                {
                    "error_code": "CO-500",
                    "event": "CHECKOUT_SERVICE_CRASH",
                    "message": "ZeroDivisionError while calculating checkout discount",
                    "stack_trace": "Traceback (most recent call last): ...",
                    "logs": ["2026-11-29T10:00:01Z ERROR checkout POST /checkout 500"],
                    "service": "checkout-service",
                }
            ]
        },
    )

    error_code: str | None = Field(default=None, max_length=64)
    event: str | None = Field(default=None, max_length=128)
    message: str = Field(min_length=1, max_length=MAX_MESSAGE_CHARS)
    stack_trace: str | None = Field(default=None, max_length=MAX_STACK_TRACE_CHARS)
    logs: list[str] | None = Field(default=None, max_length=MAX_LOG_LINES)
    service: str | None = Field(default=None, max_length=128)

    @field_validator("message")
    @classmethod
    def message_not_blank(cls, value: str) -> str:
        """A message of only white space says nothing."""
        if not value.strip():
            raise ValueError("message must not be blank")
        return value

    @field_validator("logs")
    @classmethod
    def log_lines_capped(cls, value: list[str] | None) -> list[str] | None:
        """Each log line has a length cap."""
        for number, line in enumerate(value or [], start=1):
            if len(line) > MAX_LOG_LINE_CHARS:
                raise ValueError(
                    f"log line {number} is longer than {MAX_LOG_LINE_CHARS} characters"
                )
        return value


class AddedEvidence(BaseModel):
    """Evidence a reviewer adds when asking for re-analysis."""

    model_config = ConfigDict(extra="forbid")

    logs: list[str] | None = Field(default=None, max_length=MAX_LOG_LINES)
    stack_trace: str | None = Field(default=None, max_length=MAX_STACK_TRACE_CHARS)
    note: str | None = Field(default=None, max_length=MAX_COMMENT_CHARS)


class DecisionCreate(BaseModel):
    """A reviewer's decision on a pending review."""

    model_config = ConfigDict(
        extra="forbid",
        json_schema_extra={
            "examples": [
                {"action": "approve", "reviewer": "ana", "comment": "matches the traceback"},
                {"action": "reject", "reviewer": "ana", "comment": "wrong family"},
            ]
        },
    )

    action: DecisionAction
    reviewer: str | None = Field(default=None, max_length=128)
    comment: str | None = Field(default=None, max_length=MAX_COMMENT_CHARS)
    rca: dict[str, Any] | None = None
    added_evidence: AddedEvidence | None = None

    @field_validator("reviewer")
    @classmethod
    def reviewer_not_blank(cls, value: str | None) -> str | None:
        """A reviewer name, when given, must say something."""
        return _not_blank(value)

    @model_validator(mode="after")
    def required_fields_per_action(self) -> DecisionCreate:
        """``edit`` needs an ``rca``; ``reject`` and ``reanalyze`` need a ``comment``."""
        if self.action is DecisionAction.EDIT and not self.rca:
            raise ValueError("an 'edit' decision needs the edited 'rca'")
        needs_comment = (DecisionAction.REJECT, DecisionAction.REANALYZE)
        if self.action in needs_comment and not (self.comment and self.comment.strip()):
            raise ValueError(
                f"a '{self.action.value}' decision needs a 'comment' giving the reason"
            )
        return self


class SimilarDoc(BaseModel):
    """A knowledge doc exactly as the RCA saw it, with why it ranked."""

    id: str
    content: str
    similarity: float
    metadata: dict[str, Any]
    collection: str | None = None
    why: dict[str, Any] = Field(default_factory=dict)


class PastIncident(BaseModel):
    """An approved earlier incident similar to this one."""

    incident_id: str
    error_code: str | None = None
    summary: str
    similarity: float
    decided_at: str | None = None


class IncidentPublic(BaseModel):
    """An incident with its analysis and review state."""

    id: str
    status: IncidentStatus
    incident: dict[str, Any]
    rca: dict[str, Any] | None = None
    final_rca: dict[str, Any] | None = None
    similar_error_docs: list[SimilarDoc] = Field(default_factory=list)
    similar_past_incidents: list[PastIncident] = Field(default_factory=list)
    dropped_evidence_ids: list[str] = Field(default_factory=list)
    unsupported_citations: list[dict[str, Any]] = Field(default_factory=list)
    low_confidence: bool = False
    decision: dict[str, Any] | None = None
    drafts: list[dict[str, Any]] = Field(default_factory=list)
    created_at: str
    updated_at: str


class IncidentSummary(BaseModel):
    """One row of the incident list (read from the index, no graph replay)."""

    id: str
    status: IncidentStatus
    error_code: str | None = None
    service: str | None = None
    confidence: str | None = None
    summary: str | None = None
    decided_by: str | None = None
    created_at: str
    updated_at: str


class IncidentList(BaseModel):
    """A page of incidents, newest first."""

    items: list[IncidentSummary]
    total: int
    limit: int
    offset: int


class ErrorBody(BaseModel):
    """The error envelope's inner object."""

    code: str
    message: str


class ErrorResponse(BaseModel):
    """Every error response: ``{"error": {"code", "message"}}``."""

    error: ErrorBody


StatusFilter = Literal["analyzing", "awaiting_review", "deciding", "approved", "rejected", "failed"]
