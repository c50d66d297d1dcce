"""Annotated dependency aliases over the objects the lifespan put on ``app.state``."""

from __future__ import annotations

from collections.abc import Callable
from typing import Annotated, Any

from fastapi import Depends, Path, Request

from app.core.config import Settings
from app.core.errors import Forbidden, NotReady, Unauthorized
from app.core.security import LOCAL_IDENTITY, Identity, KeyRing, Role
from app.incidents.service import IncidentService
from app.incidents.workspace import Workspace
from app.intake.alertmanager import AlertIntake
from app.intake.fingerprints import FingerprintStore
from app.rag.engine import RetrievalEngine
from app.schemas import ErrorResponse


def get_incident_service(request: Request) -> IncidentService:
    """The incident service built in the lifespan."""
    service: IncidentService = request.app.state.incidents
    return service


def get_app_settings(request: Request) -> Settings:
    """The settings the app was created with."""
    settings: Settings = request.app.state.settings
    return settings


def get_retrieval_engine(request: Request) -> RetrievalEngine:
    """The retrieval engine; 503 while it is not built (startup running or failed)."""
    engine = getattr(request.app.state, "retrieval", None)
    if not isinstance(engine, RetrievalEngine):
        raise NotReady("the retrieval engine is not ready")
    return engine


def presented_key(request: Request) -> str | None:
    """The API key from ``X-API-Key`` or ``Authorization: Bearer``."""
    key = request.headers.get("x-api-key")
    if key:
        return key.strip()
    scheme, _, token = request.headers.get("authorization", "").partition(" ")
    return token.strip() if scheme.lower() == "bearer" and token.strip() else None


def get_identity(request: Request) -> Identity:
    """Who is calling; 401 without a valid key (unless auth is off, loopback only)."""
    keyring: KeyRing | None = request.app.state.keyring
    if keyring is None:
        identity = LOCAL_IDENTITY
    else:
        found = keyring.identify(presented_key(request))
        if found is None:
            raise Unauthorized("missing or invalid API key")
        identity = found
    request.state.identity = identity
    return identity


#: The response doc of every operation behind ``get_identity`` (any ``require`` included).
UNAUTHORIZED: dict[int | str, dict[str, Any]] = {
    401: {"model": ErrorResponse, "description": "Missing or invalid API key"},
}
#: The response doc of an operation requiring more than ``Role.SUBMITTER``, which every key holds.
FORBIDDEN: dict[int | str, dict[str, Any]] = {
    403: {"model": ErrorResponse, "description": "The API key lacks the role"},
}
AUTH_ERRORS = {**UNAUTHORIZED, **FORBIDDEN}


def require(role: Role) -> Callable[[Identity], Identity]:
    """A dependency admitting identities holding ``role`` (403 otherwise)."""

    def check(identity: Annotated[Identity, Depends(get_identity)]) -> Identity:
        if not identity.can(role):
            raise Forbidden(f"this API key lacks the '{role.name.lower()}' role")
        return identity

    return check


IncidentServiceDep = Annotated[IncidentService, Depends(get_incident_service)]
RetrievalEngineDep = Annotated[RetrievalEngine, Depends(get_retrieval_engine)]
SettingsDep = Annotated[Settings, Depends(get_app_settings)]
SubmitterDep = Annotated[Identity, Depends(require(Role.SUBMITTER))]
ReviewerDep = Annotated[Identity, Depends(require(Role.REVIEWER))]
AdminDep = Annotated[Identity, Depends(require(Role.ADMIN))]
IdentityDep = Annotated[Identity, Depends(get_identity)]
IncidentIdPath = Annotated[
    str, Path(description="The incident's id", examples=["3f2b8c1e-6d0a-4b7e-9c51-2a8f4e7d9b10"])
]


def get_workspace(service: IncidentServiceDep) -> Workspace:
    """The team's view of the incidents (list, claims, bulk decisions) over the service."""
    return Workspace(service)


WorkspaceDep = Annotated[Workspace, Depends(get_workspace)]


def get_fingerprint_store(request: Request) -> FingerprintStore:
    """The alert fingerprint table of the state backend the lifespan opened.

    Args:
        request: The current request.

    Returns:
        The store.
    """
    store: FingerprintStore = request.app.state.fingerprints
    return store


FingerprintStoreDep = Annotated[FingerprintStore, Depends(get_fingerprint_store)]


def get_alert_intake(
    incidents: IncidentServiceDep, fingerprints: FingerprintStoreDep
) -> AlertIntake:
    """The Alertmanager intake over the incident service and the fingerprint table.

    Args:
        incidents: The incident service.
        fingerprints: The fingerprint table.

    Returns:
        The intake.
    """
    return AlertIntake(incidents, fingerprints)


AlertIntakeDep = Annotated[AlertIntake, Depends(get_alert_intake)]
