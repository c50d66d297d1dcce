"""Review notifications: a Slack-compatible webhook when an RCA awaits review or is decided.

``WebhookNotifier`` is an ``IncidentObserver``. It never blocks or fails a run: each message is
stored in the durable outbox (``app.intake.outbox``) and then sent by the notifier's one
background sender task (awaited by ``drain()``); every attempt has a timeout,
retries are bounded with a doubling backoff, and a receiver that stays down is logged and given
up on. Messages left pending by a crash, a restart or a dead worker are sent by
``run_dispatcher``, the loop the lifespan starts. ``remind_overdue`` escalates reviews that have
waited too long, once per review; ``run_reminders`` is its loop.

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

from app.intake.outbox import NotificationOutbox, OutboxMessage, timestamp
from app.intake.settings import IntakeSettings
from app.schemas import IncidentList, IncidentPublic, IncidentStatus

logger = logging.getLogger(__name__)

MAX_SUMMARY_CHARS = 500
RETRYABLE_STATUSES = frozenset({408, 425, 429})
#: Messages claimed per dispatch round.
DISPATCH_BATCH = 20
#: Longest nap while waiting for a retry or another sender's claim.
FLUSH_POLL_SECONDS = 0.1
#: Sent and failed messages are kept this long for inspection, then pruned.
OUTBOX_RETENTION_DAYS = 7
#: Pruning is a bulk delete: once an hour is plenty, and not every dispatch round.
PRUNE_INTERVAL_SECONDS = 3600.0


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


class Outcome(StrEnum):
    """What one delivery attempt came to."""

    SENT = "sent"
    RETRY = "retry"
    REJECTED = "rejected"


class WebhookNotifier:
    """Posts review milestones to a Slack-compatible incoming webhook, through the outbox.

    Every message is first stored in the outbox (so a crash or restart loses nothing), then
    delivered by a background task; a dispatcher loop (``run_dispatcher``) picks up what is
    left: retries, messages of a previous process, messages whose worker died mid-send.
    """

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
        self.url = url
        self.ui_base_url = ui_base_url
        self.outbox = outbox
        self.timeout = timeout
        self.retries = max(0, retries)
        self.reminder_after = timedelta(seconds=reminder_after_seconds)
        self.backoff_seconds = backoff_seconds
        # A claim outlives any attempt, so a live sender is never overtaken by another.
        self.claim_for = timedelta(seconds=2 * timeout + 10)
        self._render: Renderer = render or (
            lambda incident, kind: render_message(incident, kind, ui_base_url)
        )
        self._transport = transport
        # One background sender per process: a burst of incidents wakes it, not a task each.
        self._sender: asyncio.Task[None] | None = None
        self._more = False
        # Reminder keys this notifier has stored, so an overdue review is not reloaded and
        # rendered on every pass only for the outbox to refuse the duplicate.
        self._reminded: set[str] = set()

    def __repr__(self) -> str:
        return f"WebhookNotifier(timeout={self.timeout}, retries={self.retries})"

    async def review_ready(self, incident: IncidentPublic) -> None:
        """A draft awaits review: store the message and deliver it in the background.

        Args:
            incident: The incident.
        """
        await self._enqueue(incident, NotificationKind.REVIEW_READY)

    async def decided(self, incident: IncidentPublic) -> None:
        """A reviewer decided: store the message and deliver it in the background.

        Args:
            incident: The incident.
        """
        await self._enqueue(incident, NotificationKind.DECIDED)

    async def _enqueue(self, incident: IncidentPublic, kind: NotificationKind) -> bool:
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
        try:
            added = await self.outbox.enqueue(key, incident.id, kind.value, payload, timestamp())
        except Exception:
            logger.exception("could not store %s notification for %s", kind, incident.id)
            return False
        if added:
            self._wake_sender()
        return added

    def _wake_sender(self) -> None:
        """Have the background sender deliver what was just stored (start it if idle)."""
        self._more = True
        if self._sender is None or self._sender.done():
            self._sender = asyncio.create_task(self._send_stored())

    async def _send_stored(self) -> None:
        """Flush until no message arrived during the last flush."""
        while self._more:
            self._more = False
            await self.flush(self._retry_horizon())

    def _retry_horizon(self) -> float:
        """Seconds one message may need from first attempt to last (attempts plus backoff)."""
        attempts = self.retries + 1
        return attempts * self.timeout + self.backoff_seconds * float(2**attempts)

    async def post(self, client: httpx.AsyncClient, payload: dict[str, Any]) -> tuple[Outcome, str]:
        """One delivery attempt.

        Args:
            client: The HTTP client.
            payload: The JSON body.

        Returns:
            The outcome and, unless sent, what went wrong.
        """
        try:
            response = await client.post(self.url, json=payload)
        except httpx.HTTPError as exc:
            return Outcome.RETRY, type(exc).__name__
        if response.is_success:
            return Outcome.SENT, ""
        problem = f"HTTP {response.status_code}"
        if response.status_code >= 500 or response.status_code in RETRYABLE_STATUSES:
            return Outcome.RETRY, problem
        return Outcome.REJECTED, problem

    async def dispatch_due(self, now: datetime | None = None) -> int:
        """Claim the messages due now and make one attempt at each.

        Args:
            now: The current time (for tests).

        Returns:
            How many messages were attempted.
        """
        moment = now or datetime.now(UTC)
        messages = await self.outbox.claim(
            timestamp(moment), timestamp(moment + self.claim_for), limit=DISPATCH_BATCH
        )
        if messages:
            async with httpx.AsyncClient(timeout=self.timeout, transport=self._transport) as client:
                await asyncio.gather(*(self._attempt(client, m) for m in messages))
        return len(messages)

    async def _attempt(self, client: httpx.AsyncClient, message: OutboxMessage) -> None:
        """Send one claimed message and record the outcome in the outbox."""
        outcome, problem = await self.post(client, message.payload)
        what = f"{message.kind} {message.incident_id}"
        attempts = self.retries + 1
        now = datetime.now(UTC)
        if outcome is Outcome.SENT:
            await self.outbox.mark_sent(message.id, timestamp(now))
        elif outcome is Outcome.REJECTED:
            logger.warning("notification %s rejected: %s; not retrying", what, problem)
            await self.outbox.give_up(message.id, timestamp(now), problem)
        elif message.attempts >= attempts:
            logger.warning(
                "notification %s failed after %d attempt(s): %s", what, message.attempts, problem
            )
            await self.outbox.give_up(message.id, timestamp(now), problem)
        else:
            logger.info(
                "notification %s attempt %d/%d failed (%s); retrying",
                what,
                message.attempts,
                attempts,
                problem,
            )
            delay = timedelta(seconds=self.backoff_seconds * 2 ** (message.attempts - 1))
            await self.outbox.retry_at(message.id, timestamp(now + delay), problem)

    async def flush(self, horizon: float) -> None:
        """Deliver what is due, then keep at it while more falls due within ``horizon`` s.

        Never raises: a database hiccup is logged, and the dispatcher loop tries again later.

        Args:
            horizon: Seconds from now worth waiting for retries (0: only what is due now).
        """
        loop = asyncio.get_running_loop()
        deadline = loop.time() + horizon
        try:
            while True:
                while await self.dispatch_due():
                    pass
                due = await self.outbox.next_due()
                if due is None:
                    return
                wait = (_parse_time(due) - datetime.now(UTC)).total_seconds()
                if loop.time() + max(wait, 0.0) > deadline:
                    return
                # Short naps: a claim held by another task may be released well before it ends.
                await asyncio.sleep(min(max(wait, 0.01), FLUSH_POLL_SECONDS))
        except Exception:
            logger.exception("notification delivery failed; the outbox keeps the messages")

    async def drain(self, timeout: float | None = None) -> None:
        """Deliver everything pending, or stop after ``timeout`` s (the rest stays stored).

        Args:
            timeout: A bound for shutdown; None waits until every message is sent or given up.
        """
        loop = asyncio.get_running_loop()
        deadline = None if timeout is None else loop.time() + timeout
        if self._sender is not None:
            left = None if deadline is None else max(deadline - loop.time(), 0.0)
            _, pending = await asyncio.wait([self._sender], timeout=left)
            if pending:
                return
        left = float("inf") if deadline is None else max(deadline - loop.time(), 0.0)
        await self.flush(left)

    async def run_dispatcher(self, interval: float) -> None:
        """Every ``interval`` seconds deliver what is due; prune old finished messages hourly.

        Args:
            interval: Seconds between rounds.
        """
        loop = asyncio.get_running_loop()
        next_prune = loop.time()
        while True:
            await self.flush(0.0)
            if loop.time() >= next_prune:
                next_prune = loop.time() + PRUNE_INTERVAL_SECONDS
                try:
                    cutoff = datetime.now(UTC) - timedelta(days=OUTBOX_RETENTION_DAYS)
                    await self.outbox.prune(timestamp(cutoff))
                except Exception:
                    logger.exception("pruning the notification outbox failed")
            await asyncio.sleep(interval)

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
        cutoff = (now or datetime.now(UTC)) - self.reminder_after
        sent = offset = 0
        limit = 200
        overdue: set[str] = set()
        while True:
            page = await service.page(IncidentStatus.AWAITING_REVIEW.value, limit, offset)
            for item in page.items:
                if _parse_time(item.updated_at) > cutoff:
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
                if await self._enqueue(incident, NotificationKind.REMINDER):
                    sent += 1
                    self._reminded.add(key)
            offset += limit
            if offset >= page.total or not page.items:
                # Reviews decided since the last pass need no memory any more.
                self._reminded &= overdue
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


def message_key(kind: NotificationKind, incident_id: str, updated_at: str) -> str:
    """The outbox key of one notification: one per kind and state of an incident."""
    return f"{kind.value}:{incident_id}:{updated_at}"


def _parse_time(value: str) -> datetime:
    parsed = datetime.fromisoformat(value)
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)
