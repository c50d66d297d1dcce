"""Durable delivery of notification messages to one webhook, through the outbox.

Every message is first stored in the outbox (``app.intake.outbox``), so a crash or restart
loses nothing, then sent by one background sender task per process (awaited by ``drain()``).
Every attempt has a timeout, retries are bounded with a doubling backoff, and a receiver that
stays down is logged and given up on. ``run_dispatcher`` is the loop the lifespan starts: it
sends what is left (retries, messages of a previous process, messages whose worker died
mid-send) and prunes old finished messages.
"""

from __future__ import annotations

import asyncio
import logging
from datetime import UTC, datetime, timedelta
from enum import StrEnum
from typing import Any

import httpx

from app.intake.outbox import NotificationOutbox, OutboxMessage, timestamp

logger = logging.getLogger(__name__)

RETRYABLE_STATUSES = frozenset({408, 425, 429})
#: Messages claimed per dispatch round.
DISPATCH_BATCH = 20
#: Longest nap while waiting for a retry or another sender's claim.
FLUSH_POLL_SECONDS = 0.1
#: Sent and failed messages are kept this long for inspection, then pruned.
OUTBOX_RETENTION_DAYS = 7
#: Pruning is a bulk delete: once an hour is plenty, and not every dispatch round.
PRUNE_INTERVAL_SECONDS = 3600.0


class Outcome(StrEnum):
    """What one delivery attempt came to."""

    SENT = "sent"
    RETRY = "retry"
    REJECTED = "rejected"


def parse_timestamp(value: str) -> datetime:
    """An ISO 8601 time (an outbox or incident timestamp) as an aware datetime.

    Args:
        value: The text; a time without an offset is taken as UTC.

    Returns:
        The time.
    """
    parsed = datetime.fromisoformat(value)
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)


class OutboxDelivery:
    """Stores messages in the outbox and posts them to a webhook in the background."""

    def __init__(
        self,
        url: str,
        outbox: NotificationOutbox,
        timeout: float = 5.0,
        retries: int = 2,
        *,
        backoff_seconds: float = 0.5,
        transport: httpx.AsyncBaseTransport | None = None,
    ) -> None:
        """Configure delivery.

        Args:
            url: The webhook URL.
            outbox: Where messages wait until delivered.
            timeout: Seconds one attempt may take (connect, write, read).
            retries: Extra attempts after a failure (bounded; 0 means one attempt).
            backoff_seconds: Wait before the first retry; doubles each time.
            transport: httpx transport, for tests.
        """
        self.url = url
        self.outbox = outbox
        self.timeout = timeout
        self.retries = max(0, retries)
        self.backoff_seconds = backoff_seconds
        # A claim outlives any attempt, so a live sender is never overtaken by another.
        self.claim_for = timedelta(seconds=2 * timeout + 10)
        self._transport = transport
        # One background sender per process: a burst of incidents wakes it, not a task each.
        self._sender: asyncio.Task[None] | None = None
        self._more = False

    def __repr__(self) -> str:
        return f"OutboxDelivery(timeout={self.timeout}, retries={self.retries})"

    async def submit(self, key: str, incident_id: str, kind: str, payload: dict[str, Any]) -> bool:
        """Store one message, then start delivering it; never raises.

        Args:
            key: The message's outbox key; a key already stored is not stored again.
            incident_id: The incident the message is about.
            kind: Why the message is sent.
            payload: The JSON body to POST.

        Returns:
            Whether the message was new and is now stored.
        """
        try:
            added = await self.outbox.enqueue(key, incident_id, kind, payload, timestamp())
        except Exception:
            logger.exception("could not store %s notification for %s", kind, incident_id)
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
                wait = (parse_timestamp(due) - datetime.now(UTC)).total_seconds()
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
