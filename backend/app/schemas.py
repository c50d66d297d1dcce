"""API models: what clients send (``…Create``) and what they get back (``…Public``)."""

from __future__ import annotations

from enum import StrEnum
from typing import Annotated, Any, Literal

from pydantic import (
    AwareDatetime,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    StringConstraints,
    field_validator,
    model_validator,
)

MAX_MESSAGE_CHARS = 4_000
MAX_STACK_TRACE_CHARS = 50_000
MAX_LOG_LINES = 500
MAX_LOG_LINE_CHARS = 4_000
MAX_COMMENT_CHARS = 4_000
MAX_LABELS = 64
MAX_URL_CHARS = 4_000

LabelName = Annotated[str, StringConstraints(min_length=1, max_length=256)]
LabelValue = Annotated[str, StringConstraints(max_length=8_000)]


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


#: JSON Schema for "not only white space", the rule ``_not_blank`` enforces.
NOT_BLANK: dict[str, Any] = {"pattern": r"\S"}

#: The per-action rules of a decision, stated in the schema (``required_fields_per_action``).
DECISION_RULES: dict[str, Any] = {
    "allOf": [
        {
            "if": {"properties": {"action": {"enum": ["reject", "reanalyze"]}}},
            "then": {
                "required": ["comment"],
                "properties": {"comment": {"type": "string", "pattern": r"\S"}},
            },
        },
        {
            "if": {"properties": {"action": {"const": "edit"}}},
            "then": {
                "required": ["rca"],
                "properties": {"rca": {"type": "object", "minProperties": 1}},
            },
        },
    ]
}


def reject_numeric_time(value: Any) -> Any:
    """A time is an RFC 3339 string; a bare number would be read as seconds since 1970."""
    if isinstance(value, int | float) or (isinstance(value, str) and _is_number(value)):
        raise ValueError("must be an RFC 3339 date-time string")
    return value


def reject_bool(value: Any) -> Any:
    """JSON ``true`` is not the integer 1."""
    if isinstance(value, bool):
        raise ValueError("must be an integer")
    return value


#: An integer as JSON Schema means it (``27`` or ``27.0``, never ``true``).
JsonInt = Annotated[int, BeforeValidator(reject_bool)]

#: An aware time that must be written as RFC 3339 (not as seconds since 1970).
RfcTime = Annotated[AwareDatetime, BeforeValidator(reject_numeric_time)]


def _is_number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


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
    message: str = Field(min_length=1, max_length=MAX_MESSAGE_CHARS, json_schema_extra=NOT_BLANK)
    stack_trace: str | None = Field(default=None, max_length=MAX_STACK_TRACE_CHARS)
    logs: list[str] | None = Field(default=None, max_length=MAX_LOG_LINES)
    service: str | None = Field(default=None, max_length=128)
    labels: dict[LabelName, LabelValue] | None = Field(
        default=None,
        max_length=MAX_LABELS,
        description="Monitoring labels (alertname, job, instance …); evidence sources "
        "select on them",
    )
    generator_url: str | None = Field(
        default=None,
        max_length=MAX_URL_CHARS,
        description="The alerting rule's URL (Alertmanager's generatorURL); its g0.expr is "
        "the alert's own expression, run against Prometheus",
    )
    started_at: RfcTime | None = Field(
        default=None,
        description="When the failure began (an alert's startsAt); evidence is collected "
        "from a window before it. Default: when the incident is reported",
    )

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
            ],
            **DECISION_RULES,
        },
    )

    action: DecisionAction
    reviewer: str | None = Field(default=None, max_length=128, json_schema_extra=NOT_BLANK)
    comment: str | None = Field(default=None, max_length=MAX_COMMENT_CHARS)
    rca: dict[str, Any] | None = None
    added_evidence: AddedEvidence | None = None
    confirm_unsupported: bool = Field(
        default=False,
        description="Store an edit even though some edited claims fail the citation check",
    )

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


class CollectedEvidence(BaseModel):
    """An item collected from a live source: a metric series or a log record.

    Metric items carry ``points`` (``[[unix seconds, value], …]``) and a ``url`` to the
    Prometheus graph page; log items carry ``lines`` (``[{"number", "text"}]``), ``file`` and
    ``line``. ``facts`` holds what the item says for weighing (trend, baseline, peak, change
    time; level, exception, codes, statuses).
    """

    model_config = ConfigDict(extra="allow")

    id: str
    source: str
    kind: str
    summary: str
    query: str
    range: dict[str, str]
    points: list[list[float]] | None = None
    lines: list[dict[str, Any]] | None = None
    facts: dict[str, Any] = Field(default_factory=dict)
    url: str | None = None
    file: str | None = None
    line: int | None = None


class UnavailableSource(BaseModel):
    """A source (or part of one) that could not be read for this incident, and why."""

    source: str
    reason: str


class InjectionFlag(BaseModel):
    """An instruction-like phrase found in the incident's text."""

    phrase: str
    evidence_id: str


