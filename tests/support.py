"""Small helpers shared by tests (fixtures live in conftest.py, fakes in fakes.py)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
import uuid
from pathlib import Path

import httpx

from app.core.config import PROJECT_ROOT, Settings

KNOWLEDGE_PATH = PROJECT_ROOT / "data" / "knowledge" / "error_docs.txt"


def unique_name(prefix: str = "test") -> str:
    """A Chroma-valid collection name no other test uses."""
    return f"{prefix}-{uuid.uuid4().hex[:12]}"


def free_port() -> int:
    """A TCP port on 127.0.0.1 that is free right now."""
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


class ServiceProcess:
    """A real ``uvicorn`` process serving ``app.main:create_app`` on 127.0.0.1."""

    def __init__(self, env: dict[str, str], port: int | None = None) -> None:
        self.port = port or free_port()
        self.base_url = f"http://127.0.0.1:{self.port}"
        self.env = env
        self.process: subprocess.Popen[bytes] | None = None
        self.log_path: Path | None = None

    def start(self, timeout: float = 180.0) -> ServiceProcess:
        """Start the process and wait until it answers (the lifespan has finished by then)."""
        env = {**os.environ, "PYTHONPATH": str(PROJECT_ROOT / "backend"), **self.env}
        state_dir = Path(env.get("RCA_STATE_DIR", "."))
        state_dir.mkdir(parents=True, exist_ok=True)
        self.log_path = state_dir / f"server-{self.port}.log"
        log = self.log_path.open("ab")
        self.process = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "uvicorn",
                "--factory",
                "app.main:create_app",
                "--host",
                "127.0.0.1",
                "--port",
                str(self.port),
                "--log-level",
                "warning",
            ],
            cwd=PROJECT_ROOT,
            env=env,
            stdout=log,
            stderr=subprocess.STDOUT,
        )
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"server exited early:\n{self.log()}")
            try:
                if httpx.get(f"{self.base_url}/health", timeout=2).status_code == 200:
                    return self
            except httpx.HTTPError:
                pass
            time.sleep(0.2)
        self.stop()
        raise RuntimeError(f"server did not become ready:\n{self.log()}")

    def log(self) -> str:
        """What the process wrote so far."""
        return self.log_path.read_text(errors="replace") if self.log_path else ""

    def kill(self) -> None:
        """SIGKILL: no shutdown hooks run, as in a crash."""
        if self.process and self.process.poll() is None:
            self.process.send_signal(signal.SIGKILL)
            self.process.wait(timeout=30)

    def stop(self) -> None:
        """Graceful stop, then kill if needed."""
        if self.process and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.kill()


def make_settings(state_dir: Path, **overrides: object) -> Settings:
    """Embedded defaults for one test: private state dir and collection, auth off, no .env."""
    values: dict[str, object] = {
        "state_dir": state_dir,
        "collection_name": unique_name("kb"),
        "auth": "off",
        "_env_file": None,
        **overrides,
    }
    return Settings(**values)  # type: ignore[arg-type]


def skip_or_fail(reason: str) -> None:
    """Skip with ``reason``, or fail on CI (``CI=true``), where nothing may be missing."""
    import pytest

    if os.environ.get("CI", "").strip().lower() == "true":
        pytest.fail(f"CI=true requires it: {reason}")
    pytest.skip(reason)
