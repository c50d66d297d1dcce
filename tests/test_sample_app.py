"""The sample app crashes for real and becomes an incident; the smoke run checks the loop."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from app.core.config import PROJECT_ROOT
from app.sample_app import crash_checkout, load_sample_module


def test_crash_becomes_an_incident_with_the_real_traceback() -> None:
    incident = crash_checkout()
    assert incident["error_code"] == "CO-500"
    assert incident["event"] == "CHECKOUT_SERVICE_CRASH"
    assert incident["service"] == "checkout-service"
    assert incident["message"].startswith("ZeroDivisionError")
    trace = incident["stack_trace"]
    assert trace.startswith("Traceback (most recent call last):")
    assert "checkout_service.py" in trace and "in calculate_discount" in trace
    assert trace.rstrip().splitlines()[-1].startswith("ZeroDivisionError")


def test_sample_app_works_for_a_normal_basket() -> None:
    module = load_sample_module()
    items = [module.LineItem("COFFEE-1KG", 2, 1500)]
    assert module.checkout_total(items, module.Promotion("SPRING10", 1000)) == 2000


def run_rca(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "app.cli", *args],
        cwd=PROJECT_ROOT,
        env={"PYTHONPATH": str(PROJECT_ROOT / "backend"), "PATH": "/usr/bin:/bin", **(env or {})},
        capture_output=True,
        text=True,
        timeout=600,
    )


def test_smoke_runs_the_whole_loop() -> None:
    result = run_rca("smoke")
    assert result.returncode == 0, result.stdout + result.stderr
    assert "ingested 10 error-doc chunk(s)" in result.stdout
    assert "1. CO-500" in result.stdout
    assert "final status: approved" in result.stdout


def test_smoke_fails_when_expectations_are_not_met(tmp_path: Path) -> None:
    kb = tmp_path / "kb.txt"
    kb.write_text("Error: PAY-408 PAYMENT_TIMEOUT\nSymptoms: payments hang\nCause: slow provider\n")
    result = run_rca("smoke", env={"RCA_KNOWLEDGE_PATH": str(kb)})
    assert result.returncode == 1
    assert "FAIL: top doc is" in result.stdout and "expected CO-500" in result.stdout


def test_ingest_prints_count_and_ids(tmp_path: Path) -> None:
    result = run_rca("ingest")
    assert result.returncode == 0, result.stderr
    first = result.stdout.splitlines()[0]
    assert first.startswith("ingested 10 error-doc chunk(s) and ") and first.endswith(" window(s)")
    assert "POS-503-PLU" in result.stdout and "error-doc-" in result.stdout


def test_ingest_refuses_an_empty_file(tmp_path: Path) -> None:
    empty = tmp_path / "empty.txt"
    empty.write_text("---\n")
    result = run_rca("ingest", str(empty))
    assert result.returncode == 2
    assert "empty knowledge base" in result.stderr
