"""Expected signals derived at ingest: generic parsing, contrast clauses, runbook declarations."""

from __future__ import annotations

import json
from pathlib import Path

from app.rag.ingest import load_error_docs, parse_error_docs
from app.rag.markdown import parse_runbook
from app.rag.signals import derive_signals, own_clauses, read_signals

KNOWLEDGE = Path(__file__).resolve().parents[2] / "data" / "knowledge" / "error_docs.txt"

ELEVENTH = """Error: LBL-409 SHELF_LABEL_CONFLICT
Component: electronic shelf label sync job
Service: shelf-labels (aliases: esl-sync)
Symptoms: label pushes fail with HTTP 409 Conflict on PUT /esl/v2/labels; the sync job logs \
"version mismatch for label".
Cause: two pushes race on one label; the second carries a stale version (LabelVersionError in \
label_sync.py, raised by push_label).
Evidence: "version mismatch for label" in the sync log, 409 responses, not the 5xx of an outage.
Solution: retry with the fresh version.
"""


def test_an_eleventh_doc_gets_its_signals_with_no_code_change() -> None:
    (chunk,) = parse_error_docs(ELEVENTH).chunks
    signals = read_signals(chunk.metadata)
    assert signals["services"] == ["shelf-labels", "esl-sync"]
    assert signals["statuses"] == ["409"] and signals["status_classes"] == ["4xx"]
    assert signals["paths"] == ["/esl/v2/labels"]
    assert signals["exceptions"] == ["LabelVersionError"]
    assert signals["files"] == ["label_sync.py"]
    assert signals["identifiers"] == ["push_label"]
    assert signals["phrases"] == ["version mismatch for label"]


def test_signals_are_stored_as_json_and_deterministic() -> None:
    first = parse_error_docs(ELEVENTH).chunks[0].metadata["signals"]
    again = parse_error_docs(ELEVENTH).chunks[0].metadata["signals"]
    assert isinstance(first, str) and first == again
    assert list(json.loads(first))[0] == "services"


def test_contrast_clauses_give_no_signals() -> None:
    text = own_clauses(
        "reachable but slow, unlike a 502 where it answers with an error; "
        'CO-500 is the online checkout_service.py; "total does not equal sum" in logs',
        own_code="PAY-408",
    )
    assert "502" not in text and "checkout_service.py" not in text
    assert '"total does not equal sum"' in text


def test_a_quoted_reason_phrase_is_the_status_not_a_phrase() -> None:
    signals = derive_signals(
        {"Evidence": 'gateway log "bad gateway" or "invalid response from upstream", 502'}
    )
    assert signals["phrases"] == ["invalid response from upstream"]  # any proxy says "bad gateway"
    assert signals["statuses"] == ["502"]


def test_examples_confirm_but_are_marked_as_examples() -> None:
    signals = derive_signals(
        {"Evidence": "stack trace in POS API logs (NullPointerException, KeyError or similar)"}
    )
    assert signals["exceptions"] == ["NullPointerException", "KeyError"]
    assert signals["exception_examples"] == ["NullPointerException", "KeyError"]


def test_the_shipped_docs_have_services_and_distinct_phrases() -> None:
    chunks = load_error_docs(KNOWLEDGE).chunks
    assert len(chunks) >= 10
    for chunk in chunks:
        signals = read_signals(chunk.metadata)
        assert signals["services"], chunk.metadata["error_code"]
    pay = next(c for c in chunks if c.metadata["error_code"] == "PAY-408")
    assert "502" not in read_signals(pay.metadata)["statuses"]  # "unlike a 502"


def test_a_runbook_declares_its_own_signals_in_front_matter() -> None:
    text = (
        "---\nservice: payment-service\nexceptions: [SocketTimeoutException]\n"
        "phrases: acquirer timeout\n---\n# Provider timeouts\nRetries pile up with HTTP 504.\n"
    )
    (chunk,) = parse_runbook(text, "payments.md", count_tokens=len).chunks
    signals = read_signals(chunk.metadata)
    assert signals["services"] == ["payment-service"]
    assert signals["exceptions"] == ["SocketTimeoutException"]
    assert signals["phrases"] == ["acquirer timeout"]
    assert signals["statuses"] == ["504"]
