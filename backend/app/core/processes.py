"""Child processes on loopback: a free port to give one, and stopping one for good.

The benches, the evaluation's backfilled Prometheus, the scripts and the tests all start real
servers on 127.0.0.1; these two helpers are the one way they pick a port and stop a process.
"""

from __future__ import annotations

import secrets
import socket
import subprocess
from pathlib import Path

#: Linux's default range for the source ports of outgoing connections (when /proc cannot say).
DEFAULT_EPHEMERAL_PORTS = (32768, 60999)
#: The lowest port handed out.
LOWEST_PORT = 10000


def ephemeral_ports() -> tuple[int, int]:
    """The lowest and highest source port of outgoing connections on this machine."""
    try:
        low, high = Path("/proc/sys/net/ipv4/ip_local_port_range").read_text().split()
        return int(low), int(high)
    except (OSError, ValueError):
        return DEFAULT_EPHEMERAL_PORTS


def free_port() -> int:
    """A TCP port on 127.0.0.1 that is free now and stays free until a server binds it.

    The port comes from below the ephemeral range: a port the kernel hands out for ``bind(0)``
    lies inside it, where any outgoing connection (Prometheus scraping, a test's client) may
    take it as its source port before the server it was meant for starts ("address already in
    use"). Falls back to the kernel's choice when no port below the range is free.
    """
    low = ephemeral_ports()[0]
    for _ in range(100):
        if low - 1 <= LOWEST_PORT:
            break
        port = LOWEST_PORT + secrets.randbelow(low - LOWEST_PORT)
        with socket.socket() as sock:
            try:
                sock.bind(("127.0.0.1", port))
            except OSError:
                continue
            return port
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        chosen: int = sock.getsockname()[1]
        return chosen


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
