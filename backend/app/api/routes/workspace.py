"""Team routes: the searchable incident list, claims, bulk decisions, who am I. Thin."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from fastapi import APIRouter, Depends, Query

from app.api.deps import (
    AUTH_ERRORS,
    UNAUTHORIZED,
    IdentityDep,
    IncidentIdPath,
    ReviewerDep,
    WorkspaceDep,
    require,
)
from app.core.security import LOCAL_IDENTITY, Role
from app.incidents.listing import ListSort, make_query
from app.schemas import (
    AssignmentCreate,
    BulkDecisionCreate,
    BulkDecisionPublic,
    ErrorResponse,
    IncidentList,
    IncidentPublic,
    RfcTime,
    StatusFilter,
)

router = APIRouter(tags=["incidents"])

ERRORS: dict[int | str, dict[str, Any]] = {
    422: {"model": ErrorResponse, "description": "Invalid input (or a stale cursor)"},
}

#: A cursor as ``next_cursor`` hands them out (for the ``sort`` example, ``oldest``).
CURSOR_EXAMPLE = (
    "WyJvbGRlc3QiLCIyMDI0LTA1LTAxVDEwOjAwOjAwKzAwOjAwIiwi"
    "M2YyYjhjMWUtNmQwYS00YjdlLTljNTEtMmE4ZjRlN2Q5YjEwIl0"
)

Band = Literal["high", "medium", "low", "insufficient"]


@router.get(
    "/api/incidents",
    response_model=IncidentList,
    responses={**UNAUTHORIZED, **ERRORS},
    dependencies=[Depends(require(Role.SUBMITTER))],
)
async def list_incidents(
    workspace: WorkspaceDep,
    q: Annotated[
        str | None, Query(max_length=200, description="Full-text search", examples=["checkout"])
    ] = None,
    status: Annotated[StatusFilter | None, Query(examples=["awaiting_review"])] = None,
    service: Annotated[str | None, Query(max_length=128, examples=["checkout"])] = None,
    error_code: Annotated[str | None, Query(max_length=64, examples=["PAY-408"])] = None,
    band: Annotated[Band | None, Query(examples=["high"])] = None,
    since: Annotated[
        RfcTime | None,
        Query(description="Created at or after (RFC 3339)", examples=["2024-05-01T00:00:00Z"]),
    ] = None,
    until: Annotated[
        RfcTime | None,
        Query(
            description="Created before (RFC 3339); must be later than since",
            examples=["2024-06-01T00:00:00Z"],
        ),
    ] = None,
    group: Annotated[
        str | None,
        Query(
            max_length=300,
            description="One group's members",
            examples=["family:PAY-408:checkout:3f2b8c1e-6d0a-4b7e-9c51-2a8f4e7d9b10"],
        ),
    ] = None,
    grouped: Annotated[
        bool, Query(description="One row per group of similar incidents", examples=[True])
    ] = False,
    sort: Annotated[ListSort, Query(examples=[ListSort.OLDEST])] = ListSort.NEWEST,
    limit: Annotated[int, Query(ge=1, le=200, examples=[20])] = 50,
    cursor: Annotated[
        str | None,
        Query(max_length=1000, description="A `next_cursor`", examples=[CURSOR_EXAMPLE]),
    ] = None,
) -> IncidentList:
    """Every incident, filtered, sorted and paged; with the counts per status.

    ``q`` matches message, event, service, error code and summary (every word, as a prefix).
    Pass the response's ``next_cursor`` as ``cursor`` for the next page; it is null on the last.
    """
    query = make_query(
        q=q,
        status=status,
        service=service,
        error_code=error_code,
        band=band,
        since=since,
        until=until,
        group=group,
        grouped=grouped,
        sort=sort,
        limit=limit,
        cursor=cursor,
    )
    return await workspace.list(query)


def _actor(identity: Any, named: str | None) -> str:
    """The recorded actor: the key's name, or the typed name when authentication is off."""
    return (named or identity.name) if identity is LOCAL_IDENTITY else identity.name


@router.post(
    "/api/incidents/decisions",
    response_model=BulkDecisionPublic,
    responses={**AUTH_ERRORS, **ERRORS},
)
async def decide_incidents(
    body: BulkDecisionCreate, workspace: WorkspaceDep, identity: ReviewerDep
) -> BulkDecisionPublic:
    """Approve or reject several incidents: each gets its own decision and audit event.

    Answers 200 with one result per id; an incident that was not awaiting review (or is
    unknown) gets ``ok: false`` with the error a single decision would have had.
    """
    return await workspace.decide_many(body, _actor(identity, body.reviewer))


@router.post(
    "/api/incidents/{incident_id}/assign",
    response_model=IncidentPublic,
    responses={
        **AUTH_ERRORS,
        **ERRORS,
        404: {"model": ErrorResponse, "description": "No such incident"},
        409: {"model": ErrorResponse, "description": "The incident is already decided"},
    },
)
async def assign_incident(
    incident_id: IncidentIdPath,
    body: AssignmentCreate,
    workspace: WorkspaceDep,
    identity: ReviewerDep,
) -> IncidentPublic:
    """Claim the incident for ``assignee`` (``null`` releases it); audit event ``assigned``."""
    return await workspace.assign(incident_id, body.assignee, _actor(identity, None))


@router.get("/api/me", responses=UNAUTHORIZED)
async def who_am_i(identity: IdentityDep) -> dict[str, Any]:
    """Who the API takes the caller for: the key's name and role (``auth: false`` when off)."""
    return {
        "name": identity.name,
        "role": identity.role.name.lower(),
        "auth": identity is not LOCAL_IDENTITY,
    }
