"""Reminders for reviews still pending: one escalation per review that waited too long.

``ReviewReminders.remind_overdue`` finds the reviews past the threshold and announces each once;
``run`` is its loop. The outbox key (``message_key``) keeps it to one reminder per review across
restarts and workers; the in-memory set only spares reloading a review already reminded.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime, timedelta
from typing import Protocol

from app.intake.notify.delivery import parse_timestamp
from app.intake.notify.messages import NotificationKind, message_key
from app.schemas import IncidentList, IncidentPublic, IncidentStatus

logger = logging.getLogger(__name__)

#: Incidents read per page while looking for overdue reviews.
PAGE_SIZE = 200

#: Renders and stores one notification; True when it was new.
Announce = Callable[[IncidentPublic, NotificationKind], Awaitable[bool]]


class IncidentLister(Protocol):
    """What the reminder needs from the incident service."""

    async def page(self, status: str | None, limit: int, offset: int) -> IncidentList:
        """A page of incidents, newest first."""
        ...

    async def get(self, incident_id: str) -> IncidentPublic:
        """One incident with its analysis."""
        ...


class ReviewReminders:
    """Announces a reminder once for each review that has waited longer than ``after``."""

    def __init__(self, after_seconds: float, announce: Announce) -> None:
        """Configure the reminders.

        Args:
            after_seconds: Remind once when a review has waited this long.
            announce: Renders and stores one notification (the notifier's).
        """
        self.after = timedelta(seconds=after_seconds)
        self._announce = announce
        # Reminder keys announced by this process, so an overdue review is not reloaded and
        # rendered on every pass only for the outbox to refuse the duplicate.
        self._reminded: set[str] = set()

    async def remind_overdue(self, service: IncidentLister, now: datetime | None = None) -> int:
        """Store one reminder for each review that has waited longer than the threshold.

        The wait is measured from the incident's ``updated_at``, which is when it last entered
        ``awaiting_review``. The outbox key makes it one reminder per review, across restarts
        and workers.

        Args:
            service: The incident service.
            now: The current time (for tests).

        Returns:
            How many reminders were stored.
        """
        cutoff = (now or datetime.now(UTC)) - self.after
        sent = offset = 0
        overdue: set[str] = set()
        while True:
            page = await service.page(IncidentStatus.AWAITING_REVIEW.value, PAGE_SIZE, offset)
            for item in page.items:
                if parse_timestamp(item.updated_at) > cutoff:
                    continue
                key = message_key(NotificationKind.REMINDER, item.id, item.updated_at)
                overdue.add(key)
                if key in self._reminded:
                    continue
                try:
                    incident = await service.get(item.id)
                except Exception:
                    logger.exception("could not load incident %s for a reminder", item.id)
                    continue
                if incident.status is not IncidentStatus.AWAITING_REVIEW:
                    continue
                if await self._announce(incident, NotificationKind.REMINDER):
                    sent += 1
                    self._reminded.add(key)
            offset += PAGE_SIZE
            if offset >= page.total or not page.items:
                # Reviews decided since the last pass need no memory any more.
                self._reminded &= overdue
                return sent

    async def run(self, service: IncidentLister, interval: float) -> None:
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
