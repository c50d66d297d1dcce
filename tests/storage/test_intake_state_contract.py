"""Alert fingerprints and the notification outbox: one contract for SQLite and PostgreSQL.

Plus what only the shared backend promises: a fingerprint held by one worker blocks the other,
and two workers claiming at once never take the same message.
"""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime, timedelta

from app.intake.fingerprints import FingerprintStore
from app.intake.outbox import timestamp
from app.storage.base import StateBackend

T0 = datetime(2026, 11, 30, 10, 0, tzinfo=UTC)


def at(seconds: float) -> str:
    return timestamp(T0 + timedelta(seconds=seconds))


async def test_fingerprint_mapping_counts_resolves_and_resets(state: StateBackend) -> None:
    store = state.fingerprints
    assert await store.get("fp-1") is None
    await store.assign("fp-1", "inc-1", at(0))
    await store.seen_again("fp-1", at(300))
    await store.mark_resolved("fp-1", at(1800))
    record = await store.get("fp-1")
    assert record is not None
    assert (record.incident_id, record.count) == ("inc-1", 2)
    assert (record.first_seen, record.last_seen, record.resolved_at) == (at(0), at(300), at(1800))
    # Firing again clears the resolution; a new incident resets the row.
    await store.seen_again("fp-1", at(3600))
    again = await store.get("fp-1")
    assert again is not None and again.resolved_at is None and again.count == 3
    await store.assign("fp-1", "inc-2", at(7200))
    reset = await store.get("fp-1")
    assert reset is not None and (reset.incident_id, reset.count) == ("inc-2", 1)
    assert reset.first_seen == at(7200)
    assert await store.get("fp-2") is None


async def test_hold_serialises_one_fingerprint_only(state: StateBackend) -> None:
    store = state.fingerprints
    order: list[str] = []
    release = asyncio.Event()
    inside = asyncio.Event()

    async def first() -> None:
        async with store.hold("fp"):
            order.append("first in")
            inside.set()
            await release.wait()
            order.append("first out")

    async def second() -> None:
        async with store.hold("fp"):
            order.append("second in")

    async def other() -> None:
        async with store.hold("other"):
            order.append("other in")

    one = asyncio.create_task(first())
    await inside.wait()
    two = asyncio.create_task(second())
    await other()  # a different fingerprint is not blocked
    await asyncio.sleep(0.2)  # room for the second to get in, were the lock broken
    assert order == ["first in", "other in"]
    release.set()
    await asyncio.gather(one, two)
    assert order == ["first in", "other in", "first out", "second in"]


async def test_outbox_enqueue_is_idempotent_per_key(state: StateBackend) -> None:
    outbox = state.outbox
    assert await outbox.enqueue("ready:inc-1:t", "inc-1", "review_ready", {"text": "a"}, at(0))
    assert not await outbox.enqueue("ready:inc-1:t", "inc-1", "review_ready", {"text": "b"}, at(1))
    [message] = await outbox.claim(at(2), at(60), limit=10)
    assert (message.key, message.incident_id) == ("ready:inc-1:t", "inc-1")
    assert message.kind == "review_ready"
    assert message.payload == {"text": "a"} and message.attempts == 1
    assert await outbox.counts() == {"pending": 1}


async def test_outbox_claims_due_messages_once_until_the_claim_runs_out(
    state: StateBackend,
) -> None:
    outbox = state.outbox
    for n in range(3):
        await outbox.enqueue(f"k{n}", f"inc-{n}", "review_ready", {"n": n}, at(0))
    assert await outbox.claim(at(-1), at(30), limit=10) == []  # not due yet
    first = await outbox.claim(at(1), at(30), limit=2)
    assert [m.payload["n"] for m in first] == [0, 1]
    rest = await outbox.claim(at(2), at(30), limit=10)
    assert [m.payload["n"] for m in rest] == [2]
    assert await outbox.claim(at(3), at(30), limit=10) == []  # all held
    assert await outbox.next_due() == at(30)
    # A claim whose holder vanished runs out, and the message is taken again.
    taken_over = await outbox.claim(at(31), at(60), limit=10)
    assert [(m.payload["n"], m.attempts) for m in taken_over] == [(0, 2), (1, 2), (2, 2)]


async def test_outbox_records_sent_retry_and_failure(state: StateBackend) -> None:
    outbox = state.outbox
    for key in ("sent", "retry", "failed"):
        await outbox.enqueue(key, "inc-1", "decided", {"key": key}, at(0))
    claimed = {m.key: m for m in await outbox.claim(at(1), at(30), limit=10)}
    await outbox.mark_sent(claimed["sent"].id, at(2))
    await outbox.retry_at(claimed["retry"].id, at(10), "HTTP 503")
    await outbox.give_up(claimed["failed"].id, at(2), "HTTP 404")
    assert await outbox.counts() == {"pending": 1, "sent": 1, "failed": 1}
    assert await outbox.next_due() == at(10)
    assert await outbox.claim(at(5), at(35), limit=10) == []  # the retry waits its turn
    [again] = await outbox.claim(at(10), at(40), limit=10)
    assert (again.key, again.attempts) == ("retry", 2)
    await outbox.mark_sent(again.id, at(11))
    assert await outbox.next_due() is None
    # Finished messages are pruned after the retention period, pending ones never.
    await outbox.enqueue("late", "inc-2", "review_ready", {}, at(20))
    assert await outbox.prune(at(3)) == 2
    assert await outbox.counts() == {"pending": 1, "sent": 1}


async def test_a_fingerprint_held_by_one_worker_blocks_the_other(
    two_workers: tuple[StateBackend, StateBackend],
) -> None:
    first, second = (w.fingerprints for w in two_workers)
    order: list[str] = []
    async with first.hold("fp"):
        waiting = asyncio.create_task(_enter(second, "fp", order))
        async with second.hold("unrelated"):
            order.append("unrelated")
        await asyncio.sleep(0.5)  # room for the second worker to get in, were the lock broken
        order.append("first out")
    await waiting
    assert order == ["unrelated", "first out", "second in"]


async def _enter(store: FingerprintStore, fingerprint: str, order: list[str]) -> None:
    async with store.hold(fingerprint):
        order.append("second in")


async def test_workers_claiming_at_once_take_disjoint_messages(
    two_workers: tuple[StateBackend, StateBackend],
) -> None:
    first, second = (w.outbox for w in two_workers)
    for n in range(40):
        await first.enqueue(f"k{n}", f"inc-{n}", "review_ready", {"n": n}, at(0))
    batches = await asyncio.gather(
        *(outbox.claim(at(1), at(30), limit=5) for _ in range(4) for outbox in (first, second))
    )
    claimed = [m.payload["n"] for batch in batches for m in batch]
    assert sorted(claimed) == list(range(40))  # every message once, none twice
