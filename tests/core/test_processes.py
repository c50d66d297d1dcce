"""Ports for loopback servers: free, and outside the range outgoing connections draw from."""

from __future__ import annotations

import socket

import pytest

from app.core import processes
from app.core.processes import LOWEST_PORT, free_port


def test_a_free_port_lies_below_the_ephemeral_range_and_binds() -> None:
    low, _ = processes.ephemeral_ports()
    for _ in range(20):
        port = free_port()
        assert LOWEST_PORT <= port < low
        with socket.socket() as sock:
            sock.bind(("127.0.0.1", port))  # still free: nothing else was given it


def test_without_room_below_the_range_the_kernel_chooses(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(processes, "ephemeral_ports", lambda: (LOWEST_PORT, 60999))
    port = free_port()
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", port))