class IncidentPublic(BaseModel):
    """An incident with its analysis and review state."""

    id: str
    status: IncidentStatus
    incident: dict[str, Any]
    rca: dict[str, Any] | None = None
    final_rca: dict[str, Any] | None = None
    similar_error_docs: list[SimilarDoc] = Field(default_factory=list)
    similar_past_incidents: list[PastIncident] = Field(default_factory=list)
    collected_evidence: list[CollectedEvidence] = Field(default_factory=list)
    sources_unavailable: list[UnavailableSource] = Field(default_factory=list)
    dropped_evidence_ids: list[str] = Field(default_factory=list)
    injection_flags: list[InjectionFlag] = Field(
        default_factory=list,
        description="Instruction-like phrases in the incident's text, for the reviewer",
    )
    unsupported_citations: list[dict[str, Any]] = Field(default_factory=list)
    low_confidence: bool = False
    diagnosis: dict[str, Any] | None = Field(
        default=None,
        description=(
            "The differential diagnosis: each candidate family with the signals the incident's "
            "evidence confirms (with evidence ids), contradicts and does not show; its score, "
            "whether it is offered, and the final abstain decision with its reason"
        ),
    )
    decision: dict[str, Any] | None = None
    drafts: list[dict[str, Any]] = Field(default_factory=list)
    assignee: str | None = Field(default=None, description="Who claimed the incident")
    created_at: str
    updated_at: str


#: How much of an incident's message a list row carries.
LIST_MESSAGE_CHARS = 300


class IncidentSummary(BaseModel):
    """One row of the incident list (read from the index, no graph replay)."""

    id: str
    status: IncidentStatus
    error_code: str | None = None
    event: str | None = None
    service: str | None = None
    message: str | None = Field(default=None, description="The message's first 300 characters")
    confidence: str | None = None
    summary: str | None = None
    decided_by: str | None = None
    decision_action: DecisionAction | None = Field(
        default=None, description="How it was decided: `edit` is an approval with edits"
    )
    assignee: str | None = None
    group_key: str | None = Field(default=None, description="The group of similar incidents")
    group_size: int | None = Field(
        default=None, description="In a grouped list: how many incidents the row stands for"
    )
    created_at: str
    updated_at: str


class IncidentList(BaseModel):
    """A page of the incident list, with the counts per status under the same filters."""

    items: list[IncidentSummary]
    total: int = Field(description="Rows the whole list holds (groups, when grouped)")
    counts: dict[IncidentStatus, int] = Field(
        default_factory=dict,
        description="Incidents per status under every filter but the status one",
    )
    limit: int
    next_cursor: str | None = Field(
        default=None, description="Pass as `cursor` for the next page; null on the last page"
    )


class AssignmentCreate(BaseModel):
    """Claim an incident for someone, or release it (``assignee: null``)."""

    model_config = ConfigDict(extra="forbid", json_schema_extra={"examples": [{"assignee": "ana"}]})

    assignee: str | None = Field(max_length=128, json_schema_extra=NOT_BLANK)

    @field_validator("assignee")
    @classmethod
    def assignee_not_blank(cls, value: str | None) -> str | None:
        """A name, when given, must say something."""
        return _not_blank(value)


#: How many incidents one bulk decision may cover.
MAX_BULK_IDS = 500


class BulkDecisionCreate(BaseModel):
    """One decision for several incidents (a group): each is decided on its own."""

    model_config = ConfigDict(
        extra="forbid",
        json_schema_extra={
            "examples": [
                {
                    "ids": [
                        "0b6f1c9e-2f4a-4d3b-9a57-3c1e8f0d2a11",
                        "7d2e4a10-5c3b-4e8f-b1a6-9f0c2d3e4b55",
                    ],
                    "action": "approve",
                    "comment": "same outage",
                }
            ],
            "if": {"properties": {"action": {"const": "reject"}}},
            "then": {
                "required": ["comment"],
                "properties": {"comment": {"type": "string", "pattern": r"\S"}},
            },
        },
    )

    ids: list[str] = Field(
        min_length=1, max_length=MAX_BULK_IDS, json_schema_extra={"uniqueItems": True}
    )
    action: Literal[DecisionAction.APPROVE, DecisionAction.REJECT]
    comment: str | None = Field(default=None, max_length=MAX_COMMENT_CHARS)
    reviewer: str | None = Field(default=None, max_length=128)

    @model_validator(mode="after")
    def reason_and_unique_ids(self) -> BulkDecisionCreate:
        """Each id once; ``reject`` needs a ``comment``."""
        if len(set(self.ids)) != len(self.ids):
            raise ValueError("ids must not repeat")
        if self.action is DecisionAction.REJECT and not (self.comment and self.comment.strip()):
            raise ValueError("a 'reject' decision needs a 'comment' giving the reason")
        return self


class BulkDecisionResult(BaseModel):
    """What happened to one incident of a bulk decision."""

    id: str
    ok: bool
    status: IncidentStatus | None = Field(default=None, description="Its status afterwards")
    error: ErrorBody | None = None


class BulkDecisionPublic(BaseModel):
    """Per-incident results, in the order of the request's ids."""

    results: list[BulkDecisionResult]


class ErrorBody(BaseModel):
    """The error envelope's inner object."""

    code: str
    message: str


class ErrorResponse(BaseModel):
    """Every error response: ``{"error": {"code", "message"}}``."""

    error: ErrorBody


StatusFilter = Literal["analyzing", "awaiting_review", "deciding", "approved", "rejected", "failed"]
