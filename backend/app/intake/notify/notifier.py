"""``WebhookNotifier``: the incident observer that wires rendering, delivery and reminders.

It never blocks or fails a run: each milestone is rendered (``messages``), stored and sent in
the background (``delivery``); reviews left waiting are escalated once (``reminders``).
"""

from __future__ import annotations

import logging
from datetime import datetime, timedelta

import httpx

from app.intake.notify.delivery import OutboxDelivery
from app.intake.notify.messages import NotificationKind, Renderer, message_key, render_message
from app.intake.notify.reminders import IncidentLister, ReviewReminders
from app.intake.outbox import NotificationOutbox
from app.intake.settings import IntakeSettings
from app.schemas import IncidentPublic

logger = logging.getLogger(__name__)


class WebhookNotifier:
    """Posts review milestones to a Slack-compatible incoming webhook, through the outbox."""

    def __init__(
        self,
        url: str,
        ui_base_url: str,
        outbox: NotificationOutbox,
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
            outbox: Where messages wait until delivered.
            timeout: Seconds one attempt may take (connect, write, read).
            retries: Extra attempts after a failure (bounded; 0 means one attempt).
            reminder_after_seconds: Remind once when a review has waited this long.
            backoff_seconds: Wait before the first retry; doubles each time.
            render: Message builder (``render_message`` with the UI link by default); pass a
                wrapped one to redact.
            transport: httpx transport, for tests.
        """
        self.ui_base_url = ui_base_url
        self.delivery = OutboxDelivery(
            url, outbox, timeout, retries, backoff_seconds=backoff_seconds, transport=transport
        )
        self.reminders = ReviewReminders(reminder_after_seconds, self._announce)
        self._render: Renderer = render or (
            lambda incident, kind: render_message(incident, kind, ui_base_url)
        )

    def __repr__(self) -> str:
        return f"WebhookNotifier(timeout={self.timeout}, retries={self.retries})"

    @property
    def outbox(self) -> NotificationOutbox:
        """Where messages wait until delivered."""
        return self.delivery.outbox

    @property
    def timeout(self) -> float:
        """Seconds one delivery attempt may take."""
        return self.delivery.timeout

    @property
    def retries(self) -> int:
        """Extra delivery attempts after a failure."""
        return self.delivery.retries

    @property
    def reminder_after(self) -> timedelta:
        """How long a review waits before its one reminder."""
        return self.reminders.after

    async def review_ready(self, incident: IncidentPublic) -> None:
        """A draft awaits review: store the message and deliver it in the background.

        Args:
            incident: The incident.
        """
        await self._announce(incident, NotificationKind.REVIEW_READY)

    async def decided(self, incident: IncidentPublic) -> None:
        """A reviewer decided: store the message and deliver it in the background.

        Args:
            incident: The incident.
        """
        await self._announce(incident, NotificationKind.DECIDED)

    async def _announce(self, incident: IncidentPublic, kind: NotificationKind) -> bool:
        """Render and store one message, then start delivering; never raises.

        The key names the incident's state (``updated_at``), so a recovery that replays an
        observer call stores nothing new, while a re-analysis that returns to review does.
        """
        try:
            payload = self._render(incident, kind)
        except Exception:
            logger.exception("could not render %s notification for %s", kind, incident.id)
            return False
        key = message_key(kind, incident.id, incident.updated_at)
        return await self.delivery.submit(key, incident.id, kind.value, payload)

    async def drain(self, timeout: float | None = None) -> None:
        """Deliver everything pending, or stop after ``timeout`` s (the rest stays stored).

        Args:
            timeout: A bound for shutdown; None waits until every message is sent or given up.
        """
        await self.delivery.drain(timeout)

    async def run_dispatcher(self, interval: float) -> None:
        """Every ``interval`` seconds deliver what is due, until cancelled.

        Args:
            interval: Seconds between rounds.
        """
        await self.delivery.run_dispatcher(interval)

    async def remind_overdue(self, service: IncidentLister, now: datetime | None = None) -> int:
        """Store one reminder for each review that has waited longer than the threshold.

        Args:
            service: The incident service.
            now: The current time (for tests).

        Returns:
            How many reminders were stored.
        """
        return await self.reminders.remind_overdue(service, now)

    async def run_reminders(self, service: IncidentLister, interval: float) -> None:
        """Check for overdue reviews every ``interval`` seconds until cancelled.

        Args:
            service: The incident service.
            interval: Seconds between checks.
        """
        await self.reminders.run(service, interval)


def build_notifier(settings: IntakeSettings, outbox: NotificationOutbox) -> WebhookNotifier | None:
    """The notifier the settings ask for, or None when no webhook URL is configured.

    Args:
        settings: The intake settings.
        outbox: The state backend's outbox.

    Returns:
        The notifier, or None.
    """
    if not settings.notify_webhook_url:
        return None
    return WebhookNotifier(
        settings.notify_webhook_url,
        settings.ui_base_url,
        outbox,
        timeout=settings.notify_timeout_seconds,
        retries=settings.notify_retries,
        reminder_after_seconds=settings.notify_reminder_after_minutes * 60,
    )
