"""Annotated dependency aliases over the objects the lifespan put on ``app.state``."""

from __future__ import annotations

from typing import Annotated

from fastapi import Depends, Request

from app.core.config import Settings
from app.incidents.service import IncidentService


def get_incident_service(request: Request) -> IncidentService:
    """The incident service built in the lifespan."""
    service: IncidentService = request.app.state.incidents
    return service


def get_app_settings(request: Request) -> Settings:
    """The settings the app was created with."""
    settings: Settings = request.app.state.settings
    return settings


IncidentServiceDep = Annotated[IncidentService, Depends(get_incident_service)]
SettingsDep = Annotated[Settings, Depends(get_app_settings)]
