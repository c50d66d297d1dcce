"""Child processes on loopback: a free port to give one, and stopping one for good.

The benches, the evaluation's backfilled Prometheus, the scripts and the tests all start real
servers on 127.0.0.1; these two helpers are the one way they pick a port and stop a process.
"""

from __future__ import annotations

import socket
import subprocess


def free_port() -> int:
    """A TCP port on 127.0.0.1 that is free right now."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def stop_process(process: subprocess.Popen[bytes] | None, timeout: float = 30.0) -> None:
    """Terminate ``process`` if it runs; kill it when it has not stopped within ``timeout``."""
    if process is None or process.poll() is not None:
        return
    process.terminate()
    try:
        process.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait(timeout=timeout)
