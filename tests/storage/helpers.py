"""Two real uvicorn workers on two ports sharing one PostgreSQL database and one Redis.

Two ports (rather than ``uvicorn --workers 2`` on one) let a test say which worker serves
each request: create on A, decide on B, kill A. Each worker keeps its own in-memory Chroma
store, built from the same knowledge file, so both hold the same documents under the same
content-hash ids.
"""

from __future__ import annotations

import secrets
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from tests.helpers import ServiceProcess, unique_name


class Cluster:
    """Workers ``a`` and ``b`` with one environment; ``restart`` replaces a killed one."""

    def __init__(self, state_dir: Path, database_url: str, redis_url: str, **settings: str) -> None:
        self.keys = {name: f"{name}-{secrets.token_hex(12)}" for name in ("ana", "bob", "eve")}
        self.env = {
            "RCA_DATABASE_URL": database_url,
            "RCA_REDIS_URL": redis_url,
            "RCA_API_KEYS": ",".join(f"reviewer:{key}:{name}" for name, key in self.keys.items()),
            "RCA_COLLECTION_NAME": unique_name("kb"),
            "RCA_LOG_LEVEL": "WARNING",
            **settings,
        }
        self.state_dir = state_dir
        self.a = self._worker("a")
        self.b = self._worker("b")

    def _worker(self, name: str, port: int | None = None) -> ServiceProcess:
        # Separate state dirs keep the logs apart; nothing else is kept on disk.
        return ServiceProcess({**self.env, "RCA_STATE_DIR": str(self.state_dir / name)}, port)

    def auth(self, name: str = "ana") -> dict[str, str]:
        """Headers for reviewer ``name``."""
        return {"X-API-Key": self.keys[name]}

    def start(self) -> Cluster:
        """Start both workers at once (they race through setup and recovery, as in a rollout)."""
        with ThreadPoolExecutor(2) as pool:
            for started in [pool.submit(w.start) for w in (self.a, self.b)]:
                started.result()
        return self

    def restart_a(self) -> ServiceProcess:
        """Start worker A again on its port, after a kill."""
        self.a = self._worker("a", self.a.port).start()
        return self.a

    def stop(self) -> None:
        """Stop whatever is running."""
        for worker in (self.a, self.b):
            worker.stop()

    def logs(self) -> str:
        """Both workers' output, for failure messages."""
        return f"--- a ---\n{self.a.log()}\n--- b ---\n{self.b.log()}"
