"""The Slack-compatible message of each review notification, and its outbox key.

All message text is built by ``render_message`` alone, so redaction can wrap that one function
(the notifier takes the wrapped version as ``render``).
"""

from __future__ import annotations

from collections.abc import Callable
from enum import StrEnum
from typing import Any

from app.schemas import IncidentPublic

MAX_SUMMARY_CHARS = 500


class NotificationKind(StrEnum):
    """Why a message is sent."""

    REVIEW_READY = "review_ready"
    DECIDED = "decided"
    REMINDER = "reminder"


Renderer = Callable[[IncidentPublic, NotificationKind], dict[str, Any]]


def incident_url(ui_base_url: str, incident_id: str) -> str:
    """The UI page of an incident.

    Args:
        ui_base_url: Where the UI is served.
        incident_id: The incident.

    Returns:
        ``{ui_base_url}/#/incidents/{incident_id}``.
    """
    return f"{ui_base_url.rstrip('/')}/#/incidents/{incident_id}"


def postmortem_url(ui_base_url: str, incident_id: str) -> str:
    """The UI page of an incident's postmortem (copy or download it there).

    Args:
        ui_base_url: Where the UI is served.
        incident_id: The incident.

    Returns:
        ``{ui_base_url}/#/incidents/{incident_id}/postmortem``.
    """
    return f"{incident_url(ui_base_url, incident_id)}/postmortem"


def message_key(kind: NotificationKind, incident_id: str, updated_at: str) -> str:
    """The outbox key of one notification: one per kind and state of an incident."""
    return f"{kind.value}:{incident_id}:{updated_at}"


def _title(incident: IncidentPublic) -> str:
    data = incident.incident
    what = data.get("error_code") or data.get("event") or "incident"
    service = f" on {data['service']}" if data.get("service") else ""
    return f"{what}{service}"


def _top_family(incident: IncidentPublic) -> str | None:
    if not incident.similar_error_docs:
        return None
    code = incident.similar_error_docs[0].metadata.get("error_code")
    return str(code) if code else None


def _clip(text: str, limit: int = MAX_SUMMARY_CHARS) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _headline(incident: IncidentPublic, kind: NotificationKind) -> str:
    title = _title(incident)
    if kind is NotificationKind.REVIEW_READY:
        return f"RCA ready for review: {title}"
    if kind is NotificationKind.REMINDER:
        return f"Reminder: RCA still awaiting review: {title}"
    decision = incident.decision or {}
    reviewer = decision.get("reviewer") or incident.status.value
    return f"RCA {incident.status.value} by {reviewer}: {title}"


def _facts(incident: IncidentPublic, kind: NotificationKind, confidence: str) -> list[str]:
    facts = [f"*Confidence:* {confidence}"]
    family = _top_family(incident)
    if family:
        facts.append(f"*Closest known error:* {family}")
    if incident.low_confidence:
        facts.append("*Low confidence:* no close match in the knowledge base")
    comment = (incident.decision or {}).get("comment")
    if kind is NotificationKind.DECIDED and comment:
        facts.append(f"*Comment:* {_clip(str(comment), 300)}")
    return facts


def render_message(
    incident: IncidentPublic, kind: NotificationKind, ui_base_url: str = ""
) -> dict[str, Any]:
    """The Slack-compatible message for one notification: ``{"text", "blocks"}``.

    Args:
        incident: The incident as the API returns it.
        kind: Why the message is sent.
        ui_base_url: Where the UI is served (the link is omitted when empty).

    Returns:
        The JSON body to POST.
    """
    rca = incident.final_rca or incident.rca or {}
    summary = _clip(str(rca.get("summary") or incident.incident.get("message") or ""))
    confidence = str(rca.get("confidence") or "unknown")
    headline = _headline(incident, kind)
    url = incident_url(ui_base_url, incident.id) if ui_base_url else None
    # A decided incident has a postmortem; the message links it beside the incident.
    decided = kind is NotificationKind.DECIDED and url is not None
    postmortem = postmortem_url(ui_base_url, incident.id) if decided else None
    text = (
        f"{headline}. {summary}"
        + (f" {url}" if url else "")
        + (f" Postmortem: {postmortem}" if postmortem else "")
    )
    blocks: list[dict[str, Any]] = [
        {"type": "section", "text": {"type": "mrkdwn", "text": f"*{headline}*\n{summary}"}},
        {
            "type": "context",
            "elements": [
                {"type": "mrkdwn", "text": " · ".join(_facts(incident, kind, confidence))}
            ],
        },
    ]
    if url:
        button = {
            "type": "button",
            "text": {"type": "plain_text", "text": "Open in RCA"},
            "url": url,
        }
        elements = [button]
        if postmortem:
            elements.append(
                {
                    "type": "button",
                    "text": {"type": "plain_text", "text": "Postmortem"},
                    "url": postmortem,
                }
            )
        blocks.append({"type": "actions", "elements": elements})
    return {"text": text, "blocks": blocks}
