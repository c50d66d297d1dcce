"""Log lines: JSON or console, one handler for the app's loggers and uvicorn's."""

from __future__ import annotations

import json
import logging
import os
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from tests.helpers import free_port, stop_process, unique_name, wait_until_serving

from app.core.config import PROJECT_ROOT
from app.core.logging import (
    StderrHandler,
    configure_logging,
    request_id_var,
    resolve_format,
)

CONSOLE_LINE = re.compile(r"^\d\d:\d\d:\d\d\.\d{3}Z (INFO|WARNING|ERROR|DEBUG)\s+(\S+)\s+(.*)$")


@pytest.fixture(autouse=True)
def restore_logging() -> Iterator[None]:
    """Put the root, app and uvicorn loggers back as they were."""
    names = ("", "app", "uvicorn", "uvicorn.access")
    saved = {n: logging.getLogger(n) for n in names}
    state = {n: (list(g.handlers), g.propagate, g.level) for n, g in saved.items()}
    # As uvicorn leaves them at --log-level info.
    for name in ("uvicorn", "uvicorn.access"):
        logging.getLogger(name).setLevel(logging.INFO)
    yield
    for name, (handlers, propagate, level) in state.items():
        logger = saved[name]
        logger.handlers[:] = handlers
        logger.propagate = propagate
        logger.setLevel(level)


def emit_sample_lines() -> None:
    logging.getLogger("app.incidents.service").info("incident %s created", "abc")
    logging.getLogger("uvicorn.access").info(
        '%s - "%s %s HTTP/%s" %d', "127.0.0.1:5000", "GET", "/health", "1.1", 200
    )
    logging.getLogger("uvicorn.error").info("Application startup complete.")


def test_json_format_renders_app_and_uvicorn_lines_alike(
    capsys: pytest.CaptureFixture[str],
) -> None:
    configure_logging("INFO", "json")
    token = request_id_var.set("req-42")
    try:
        emit_sample_lines()
    finally:
        request_id_var.reset(token)
    lines = capsys.readouterr().err.strip().splitlines()
    entries = [json.loads(line) for line in lines]
    assert [e["logger"] for e in entries] == [
        "app.incidents.service",
        "uvicorn.access",
        "uvicorn.error",
    ]
    assert entries[0]["message"] == "incident abc created"
    assert entries[1]["message"] == '127.0.0.1:5000 - "GET /health HTTP/1.1" 200'
    assert all(e["request_id"] == "req-42" and e["level"] == "INFO" for e in entries)


def test_console_format_is_one_aligned_line_per_record(capsys: pytest.CaptureFixture[str]) -> None:
    configure_logging("INFO", "console")
    emit_sample_lines()
    try:
        raise ValueError("boom")
    except ValueError:
        logging.getLogger("app.x").exception("it failed")
    err = capsys.readouterr().err
    lines = err.splitlines()
    matches = [CONSOLE_LINE.match(line) for line in lines[:4]]
    assert all(matches), lines
    assert [m.group(2) for m in matches if m] == [
        "app.incidents.service",
        "uvicorn.access",
        "uvicorn.error",
        "app.x",
    ]
    assert "Traceback (most recent call last)" in err and "ValueError: boom" in err
    with pytest.raises(json.JSONDecodeError):
        json.loads(lines[0])


def test_configuring_again_switches_format_without_a_second_handler(
    capsys: pytest.CaptureFixture[str],
) -> None:
    configure_logging("INFO", "console")
    configure_logging("DEBUG", "json")
    ours = [h for h in logging.getLogger().handlers if isinstance(h, StderrHandler)]
    assert len(ours) == 1
    logging.getLogger("app.y").debug("visible at debug")
    assert json.loads(capsys.readouterr().err)["message"] == "visible at debug"


def test_auto_is_console_on_a_terminal_and_json_elsewhere(tmp_path: Path) -> None:
    leader, follower = os.openpty()
    try:
        with os.fdopen(follower, "w", closefd=False) as terminal:
            assert resolve_format("auto", terminal) == "console"
    finally:
        os.close(leader)
        os.close(follower)
    with (tmp_path / "log.txt").open("w") as plain_file:
        assert resolve_format("auto", plain_file) == "json"
        assert resolve_format("console", plain_file) == "console"


@pytest.mark.slow
@pytest.mark.parametrize("log_format", ["json", "console"])
def test_rca_serve_writes_every_line_in_the_chosen_format(tmp_path: Path, log_format: str) -> None:
    port = free_port()
    log_path = tmp_path / "serve.log"
    env = {
        **os.environ,
        "PYTHONPATH": str(PROJECT_ROOT / "backend"),
        "RCA_STATE_DIR": str(tmp_path / "state"),
        "RCA_COLLECTION_NAME": unique_name("kb"),
        "RCA_AUTH": "off",
        "RCA_LOG_FORMAT": log_format,
        "RCA_LOG_LEVEL": "INFO",
    }
    with log_path.open("wb") as log:
        process = subprocess.Popen(
            [sys.executable, "-m", "app.cli", "serve", "--port", str(port)],
            cwd=tmp_path,
            env=env,
            stdout=log,
            stderr=subprocess.STDOUT,
        )
    try:
        base = f"http://127.0.0.1:{port}"
        wait_until_serving(process, f"{base}/health", 180, lambda: log_path.read_text())
        assert httpx.get(f"{base}/health", timeout=10).status_code == 200
    finally:
        stop_process(process)
    lines = [line for line in log_path.read_text().splitlines() if line.strip()]
    if log_format == "json":
        entries = [json.loads(line) for line in lines]
        loggers = {e["logger"] for e in entries}
        messages = [e["message"] for e in entries]
    else:
        matches = [CONSOLE_LINE.match(line) for line in lines]
        assert all(matches), lines
        loggers = {m.group(2) for m in matches if m}
        messages = [m.group(3) for m in matches if m]
    assert {"app.rag.knowledge", "uvicorn.error", "uvicorn.access"} <= loggers
    assert any('"GET /health HTTP/1.1" 200' in m for m in messages)


def test_other_libraries_print_only_warnings(capsys: pytest.CaptureFixture[str]) -> None:
    configure_logging("INFO", "json")
    chatty = logging.getLogger("some_library")
    chatty.setLevel(logging.DEBUG)
    chatty.debug("building index")
    chatty.warning("disk almost full")
    entries = [json.loads(line) for line in capsys.readouterr().err.splitlines()]
    assert [e["message"] for e in entries] == ["disk almost full"]
