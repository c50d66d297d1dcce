"""Annotated dependency aliases for the intake routes, over objects the lifespan put on state."""

from __future__ import annotations

from typing import Annotated

from fastapi import Depends, Request

from app.api.deps import IncidentServiceDep
from app.intake.alertmanager import AlertIntake
from app.intake.fingerprints import FingerprintStore


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
