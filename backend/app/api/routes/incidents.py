"""Incident routes: create, read, decide, audit, postmortem. Thin: parse, call, map.

The list, claims and bulk decisions are in ``workspace.py``.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from fastapi import APIRouter, Depends, Header, Query, Response
from fastapi.responses import PlainTextResponse

from app.api.deps import (
    FORBIDDEN,
    UNAUTHORIZED,
    IncidentIdPath,
    IncidentServiceDep,
    ReviewerDep,
    require,
)
from app.core.security import LOCAL_IDENTITY, Role
from app.incidents.postmortem import Postmortem
from app.incidents.postmortem_markdown import render_markdown
from app.schemas import (
    DecisionCreate,
    ErrorResponse,
    IncidentCreate,
    IncidentPublic,
)

router = APIRouter(
    prefix="/api/incidents",
    tags=["incidents"],
    dependencies=[Depends(require(Role.SUBMITTER))],
    responses=UNAUTHORIZED,
)

ERRORS: dict[int | str, dict[str, Any]] = {
    404: {"model": ErrorResponse, "description": "No such incident"},
    409: {"model": ErrorResponse, "description": "The incident is not awaiting review"},
    422: {"model": ErrorResponse, "description": "Invalid input"},
}


@router.post(
    "",
    status_code=201,
    response_model=IncidentPublic,
    responses={
        **ERRORS,
        200: {"model": IncidentPublic, "description": "A replay of an ``Idempotency-Key``"},
    },
)
async def create_incident(
    body: IncidentCreate,
    service: IncidentServiceDep,
    response: Response,
    idempotency_key: Annotated[
        str | None,
        Header(
            min_length=1,
            max_length=200,
            pattern=r"^[\x21-\x7e]+$",
            examples=["checkout-crash-2024-05-01T10:00Z"],
        ),
    ] = None,
) -> IncidentPublic:
    """Analyse an incident; it comes back awaiting a reviewer's decision.

    With an ``Idempotency-Key`` header, a retry with the same key and body returns the incident
    the first request created (``200``) instead of a second one; the same key with another body
    is ``422``. Keys are remembered for ``RCA_IDEMPOTENCY_KEY_TTL_HOURS``.
    """
    incident, created = await service.create_once(body, idempotency_key)
    if not created:
        response.status_code = 200
    return incident


@router.get("/{incident_id}", response_model=IncidentPublic, responses=ERRORS)
async def get_incident(incident_id: IncidentIdPath, service: IncidentServiceDep) -> IncidentPublic:
    """One incident with its analysis."""
    return await service.get(incident_id)


@router.post(
    "/{incident_id}/decision", response_model=IncidentPublic, responses={**ERRORS, **FORBIDDEN}
)
async def decide_incident(
    incident_id: IncidentIdPath,
    body: DecisionCreate,
    service: IncidentServiceDep,
    identity: ReviewerDep,
) -> IncidentPublic:
    """Approve, reject, edit-and-approve or send back for re-analysis.

    The decision records the authenticated identity; a ``reviewer`` in the body is accepted
    and ignored, except when authentication is off (loopback only), where it names the actor.
    """
    actor = (body.reviewer or identity.name) if identity is LOCAL_IDENTITY else identity.name
    return await service.decide(incident_id, body, actor)


@router.get("/{incident_id}/audit", responses=ERRORS)
async def incident_audit(
    incident_id: IncidentIdPath, service: IncidentServiceDep
) -> dict[str, Any]:
    """The audit trail: creation, each draft, each decision."""
    events = await service.audit(incident_id)
    return {
        "events": [
            {
                "type": e.type,
                "at": e.at,
                "actor": e.actor,
                "action": e.action,
                "comment": e.comment,
                **e.data,
            }
            for e in events
        ]
    }


@router.get(
    "/{incident_id}/postmortem",
    response_model=None,
    responses={
        200: {
            "model": Postmortem,
            "description": "The postmortem: Markdown, or JSON with ``format=json``",
            "content": {"text/markdown": {"schema": {"type": "string"}}},
        },
        **{code: ERRORS[code] for code in (404, 422)},
        409: {"model": ErrorResponse, "description": "The incident is not decided yet"},
    },
)
async def incident_postmortem(
    incident_id: IncidentIdPath,
    service: IncidentServiceDep,
    format: Annotated[Literal["markdown", "json"], Query(examples=["json"])] = "markdown",
) -> PlainTextResponse | Postmortem:
    """A postmortem draft of a decided incident: summary, impact, timeline, root cause, actions."""
    postmortem = await service.postmortem(incident_id)
    if format == "json":
        return postmortem
    return PlainTextResponse(
        render_markdown(postmortem),
        media_type="text/markdown; charset=utf-8",
        headers={"Content-Disposition": f'inline; filename="postmortem-{incident_id}.md"'},
    )
