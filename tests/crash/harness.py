"""The crash harness: a real server SIGKILLed while creates and decisions are in flight.

Each round starts the server on the same state (its lifespan finishes recovery before
``/health`` answers), checks every invariant over the whole state, fires creates (each with
an ``Idempotency-Key``) and racing decisions (two reviewers per pending incident), SIGKILLs
the process 20–150 ms later while requests are outstanding, and records what every client
saw: a 2xx, a refusal, or its connection dropping. After the restart the dropped creates are
retried with their keys. ``check`` then holds the state to:

* ``transient``: no incident is ``analyzing`` or ``deciding`` once recovery is done;
* ``decision_events``: every decided incident has exactly one ``decision`` event, every
  undecided one none;
* ``history``: every approved incident is in the incident history exactly once (read from
  Chroma's own SQLite file, which it writes synchronously);
* ``acknowledged``: nothing a client got a 2xx for is gone (created incidents exist, decided
  ones show the acknowledged outcome);
* ``duplicates``: no create (one body, one key) produced two incidents.
"""

from __future__ import annotations

import json
import os
import random
import signal
import sqlite3
import subprocess
import sys
import threading
import time
import uuid
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import psycopg
from tests.helpers import free_port, unique_name

from app.core.config import PROJECT_ROOT
from app.sample_app import crash_checkout

TRANSIENT = ("analyzing", "deciding")
DECIDED = ("approved", "rejected")


class ForkedServers:
    """Real uvicorn servers forked from a warm ``zygote`` process (see tests/crash/zygote.py)."""

    def __init__(self, env: dict[str, str]) -> None:
        self.state_dir = Path(env["RCA_STATE_DIR"])
        self.state_dir.mkdir(parents=True, exist_ok=True)
        self.port = free_port()
        self.base_url = f"http://127.0.0.1:{self.port}"
        self.pid: int | None = None
        self._zygote = subprocess.Popen(
            [sys.executable, str(Path(__file__).with_name("zygote.py"))],
            cwd=PROJECT_ROOT,
            env={**os.environ, "PYTHONPATH": f"{PROJECT_ROOT}:{PROJECT_ROOT / 'backend'}", **env},
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )

    def _ask(self, line: str) -> str:
        assert self._zygote.stdin and self._zygote.stdout
        self._zygote.stdin.write(line + "\n")
        self._zygote.stdin.flush()
        return self._zygote.stdout.readline().strip()

    def start(self, timeout: float = 300.0) -> None:
        """Fork a server and wait until ``/health`` answers (start-up recovery is done)."""
        self.pid = int(self._ask(f"start {self.port}"))
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if not _alive(self.pid):
                break
            try:
                if httpx.get(f"{self.base_url}/health", timeout=2).status_code == 200:
                    return
            except httpx.HTTPError:
                pass
            time.sleep(0.05)
        raise RuntimeError(f"server did not become ready:\n{self.log()[-5000:]}")

    def kill(self, sig: int = signal.SIGKILL) -> None:
        """Send ``sig`` (SIGKILL: no shutdown hook runs) and reap the process."""
        if self.pid is not None:
            os.kill(self.pid, sig)
            self._ask(f"wait {self.pid}")
            self.pid = None

    def close(self) -> None:
        """Stop the server gracefully, then the zygote."""
        if self.pid is not None:
            self.kill(signal.SIGTERM)
        if self._zygote.stdin:
            self._zygote.stdin.close()
        self._zygote.wait(timeout=30)

    def log(self) -> str:
        """What the servers wrote."""
        path = self.state_dir / "server.log"
        return path.read_text(errors="replace") if path.exists() else ""


def _alive(pid: int) -> bool:
    """Whether ``pid`` runs (a zombie counts as gone)."""
    try:
        with open(f"/proc/{pid}/stat") as stat:
            return stat.read().split(") ")[-1][0] != "Z"
    except FileNotFoundError:
        return False


@dataclass
class Ledger:
    """What clients were told: the 2xx answers the state must honour, and what dropped."""

    created: dict[str, str] = field(default_factory=dict)  # token -> incident id
    decided: dict[str, str] = field(default_factory=dict)  # incident id -> status
    dropped_creates: dict[str, dict[str, Any]] = field(default_factory=dict)  # token -> body
    kills: int = 0
    drops: int = 0
    requests: int = 0
    #: How many answers of each status code clients got.
    statuses: Counter[int] = field(default_factory=Counter)
    #: A moving average of how long an answered request took, in seconds.
    latency: float = 0.5

    def answered(self, seconds: float) -> None:
        """Fold one answered request's duration into ``latency``."""
        self.latency = 0.8 * self.latency + 0.2 * seconds


@dataclass
class State:
    """The whole persisted state, as the checker reads it."""

    statuses: dict[str, str]
    decision_events: Counter[str]
    tokens: dict[str, list[str]]  # create token -> incident ids carrying it
    history: Counter[str]


