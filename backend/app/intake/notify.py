"""Review notifications: a Slack-compatible webhook when an RCA awaits review or is decided.

``WebhookNotifier`` is an ``IncidentObserver``. It never blocks or fails a run: each message is
sent by a background task (kept in a set so it is not garbage-collected, awaited by
``drain()``), every attempt has a timeout, retries are bounded with a short backoff, and a
receiver that stays down is logged and given up on. ``remind_overdue`` escalates reviews that
have waited too long, once per incident; ``run_reminders`` is the loop the lifespan starts.

All message text is built by ``render_message`` alone, so redaction can wrap that one function
(pass the wrapped version as ``render``).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from enum import StrEnum
from typing import Any, Protocol

import httpx

from app.intake.settings import IntakeSettings
from app.schemas import IncidentList, IncidentPublic, IncidentStatus

logger = logging.getLogger(__name__)

MAX_SUMMARY_CHARS = 500
RETRYABLE_STATUSES = frozenset({408, 425, 429})


class NotificationKind(StrEnum):
    """Why a message is sent."""

    REVIEW_READY = "review_ready"
    DECIDED = "decided"
    REMINDER = "reminder"


Renderer = Callable[[IncidentPublic, NotificationKind], dict[str, Any]]


class IncidentLister(Protocol):
    """What the reminder needs from the incident service."""

    async def page(self, status: str | None, limit: int, offset: int) -> IncidentList:
        """A page of incidents, newest first."""
        ...

    async def get(self, incident_id: str) -> IncidentPublic:
        """One incident with its analysis."""
        ...


def incident_url(ui_base_url: str, incident_id: str) -> str:
    """The UI page of an incident.

    Args:
        ui_base_url: Where the UI is served.
        incident_id: The incident.

    Returns:
        ``{ui_base_url}/#/incidents/{incident_id}``.
    """
    return f"{ui_base_url.rstrip('/')}/#/incidents/{incident_id}"


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
    confidence = rca.get("confidence") or "unknown"
    family = _top_family(incident)
    title = _title(incident)
    url = incident_url(ui_base_url, incident.id) if ui_base_url else None
    if kind is NotificationKind.REVIEW_READY:
        headline = f"RCA ready for review: {title}"
    elif kind is NotificationKind.REMINDER:
        headline = f"Reminder: RCA still awaiting review: {title}"
    else:
        decision = incident.decision or {}
        reviewer = decision.get("reviewer") or incident.status.value
        headline = f"RCA {incident.status.value} by {reviewer}: {title}"
    facts = [f"*Confidence:* {confidence}"]
    if family:
        facts.append(f"*Closest known error:* {family}")
    if incident.low_confidence:
        facts.append("*Low confidence:* no close match in the knowledge base")
    comment = (incident.decision or {}).get("comment")
    if kind is NotificationKind.DECIDED and comment:
        facts.append(f"*Comment:* {_clip(str(comment), 300)}")
    text = f"{headline}. {summary}" + (f" {url}" if url else "")
    blocks: list[dict[str, Any]] = [
        {"type": "section", "text": {"type": "mrkdwn", "text": f"*{headline}*\n{summary}"}},
        {"type": "context", "elements": [{"type": "mrkdwn", "text": " · ".join(facts)}]},
    ]
    if url:
        blocks.append(
            {
                "type": "actions",
                "elements": [
                    {
                        "type": "button",
                        "text": {"type": "plain_text", "text": "Open in RCA"},
                        "url": url,
                    }
                ],
            }
        )
    return {"text": text, "blocks": blocks}


class WebhookNotifier:
    """Posts review milestones to a Slack-compatible incoming webhook, in the background."""

    def __init__(
        self,
        url: str,
        ui_base_url: str,
        timeout: float = 5.0,
        retries: int = 2,
        reminder_after_seconds: float = 3600.0,
        *,
        backoff_seconds: float = 0.5,
        render: Renderer | None = None,
        transport: httpx.AsyncBaseTransport | None = None,
    ) -> None:
        """Configure the notifier.

        Args:
            url: The webhook URL.
            ui_base_url: Where reviewers open the UI.
            timeout: Seconds one attempt may take (connect, write, read).
            retries: Extra attempts after a failure (bounded; 0 means one attempt).
            reminder_after_seconds: Remind once when a review has waited this long.
            backoff_seconds: Wait before the first retry; doubles each time.
            render: Message builder (``render_message`` with the UI link by default); pass a
                wrapped one to redact.
            transport: httpx transport, for tests.
        """
        self.url = url
        self.ui_base_url = ui_base_url
        self.timeout = timeout
        self.retries = max(0, retries)
        self.reminder_after = timedelta(seconds=reminder_after_seconds)
        self.backoff_seconds = backoff_seconds
        self._render: Renderer = render or (
            lambda incident, kind: render_message(incident, kind, ui_base_url)
        )
        self._transport = transport
        self._tasks: set[asyncio.Task[bool]] = set()
        self._reminded: set[str] = set()

    def __repr__(self) -> str:
        return f"WebhookNotifier(timeout={self.timeout}, retries={self.retries})"

    async def review_ready(self, incident: IncidentPublic) -> None:
        """A draft awaits review: notify in the background.

        Args:
            incident: The incident.
        """
        self._schedule(incident, NotificationKind.REVIEW_READY)

    async def decided(self, incident: IncidentPublic) -> None:
        """A reviewer decided: notify in the background.

        Args:
            incident: The incident.
        """
        self._schedule(incident, NotificationKind.DECIDED)

    def _schedule(self, incident: IncidentPublic, kind: NotificationKind) -> None:
        try:
            payload = self._render(incident, kind)
        except Exception:
            logger.exception("could not render %s notification for %s", kind, incident.id)
            return
        task = asyncio.create_task(self.send(payload, f"{kind.value} {incident.id}"))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def send(self, payload: dict[str, Any], what: str = "notification") -> bool:
        """POST ``payload`` with bounded retries; never raises.

        Args:
            payload: The JSON body.
            what: A description for the log.

        Returns:
            True when the receiver accepted it (2xx).
        """
        attempts = self.retries + 1
        delay = self.backoff_seconds
        async with httpx.AsyncClient(timeout=self.timeout, transport=self._transport) as client:
            for attempt in range(1, attempts + 1):
                try:
                    response = await client.post(self.url, json=payload)
                except httpx.HTTPError as exc:
                    problem = f"{type(exc).__name__}"
                else:
                    if response.is_success:
                        return True
                    problem = f"HTTP {response.status_code}"
                    retryable = (
                        response.status_code >= 500 or response.status_code in RETRYABLE_STATUSES
                    )
                    if not retryable:
                        logger.warning("notification %s rejected: %s; not retrying", what, problem)
                        return False
                if attempt < attempts:
                    logger.info(
                        "notification %s attempt %d/%d failed (%s); retrying",
                        what,
                        attempt,
                        attempts,
                        problem,
                    )
                    await asyncio.sleep(delay)
                    delay *= 2
        logger.warning("notification %s failed after %d attempt(s): %s", what, attempts, problem)
        return False

    async def drain(self) -> None:
        """Wait for every notification in flight (tests, shutdown)."""
        while self._tasks:
            await asyncio.gather(*list(self._tasks), return_exceptions=True)

    async def remind_overdue(self, service: IncidentLister, now: datetime | None = None) -> int:
        """Send one reminder for each review that has waited longer than the threshold.

        The wait is measured from the incident's ``updated_at``, which is when it last entered
        ``awaiting_review``. Each incident is reminded once per process.

        Args:
            service: The incident service.
            now: The current time (for tests).

        Returns:
            How many reminders were scheduled.
        """
        cutoff = (now or datetime.now(UTC)) - self.reminder_after
        sent = offset = 0
        limit = 200
        while True:
            page = await service.page(IncidentStatus.AWAITING_REVIEW.value, limit, offset)
            for item in page.items:
                if item.id in self._reminded or _parse_time(item.updated_at) > cutoff:
                    continue
                try:
                    incident = await service.get(item.id)
                except Exception:
                    logger.exception("could not load incident %s for a reminder", item.id)
                    continue
                if incident.status is not IncidentStatus.AWAITING_REVIEW:
                    continue
                self._reminded.add(item.id)
                self._schedule(incident, NotificationKind.REMINDER)
                sent += 1
            offset += limit
            if offset >= page.total or not page.items:
                return sent

    async def run_reminders(self, service: IncidentLister, interval: float) -> None:
        """Check for overdue reviews every ``interval`` seconds until cancelled.

        Args:
            service: The incident service.
            interval: Seconds between checks.
        """
        while True:
            try:
                await self.remind_overdue(service)
            except Exception:
                logger.exception("reminder check failed")
            await asyncio.sleep(interval)


def build_notifier(settings: IntakeSettings) -> WebhookNotifier | None:
    """The notifier the settings ask for, or None when no webhook URL is configured.

    Args:
        settings: The intake settings.

    Returns:
        The notifier, or None.
    """
    if not settings.notify_webhook_url:
        return None
    return WebhookNotifier(
        settings.notify_webhook_url,
        settings.ui_base_url,
        timeout=settings.notify_timeout_seconds,
        retries=settings.notify_retries,
        reminder_after_seconds=settings.notify_reminder_after_minutes * 60,
    )


def _parse_time(value: str) -> datetime:
    parsed = datetime.fromisoformat(value)
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)
