"""Intake routes: monitoring systems push alerts here. Thin: parse, call, map."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Depends

from app.api.deps import UNAUTHORIZED, AlertIntakeDep, require
from app.core.security import Role
from app.intake.alertmanager import AlertIntakePublic, AlertmanagerWebhook
from app.schemas import ErrorResponse

#: Monitoring systems submit incidents, so they need the submitter role (Alertmanager sends
#: the key with ``http_config.authorization``).
router = APIRouter(
    prefix="/api/intake",
    tags=["intake"],
    dependencies=[Depends(require(Role.SUBMITTER))],
    responses=UNAUTHORIZED,
)

ERRORS: dict[int | str, dict[str, Any]] = {
    422: {"model": ErrorResponse, "description": "Malformed notification; nothing was created"},
    503: {"model": ErrorResponse, "description": "Intake not set up"},
}


@router.post("/alertmanager", status_code=202, response_model=AlertIntakePublic, responses=ERRORS)
async def alertmanager_webhook(
    body: AlertmanagerWebhook, intake: AlertIntakeDep
) -> AlertIntakePublic:
    """Alertmanager webhook: each new firing alert becomes an incident awaiting review."""
    return await intake.receive(body)