class Harness:
    """Drives one server over one state directory (and optionally one PostgreSQL database)."""

    def __init__(self, state_dir: Path, database_url: str | None, seed: int = 0) -> None:
        self.state_dir = state_dir
        self.database_url = database_url
        self.random = random.Random(seed)
        self.ledger = Ledger()
        self.history_collection = unique_name("history")
        self.env = {
            "RCA_STATE_DIR": str(state_dir),
            "RCA_CHROMA_PATH": str(state_dir / "chroma"),
            "RCA_COLLECTION_NAME": unique_name("kb"),
            "RCA_HISTORY_COLLECTION_NAME": self.history_collection,
            "RCA_AUTH": "off",
            "RCA_RATE_LIMIT_PER_MINUTE": "0",
            # Start-up recovery only: the harness checks what a restart alone repairs.
            "RCA_RECOVERY_INTERVAL_SECONDS": "0",
            "RCA_LOG_LEVEL": "WARNING",
            **({"RCA_DATABASE_URL": database_url} if database_url else {}),
        }
        self.server = ForkedServers(self.env)
        self.url = self.server.base_url

    # -- the server ------------------------------------------------------------------------

    def start(self) -> None:
        """Start (or restart) the server on the same state and port."""
        self.server.start()

    def stop(self) -> None:
        """Stop the server gracefully, and the process that forks it."""
        self.server.close()

    # -- one round -------------------------------------------------------------------------

    def round(self, creates: int = 2, decisions: int = 2) -> int:
        """Fire requests and SIGKILL the server while some are in flight.

        A batch that finished before its kill time is followed by another one (killed
        sooner), so every kill lands on outstanding requests.

        Returns:
            How many clients saw their connection drop.
        """
        limit = max(0.15, 1.5 * self.ledger.latency)
        for _ in range(8):
            drops = self._batch(creates, decisions, limit)
            if drops is not None:
                return drops
            limit = max(0.03, limit / 2)
        raise AssertionError(f"no batch was still in flight at its kill: {self.ledger}")

    def _batch(self, creates: int, decisions: int, limit: float) -> int | None:
        """One batch; the drops it saw, or None when it finished before its kill time."""
        pending = self._pending()
        self.random.shuffle(pending)
        jobs: list[threading.Thread] = []
        in_flight = [0]
        drops = [0]
        lock = threading.Lock()

        def run(call: Any) -> None:
            with lock:
                in_flight[0] += 1
            try:
                call()
            except httpx.TransportError:
                with lock:
                    drops[0] += 1
                raise _Dropped from None
            finally:
                with lock:
                    in_flight[0] -= 1

        calls: list[Any] = [self._create_call() for _ in range(creates)]
        for incident_id in pending[:decisions]:
            calls.extend(self._decision_call(incident_id, who) for who in ("ana", "bo"))
        for call in calls:
            jobs.append(threading.Thread(target=_quietly, args=(run, call), daemon=True))
        self.ledger.requests += len(calls)
        for job in jobs:
            job.start()
        # Spread over a request's lifetime, so every crash point gets hit (and some finish).
        time.sleep(self.random.uniform(0.02, limit))
        with lock:
            idle = in_flight[0] == 0
        if idle:
            for job in jobs:
                job.join(timeout=60)
            return None
        self.server.kill()
        for job in jobs:
            job.join(timeout=60)
        self.ledger.kills += 1
        self.ledger.drops += drops[0]
        return drops[0]

    def retry_dropped_creates(self) -> None:
        """Retry each create whose connection dropped, with its key: one incident per create."""

        def retry(token: str, body: dict[str, Any]) -> None:
            answer = httpx.post(
                f"{self.url}/api/incidents",
                json=body,
                headers={"Idempotency-Key": token},
                timeout=120,
            )
            assert answer.status_code in (200, 201), answer.text
            # Not folded into the latency the kill times follow: most retries are replays of
            # a create that recovery finished (milliseconds), and a batch of racing creates
            # and decisions takes far longer; kills timed by replays would cut every request.
            self.ledger.created[token] = answer.json()["id"]

        with ThreadPoolExecutor(4) as pool:
            for done in [
                pool.submit(retry, token, body)
                for token, body in self.ledger.dropped_creates.items()
            ]:
                done.result()
        self.ledger.dropped_creates.clear()

    def _pending(self) -> list[str]:
        answer = httpx.get(
            f"{self.url}/api/incidents",
            params={"status": "awaiting_review", "limit": 200},
            timeout=30,
        )
        answer.raise_for_status()
        return [item["id"] for item in answer.json()["items"]]

    def _create_call(self) -> Any:
        token = uuid.uuid4().hex
        body = {**crash_checkout(), "message": f"{crash_checkout()['message']} [run {token}]"}

        def call() -> None:
            started = time.monotonic()
            try:
                answer = httpx.post(
                    f"{self.url}/api/incidents",
                    json=body,
                    headers={"Idempotency-Key": token},
                    timeout=120,
                )
            except httpx.TransportError:
                self.ledger.dropped_creates[token] = body
                raise
            self.ledger.statuses[answer.status_code] += 1
            if answer.status_code in (200, 201):
                self.ledger.answered(time.monotonic() - started)
                self.ledger.created[token] = answer.json()["id"]

        return call

    def _decision_call(self, incident_id: str, reviewer: str) -> Any:
        action = self.random.choice(["approve", "reject", "edit"])
        body: dict[str, Any] = {"action": action, "reviewer": reviewer, "comment": "harness"}
        if action == "edit":
            body["rca"] = None  # filled below from the draft

        def call() -> None:
            if action == "edit":
                draft = httpx.get(f"{self.url}/api/incidents/{incident_id}", timeout=30).json()
                body["rca"] = {**draft["rca"], "summary": f"edited by {reviewer}"}
            started = time.monotonic()
            answer = httpx.post(
                f"{self.url}/api/incidents/{incident_id}/decision", json=body, timeout=120
            )
            self.ledger.statuses[answer.status_code] += 1
            if answer.status_code == 200:
                self.ledger.answered(time.monotonic() - started)
                self.ledger.decided[incident_id] = answer.json()["status"]

        return call

    # -- the invariants ---------------------------------------------------------------------

    def read_state(self) -> State:
        """Everything the invariants look at, straight from the stores."""
        if self.database_url:
            with psycopg.connect(self.database_url) as conn:
                incidents = conn.execute("SELECT id, status FROM incidents").fetchall()
                events = conn.execute("SELECT incident_id, type, data FROM audit_events").fetchall()
        else:
            db = sqlite3.connect(f"file:{self.state_dir / 'rca.sqlite'}?mode=ro", uri=True)
            try:
                incidents = db.execute("SELECT id, status FROM incidents").fetchall()
                events = db.execute("SELECT incident_id, type, data FROM audit_events").fetchall()
            finally:
                db.close()
        statuses = {row[0]: row[1] for row in incidents}
        decisions: Counter[str] = Counter()
        tokens: dict[str, list[str]] = {}
        for incident_id, kind, data in events:
            if kind == "decision":
                decisions[incident_id] += 1
            elif kind == "created":
                message = (json.loads(data) if isinstance(data, str) else data)["incident"][
                    "message"
                ]
                token = message.rsplit("[run ", 1)[-1].rstrip("]")
                tokens.setdefault(token, []).append(incident_id)
        return State(statuses, decisions, tokens, self._history())

    def _history(self) -> Counter[str]:
        path = self.state_dir / "chroma" / "chroma.sqlite3"
        if not path.exists():
            return Counter()
        db = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
        try:
            rows = db.execute(
                "SELECT m.string_value FROM embedding_metadata m "
                "JOIN embeddings e ON e.id = m.id JOIN segments s ON s.id = e.segment_id "
                "JOIN collections c ON c.id = s.collection "
                "WHERE c.name = ? AND m.key = 'incident_id'",
                (self.history_collection,),
            ).fetchall()
        finally:
            db.close()
        return Counter(row[0] for row in rows)

    def check(self, after_recovery: bool = True) -> list[str]:
        """Every invariant over the whole state; the violations found (empty: all hold)."""
        state = self.read_state()
        found: list[str] = []
        for incident_id, status in state.statuses.items():
            if after_recovery and status in TRANSIENT:
                found.append(f"transient: {incident_id} is still {status}")
            decided = 1 if status in DECIDED else 0
            if state.decision_events[incident_id] != decided and (
                after_recovery or status in DECIDED
            ):
                found.append(
                    f"decision_events: {incident_id} ({status}) has "
                    f"{state.decision_events[incident_id]} decision event(s)"
                )
            if status == "approved" and state.history[incident_id] != 1:
                found.append(
                    f"history: approved {incident_id} is in the history "
                    f"{state.history[incident_id]} time(s)"
                )
        for incident_id in self.ledger.created.values():
            if incident_id not in state.statuses:
                found.append(f"acknowledged: created {incident_id} is gone")
        for incident_id, status in self.ledger.decided.items():
            if state.statuses.get(incident_id) != status:
                found.append(
                    f"acknowledged: {incident_id} was answered {status}, "
                    f"is {state.statuses.get(incident_id)}"
                )
        for ids in state.tokens.values():
            if len(ids) > 1:
                found.append(f"duplicates: one create made {len(ids)} incidents ({ids})")
        return found


class _Dropped(Exception):
    """A request whose connection dropped (counted by the round)."""


def _quietly(run: Any, call: Any) -> None:
    try:
        run(call)
    except (_Dropped, httpx.HTTPError):
        pass
