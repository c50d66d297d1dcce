"""Groups of similar incidents, so a reviewer can decide a burst of identical alerts at once.

Two incidents share a group when they come from the same alert (the fingerprint the
Alertmanager intake writes into the incident's first log line), or when their analysed family
(the leading hypothesis' error code, else the incident's own code or event) and their service
are the same and the newer one arrived within ``GROUP_WINDOW`` of the group's newest member.
The key is stored on the index row once the first draft is written; the list can then show one
row per group (``grouped=true``) and every member (``group=<key>``).
"""

from __future__ import annotations

import logging
import re
from collections.abc import Mapping
from datetime import datetime, timedelta
from typing import Any

from app.incidents.repository import IncidentRepository

logger = logging.getLogger(__name__)

#: How close to the group's newest member an incident of the same family and service must be.
GROUP_WINDOW = timedelta(hours=1)

_FINGERPRINT_RE = re.compile(r"^alertmanager\b.*\bfingerprint=(\S+)")


def alert_fingerprint(incident: Mapping[str, Any]) -> str | None:
    """The alert fingerprint of an incident the Alertmanager intake opened, or None."""
    for line in (incident.get("logs") or [])[:3]:
        match = _FINGERPRINT_RE.match(str(line))
        if match:
            return match.group(1)
    return None


def family_of(incident: Mapping[str, Any], rca: Mapping[str, Any] | None) -> str | None:
    """The family an incident belongs to: the leading hypothesis' code, else its own."""
    if rca and rca.get("outcome") != "insufficient_evidence":
        hypotheses = rca.get("hypotheses") or []
        if hypotheses and hypotheses[0].get("error_code"):
            return str(hypotheses[0]["error_code"])
    for field in ("error_code", "event"):
        if incident.get(field):
            return str(incident[field])
    return None


async def assign_group(
    repository: IncidentRepository, incident_id: str, values: Mapping[str, Any], created_at: str
) -> None:
    """Store the family and group key of a freshly analysed incident (failures are logged)."""
    incident = values.get("incident") or {}
    family = family_of(incident, values.get("rca"))
    fingerprint = alert_fingerprint(incident)
    service = incident.get("service")
    try:
        if fingerprint:
            key = f"alert:{fingerprint}"
        elif family:
            since = (datetime.fromisoformat(created_at) - GROUP_WINDOW).isoformat()
            joined = await repository.latest_group(family, service, since)
            key = joined or f"family:{family}:{service or ''}:{incident_id}"
        else:
            return
        await repository.update(incident_id, family=family, group_key=key)
    except Exception:
        # The incident stands on its own; grouping is a convenience for the reviewer.
        logger.exception("could not group incident %s", incident_id)
