"""The alert fingerprint table: durable across connections, counted, resolved once."""

from __future__ import annotations

import asyncio
from pathlib import Path

import aiosqlite

from app.intake.fingerprints import FingerprintStore


async def open_store(path: Path) -> tuple[aiosqlite.Connection, FingerprintStore]:
    db = await aiosqlite.connect(path)
    store = FingerprintStore(db)
    await store.setup()
    return db, store


async def test_mapping_survives_a_new_connection(tmp_path: Path) -> None:
    path = tmp_path / "rca.sqlite"
    db, store = await open_store(path)
    assert await store.get("fp-1") is None
    await store.assign("fp-1", "inc-1", "2026-11-29T10:00:00+00:00")
    await store.seen_again("fp-1", "2026-11-29T10:05:00+00:00")
    await store.mark_resolved("fp-1", "2026-11-29T10:30:00+00:00")
    await db.close()

    db, store = await open_store(path)
    record = await store.get("fp-1")
    assert record is not None
    assert (record.incident_id, record.count) == ("inc-1", 2)
    assert record.first_seen == "2026-11-29T10:00:00+00:00"
    assert record.last_seen == "2026-11-29T10:05:00+00:00"
    assert record.resolved_at == "2026-11-29T10:30:00+00:00"
    # Firing again clears the resolution; a new incident resets the row.
    await store.seen_again("fp-1", "2026-11-29T11:00:00+00:00")
    again = await store.get("fp-1")
    assert again is not None and again.resolved_at is None and again.count == 3
    await store.assign("fp-1", "inc-2", "2026-11-29T12:00:00+00:00")
    reset = await store.get("fp-1")
    assert reset is not None and (reset.incident_id, reset.count) == ("inc-2", 1)
    assert reset.first_seen == "2026-11-29T12:00:00+00:00"
    await db.close()


async def test_hold_serialises_one_fingerprint_only(tmp_path: Path) -> None:
    db, store = await open_store(tmp_path / "rca.sqlite")
    order: list[str] = []
    release = asyncio.Event()

    async def first() -> None:
        async with store.hold("fp"):
            order.append("first in")
            await release.wait()
            order.append("first out")

    async def second() -> None:
        async with store.hold("fp"):
            order.append("second in")

    async def other() -> None:
        async with store.hold("other"):
            order.append("other in")

    one = asyncio.create_task(first())
    await asyncio.sleep(0)
    two = asyncio.create_task(second())
    await other()  # a different fingerprint is not blocked
    await asyncio.sleep(0)
    assert order == ["first in", "other in"]
    release.set()
    await asyncio.gather(one, two)
    assert order == ["first in", "other in", "first out", "second in"]
    await db.close()
