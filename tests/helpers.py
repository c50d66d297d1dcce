"""Small helpers shared by tests (fixtures live in conftest.py, fakes in fakes.py)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, NoReturn, Self

import httpx

from app.core.config import PROJECT_ROOT, Settings
from app.core.processes import free_port, stop_process

KNOWLEDGE_PATH = PROJECT_ROOT / "data" / "knowledge" / "error_docs.txt"


def unique_name(prefix: str = "test") -> str:
    """A Chroma-valid collection name no other test uses."""
    return f"{prefix}-{uuid.uuid4().hex[:12]}"


def wait_until_serving(
    process: subprocess.Popen[bytes],
    url: str,
    timeout: float,
    log: Callable[[], str],
    what: str = "server",
) -> None:
    """Poll ``url`` until it answers 200 while ``process`` runs.

    Args:
        process: The started server process.
        url: A health URL.
        timeout: Seconds to wait.
        log: What the process wrote, for the error.
        what: The server's name in messages.

    Raises:
        RuntimeError: The process exited, or did not answer in time.
    """
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"{what} exited early:\n{log()}")
        try:
            if httpx.get(url, timeout=2).status_code == 200:
                return
        except httpx.HTTPError:
            pass
        time.sleep(0.2)
    raise RuntimeError(f"{what} did not become ready:\n{log()}")


class LoopbackServer:
    """A real HTTP server on 127.0.0.1 (a free port) in a thread, recording every POST.

    Each request is recorded as ``{"path", "headers" (lower-case names), "body" (parsed
    JSON)}`` before ``answer`` is asked for the reply. A client that gave up (timeout) is
    ignored. ``stopping`` is set on close, so a handler waiting on it returns at once. Use it
    as a context manager or call ``close()``.
    """

    def __init__(self) -> None:
        self.requests: list[dict[str, Any]] = []
        self.stopping = threading.Event()
        self._lock = threading.Lock()
        self.arrived = threading.Condition(self._lock)
        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(
            target=self._httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )
        self._thread.start()

    def answer(self, path: str, body: Any, index: int) -> tuple[int, str, bytes] | None:
        """The reply to the ``index``-th request (0-based): status, content type, bytes.

        Returns None to answer nothing (the server is stopping). Subclasses override it.
        """
        return 200, "application/json", b"{}"

    @property
    def base_url(self) -> str:
        """``http://127.0.0.1:<port>``."""
        host, port = self._httpd.server_address[:2]
        return f"http://{host!s}:{port}"

    def bodies(self) -> list[Any]:
        """Every body received so far."""
        with self._lock:
            return [r["body"] for r in self.requests]

    def wait_for(self, count: int, timeout: float = 30.0) -> list[Any]:
        """Block until ``count`` requests arrived (or the timeout passed); returns the bodies."""
        with self.arrived:
            self.arrived.wait_for(lambda: len(self.requests) >= count, timeout=timeout)
            return [r["body"] for r in self.requests]

    def close(self) -> None:
        """Stop serving; waiting handlers return at once."""
        self.stopping.set()
        self._httpd.shutdown()
        self._httpd.server_close()
        self._thread.join(timeout=5)

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        server = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                body = json.loads(self.rfile.read(length) or b"null")
                headers = {k.lower(): v for k, v in self.headers.items()}
                with server.arrived:
                    server.requests.append({"path": self.path, "headers": headers, "body": body})
                    index = len(server.requests) - 1
                    server.arrived.notify_all()
                reply = server.answer(self.path, body, index)
                if reply is None:
                    return
                status, content_type, data = reply
                try:
                    self.send_response(status)
                    self.send_header("Content-Type", content_type)
                    self.send_header("Content-Length", str(len(data)))
                    self.end_headers()
                    self.wfile.write(data)
                except OSError:
                    pass  # the client gave up (timeout): nothing to answer

            def log_message(self, format: str, *args: Any) -> None:
                return

        return Handler


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
        try:
            wait_until_serving(self.process, f"{self.base_url}/health", timeout, self.log)
        except RuntimeError:
            self.stop()
            raise
        return self

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
        stop_process(self.process)


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


def on_ci() -> bool:
    """True when the environment says this is a CI run (``CI=true``, any case)."""
    return os.environ.get("CI", "").strip().lower() == "true"


def skip_or_fail(reason: str) -> NoReturn:
    """Skip with ``reason``, or fail on CI (``CI=true``), where nothing may be missing."""
    import pytest

    if on_ci():
        pytest.fail(f"CI=true requires it: {reason}")
    pytest.skip(reason)


SHARED_DIR = PROJECT_ROOT.parent / "shared"
DATASETS_DIR = SHARED_DIR / "datasets"
SCIFACT_DIR = DATASETS_DIR / "scifact"
LOGHUB_DIR = DATASETS_DIR / "loghub_template_ir"
MODELS_DIR = SHARED_DIR / "models" / "all-MiniLM-L6-v2"


def require_shared(path: Path) -> Path:
    """Return ``path`` if it exists; otherwise skip the test, or fail it when ``CI=true``.

    Args:
        path: A file or folder under ``../shared``.

    Returns:
        The same path, for chaining.
    """
    if path.exists():
        return path
    skip_or_fail(
        f"shared data {path} is absent (public eval data lives in ../shared beside the "
        "project, never in the repo)"
    )
