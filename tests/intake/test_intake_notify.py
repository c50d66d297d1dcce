"""Webhook notifications through a real SQLite outbox to a real HTTP receiver on 127.0.0.1."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import aiosqlite
import pytest
from tests.intake.helpers import Receiver

from app.intake.notify import (
    NotificationKind,
    WebhookNotifier,
    build_notifier,
    incident_url,
    render_message,
)
from app.intake.outbox import timestamp
from app.intake.settings import IntakeSettings
from app.schemas import IncidentList, IncidentPublic, IncidentStatus, IncidentSummary
from app.storage.sqlite.outbox import SqliteOutbox

UI = "http://rca.example:8000"


def incident(
    incident_id: str = "inc-1",
    status: IncidentStatus = IncidentStatus.AWAITING_REVIEW,
    updated_at: str = "2026-11-29T10:00:00+00:00",
    **extra: Any,
) -> IncidentPublic:
    return IncidentPublic(
        id=incident_id,
        status=status,
        incident={"event": "PaymentProviderSlow", "service": "checkout", "message": "slow"},
        rca={"summary": "The payment provider answers too slowly.", "confidence": "medium"},
        similar_error_docs=[
            {
                "id": "error-doc-1",
                "content": "PAY-408",
                "similarity": 0.7,
                "metadata": {"error_code": "PAY-408"},
            }
        ],
        created_at="2026-11-29T10:00:00+00:00",
        updated_at=updated_at,
        **extra,
    )


class FakeIncidents:
    """The two service calls the reminder uses, over a list of incidents."""

    def __init__(self, incidents: list[IncidentPublic]) -> None:
        self.incidents = {i.id: i for i in incidents}

    async def page(self, status: str | None, limit: int, offset: int) -> IncidentList:
        rows = [i for i in self.incidents.values() if status is None or i.status.value == status]
        items = [
            IncidentSummary(
                id=i.id, status=i.status, created_at=i.created_at, updated_at=i.updated_at
            )
            for i in rows[offset : offset + limit]
        ]
        return IncidentList(items=items, total=len(rows), limit=limit, offset=offset)

    async def get(self, incident_id: str) -> IncidentPublic:
        return self.incidents[incident_id]


@pytest.fixture
async def outbox(tmp_path: Path) -> AsyncIterator[SqliteOutbox]:
    async with aiosqlite.connect(tmp_path / "rca.sqlite") as db:
        store = SqliteOutbox(db)
        await store.setup()
        yield store


@pytest.fixture
def make_notifier(outbox: SqliteOutbox) -> Any:
    def build(url: str, **overrides: Any) -> WebhookNotifier:
        options: dict[str, Any] = {
            "timeout": 5.0,
            "retries": 2,
            "reminder_after_seconds": 3600,
            "backoff_seconds": 0.01,
        }
        options.update(overrides)
        return WebhookNotifier(url, UI, outbox, **options)

    return build


def test_render_message_is_slack_compatible_with_a_link() -> None:
    body = render_message(incident(), NotificationKind.REVIEW_READY, UI)
    assert set(body) == {"text", "blocks"}
    assert body["text"].startswith("RCA ready for review: PaymentProviderSlow on checkout")
    assert f"{UI}/#/incidents/inc-1" in body["text"]
    assert [b["type"] for b in body["blocks"]] == ["section", "context", "actions"]
    assert body["blocks"][2]["elements"][0]["url"] == incident_url(UI, "inc-1")
    assert "PAY-408" in body["blocks"][1]["elements"][0]["text"]
    decided = render_message(
        incident(
            status=IncidentStatus.REJECTED,
            decision={"reviewer": "ana", "comment": "wrong family"},
        ),
        NotificationKind.DECIDED,
        UI,
    )
    assert decided["text"].startswith("RCA rejected by ana")
    assert "wrong family" in decided["blocks"][1]["elements"][0]["text"]
    assert "actions" not in [
        b["type"] for b in render_message(incident(), NotificationKind.REMINDER)["blocks"]
    ]


async def test_success_is_sent_in_the_background(
    receiver: Receiver, make_notifier: Any, outbox: SqliteOutbox
) -> None:
    receiver.hold = True
    sender = make_notifier(receiver.url)
    # Returns while the receiver is still holding the request: the run is not blocked.
    await sender.review_ready(incident())
    [body] = await asyncio.to_thread(receiver.wait_for, 1)
    assert body["text"].startswith("RCA ready for review")
    receiver.release()
    await sender.drain()
    assert len(receiver.bodies()) == 1
    assert await outbox.counts() == {"sent": 1}


async def test_timeout_is_retried_a_bounded_number_of_times_then_logged(
    receiver: Receiver, make_notifier: Any, outbox: SqliteOutbox, caplog: pytest.LogCaptureFixture
) -> None:
    receiver.delay = 5.0
    sender = make_notifier(receiver.url, timeout=0.2, retries=2)
    with caplog.at_level(logging.WARNING, logger="app.intake.notify"):
        await sender.review_ready(incident())
        await sender.drain()
    # The client gives up after 0.2 s; on a busy machine the server thread may read the last
    # attempt's request a little later, so wait for it rather than count at once.
    assert len(await asyncio.to_thread(receiver.wait_for, 3, 10.0)) == 3
    assert "failed after 3 attempt(s): ReadTimeout" in caplog.text
    assert await outbox.counts() == {"failed": 1}


async def test_server_error_is_retried_then_given_up(
    receiver: Receiver, make_notifier: Any, caplog: pytest.LogCaptureFixture
) -> None:
    receiver.status = 500
    sender = make_notifier(receiver.url, retries=2)
    with caplog.at_level(logging.WARNING, logger="app.intake.notify"):
        await sender.decided(incident(status=IncidentStatus.APPROVED))
        await sender.drain()
    assert len(receiver.bodies()) == 3
    assert "HTTP 500" in caplog.text


async def test_a_receiver_that_recovers_gets_the_message_on_a_retry(
    receiver: Receiver, make_notifier: Any, outbox: SqliteOutbox
) -> None:
    receiver.status = 503
    sender = make_notifier(receiver.url, retries=3, backoff_seconds=0.3)
    await sender.review_ready(incident())
    await asyncio.to_thread(receiver.wait_for, 1)
    receiver.status = 200
    await sender.drain()
    assert len(receiver.bodies()) == 2
    assert await outbox.counts() == {"sent": 1}


async def test_client_error_is_not_retried(
    receiver: Receiver, make_notifier: Any, outbox: SqliteOutbox
) -> None:
    receiver.status = 404
    sender = make_notifier(receiver.url)
    await sender.review_ready(incident())
    await sender.drain()
    assert len(receiver.bodies()) == 1
    assert await outbox.counts() == {"failed": 1}


async def test_unreachable_receiver_is_logged_not_raised(
    make_notifier: Any, caplog: pytest.LogCaptureFixture
) -> None:
    closed = Receiver()
    url = closed.url
    closed.close()
    sender = make_notifier(url, timeout=1.0, retries=1)
    with caplog.at_level(logging.WARNING, logger="app.intake.notify"):
        await sender.review_ready(incident())
        await sender.drain()
    assert "failed after 2 attempt(s)" in caplog.text


async def test_the_same_milestone_is_stored_and_sent_once(
    receiver: Receiver, make_notifier: Any
) -> None:
    sender = make_notifier(receiver.url)
    # A recovery may replay an observer call for a state already announced.
    await sender.review_ready(incident())
    await sender.review_ready(incident())
    await sender.drain()
    assert len(receiver.bodies()) == 1
    # Back in review after a re-analysis is a new milestone.
    await sender.review_ready(incident(updated_at="2026-11-29T11:00:00+00:00"))
    await sender.drain()
    assert len(receiver.bodies()) == 2


async def test_a_message_stored_before_a_crash_is_sent_after_the_restart(
    tmp_path: Path, receiver: Receiver
) -> None:
    path = tmp_path / "crash.sqlite"
    async with aiosqlite.connect(path) as db:
        before = SqliteOutbox(db)
        await before.setup()
        # Stored, then the process "dies" before any delivery task ran.
        await before.enqueue("ready:inc-9", "inc-9", "review_ready", {"text": "hi"}, timestamp())
    assert receiver.bodies() == []
    async with aiosqlite.connect(path) as db:
        after = SqliteOutbox(db)
        await after.setup()
        sender = WebhookNotifier(receiver.url, UI, after, backoff_seconds=0.01)
        loop = asyncio.create_task(sender.run_dispatcher(0.05))
        await asyncio.to_thread(receiver.wait_for, 1)
        await sender.drain()  # waits while the dispatcher's claim is open
        loop.cancel()
        with pytest.raises(asyncio.CancelledError):
            await loop
        assert receiver.bodies() == [{"text": "hi"}]
        assert await after.counts() == {"sent": 1}


async def test_a_failing_renderer_never_reaches_the_run(
    receiver: Receiver, make_notifier: Any
) -> None:
    def broken(incident: IncidentPublic, kind: NotificationKind) -> dict[str, Any]:
        raise RuntimeError("redaction bug")

    sender = make_notifier(receiver.url, render=broken)
    await sender.review_ready(incident())
    await sender.drain()
    assert receiver.bodies() == []


async def test_a_wrapped_renderer_is_used(receiver: Receiver, make_notifier: Any) -> None:
    def redacted(incident: IncidentPublic, kind: NotificationKind) -> dict[str, Any]:
        body = render_message(incident, kind, UI)
        return {**body, "text": body["text"].replace("checkout", "[service]")}

    sender = make_notifier(receiver.url, render=redacted)
    await sender.review_ready(incident())
    await sender.drain()
    assert "[service]" in receiver.bodies()[0]["text"]


async def test_reminder_is_sent_once_for_an_overdue_review(
    receiver: Receiver, make_notifier: Any
) -> None:
    now = datetime(2026, 11, 29, 12, 0, tzinfo=UTC)
    old = (now - timedelta(hours=2)).isoformat()
    fresh = (now - timedelta(minutes=5)).isoformat()
    service = FakeIncidents(
        [
            incident("overdue", updated_at=old),
            incident("fresh", updated_at=fresh),
            incident("done", status=IncidentStatus.APPROVED, updated_at=old),
        ]
    )
    sender = make_notifier(receiver.url, reminder_after_seconds=3600)
    assert await sender.remind_overdue(service, now=now) == 1
    assert await sender.remind_overdue(service, now=now + timedelta(minutes=1)) == 0
    await sender.drain()
    [body] = receiver.bodies()
    assert body["text"].startswith("Reminder: RCA still awaiting review")
    assert "/#/incidents/overdue" in body["text"]
    # Later the fresh one becomes overdue too: one reminder for it, none again for the first.
    assert await sender.remind_overdue(service, now=now + timedelta(hours=2)) == 1
    await sender.drain()
    assert len(receiver.bodies()) == 2
    # A second worker (or this one after a restart) sharing the outbox sends none again.
    other = make_notifier(receiver.url, reminder_after_seconds=3600)
    assert await other.remind_overdue(service, now=now + timedelta(hours=3)) == 0


async def test_run_reminders_loops_until_cancelled(receiver: Receiver, make_notifier: Any) -> None:
    old = (datetime.now(UTC) - timedelta(hours=3)).isoformat()
    sender = make_notifier(receiver.url, reminder_after_seconds=60)
    loop = asyncio.create_task(
        sender.run_reminders(FakeIncidents([incident(updated_at=old)]), 0.01)
    )
    await asyncio.to_thread(receiver.wait_for, 1)
    loop.cancel()
    with pytest.raises(asyncio.CancelledError):
        await loop
    await sender.drain()
    assert len(receiver.bodies()) == 1


def test_build_notifier_from_settings(outbox: SqliteOutbox) -> None:
    assert build_notifier(IntakeSettings(), outbox) is None
    built = build_notifier(
        IntakeSettings(
            notify_webhook_url="http://127.0.0.1:9/hook",
            notify_timeout_seconds=2.0,
            notify_retries=1,
            notify_reminder_after_minutes=30,
        ),
        outbox,
    )
    assert built is not None and built.outbox is outbox
    assert built.timeout == 2.0 and built.retries == 1
    assert built.reminder_after == timedelta(minutes=30)
