"""Incident routes: create, list, read, decide, audit. Thin: parse, call, map."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Depends, Query

from app.api.deps import IncidentServiceDep, ReviewerDep, require
from app.core.security import LOCAL_IDENTITY, Role
from app.schemas import (
    DecisionCreate,
    ErrorResponse,
    IncidentCreate,
    IncidentList,
    IncidentPublic,
    StatusFilter,
)

router = APIRouter(
    prefix="/api/incidents", tags=["incidents"], dependencies=[Depends(require(Role.SUBMITTER))]
)

ERRORS: dict[int | str, dict[str, Any]] = {
    401: {"model": ErrorResponse, "description": "Missing or invalid API key"},
    403: {"model": ErrorResponse, "description": "The API key lacks the role"},
    404: {"model": ErrorResponse, "description": "No such incident"},
    409: {"model": ErrorResponse, "description": "The incident is not awaiting review"},
    422: {"model": ErrorResponse, "description": "Invalid input"},
}


@router.post("", status_code=201, response_model=IncidentPublic, responses=ERRORS)
async def create_incident(body: IncidentCreate, service: IncidentServiceDep) -> IncidentPublic:
    """Analyse an incident; it comes back awaiting a reviewer's decision."""
    return await service.create(body)


@router.get("", response_model=IncidentList)
async def list_incidents(
    service: IncidentServiceDep,
    status: StatusFilter | None = None,
    limit: Annotated[int, Query(ge=1, le=200)] = 50,
    offset: Annotated[int, Query(ge=0, le=1_000_000)] = 0,
) -> IncidentList:
    """Incidents newest first, optionally by status."""
    return await service.page(status, limit, offset)


@router.get("/{incident_id}", response_model=IncidentPublic, responses=ERRORS)
async def get_incident(incident_id: str, service: IncidentServiceDep) -> IncidentPublic:
    """One incident with its analysis."""
    return await service.get(incident_id)


@router.post("/{incident_id}/decision", response_model=IncidentPublic, responses=ERRORS)
async def decide_incident(
    incident_id: str, body: DecisionCreate, service: IncidentServiceDep, identity: ReviewerDep
) -> IncidentPublic:
    """Approve, reject, edit-and-approve or send back for re-analysis.

    The decision records the authenticated identity; a ``reviewer`` in the body is accepted
    and ignored, except when authentication is off (loopback only), where it names the actor.
    """
    actor = (body.reviewer or identity.name) if identity is LOCAL_IDENTITY else identity.name
    return await service.decide(incident_id, body, actor)


@router.get("/{incident_id}/audit", responses=ERRORS)
async def incident_audit(incident_id: str, service: IncidentServiceDep) -> dict[str, Any]:
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
