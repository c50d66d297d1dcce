"""The extractive draft states the diagnosis: decisive evidence cited, alternatives weighed."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from app.rag.ingest import load_error_docs
from app.rca.base import RcaInput
from app.rca.evidence import incident_evidence
from app.rca.extractive import ExtractiveGenerator

KNOWLEDGE = Path(__file__).resolve().parents[2] / "data" / "knowledge" / "error_docs.txt"


def draft(incident: dict[str, Any], *pairs: tuple[str, float]) -> dict[str, Any]:
    chunks = {str(c.metadata["error_code"]): c for c in load_error_docs(KNOWLEDGE).chunks}
    docs = [
        {
            "id": chunks[code].id,
            "content": chunks[code].text,
            "similarity": similarity,
            "metadata": dict(chunks[code].metadata),
        }
        for code, similarity in pairs
    ]
    data = RcaInput(
        incident=incident,
        docs=docs,
        incident_evidence=incident_evidence(incident),
        low_confidence=False,
        knowledge_version="kb-test",
    )
    return ExtractiveGenerator().build(data).model_dump(mode="json")


INCIDENT = {
    "message": "store 0211 issues",
    "logs": [
        "WARN  till 3 receipt printer paper low",
        "ERROR sale rejected 422: total 10.00 does not equal sum of lines 10.01",
        "INFO  receipt reprint requested till 2",
    ],
}


def test_first_hypothesis_cites_the_decisive_log_line_next_to_the_doc() -> None:
    rca = draft(INCIDENT, ("POS-422-QTY", 0.65), ("POS-422-AMOUNT", 0.6), ("CH-502", 0.3))
    first = rca["hypotheses"][0]
    assert first["error_code"] == "POS-422-AMOUNT"
    cited = [c["id"] for claim in first["claims"] for c in claim["evidence"]]
    assert cited[0] == "incident:log:2"
    assert any(i.startswith("error-doc-") for i in cited)


def test_alternatives_say_what_supports_and_opposes_them() -> None:
    rca = draft(INCIDENT, ("POS-422-QTY", 0.65), ("POS-422-AMOUNT", 0.6), ("CH-502", 0.3))
    alternatives = {h["error_code"]: h for h in rca["hypotheses"][1:]}
    assert "against: 422 where HTTP 5xx was expected" in alternatives["CH-502"]["statement"]
    assert [f["kind"] for f in alternatives["CH-502"]["flags"]] == [
        "contradicted",
        "no_incident_evidence",
    ]
    assert "supported by HTTP 422" in alternatives["POS-422-QTY"]["statement"]


def test_an_alternative_with_similarity_only_says_so() -> None:
    incident = {"message": "the kiosk refused a basket without items"}
    rca = draft(incident, ("POS-422-LINES", 0.6), ("POS-422-QTY", 0.5))
    assert "no incident evidence (similarity 0.50 only)" in rca["hypotheses"][1]["statement"]


def test_missing_evidence_lists_only_what_the_incident_does_not_show() -> None:
    rca = draft(INCIDENT, ("POS-422-AMOUNT", 0.6))
    missing = " ".join(rca["missing_evidence"])
    assert "pos-api" in missing  # the family's service is not named anywhere
    assert "HTTP 422" not in missing  # the incident shows it
    assert "total 19.99" not in missing


def test_a_jvm_trace_is_located_at_its_root_cause() -> None:
    from app.rca.evidence import failure_location, incident_evidence

    incident = {
        "message": "pos checkout 500",
        "stack_trace": "com.acme.pos.api.ApiException: checkout failed\n"
        "\tat com.acme.pos.checkout.CheckoutHandler.complete(CheckoutHandler.java:150)\n"
        "Caused by: java.lang.IllegalStateException: till session closed\n"
        "\tat com.acme.pos.session.TillSession.require(TillSession.java:40)\n"
        "\t... 12 more",
    }
    location = failure_location(incident_evidence(incident))
    assert location is not None
    frame, exception = location
    assert frame.id == "incident:stack:4" and exception is not None
    assert exception.id == "incident:stack:3"
    plain = failure_location(
        incident_evidence(
            {
                "message": "x",
                "stack_trace": "java.lang.NullPointerException: tender is null\n"
                "\tat com.acme.pos.checkout.CheckoutHandler.complete(CheckoutHandler.java:141)",
            }
        )
    )
    assert plain is not None and plain[0].id == "incident:stack:2"
    assert plain[1] is not None and plain[1].id == "incident:stack:1"


def test_the_first_error_record_is_cited_even_when_it_matches_no_signal() -> None:
    incident = {
        "message": "reservations failing for click & collect",
        "service": "inventory-service",
        "logs": [
            "ERROR psycopg2.OperationalError: FATAL: remaining connection slots are reserved "
            "for non-replication superuser connections",
            "WARN POST /v1/reservations 503",
        ],
    }
    rca = draft(incident, ("INV-503", 0.38))
    first = rca["hypotheses"][0]
    assert first["error_code"] == "INV-503"
    cited = [e["id"] for claim in first["claims"] for e in claim["evidence"]]
    assert "incident:log:1" in cited and "incident:log:2" in cited


def test_the_stack_line_that_says_what_failed_is_cited_for_any_runtime() -> None:
    go_panic = {
        "message": "fridge temps missing on dashboard",
        "stack_trace": "panic: runtime error: index out of range [3] with length 3\n\n"
        "goroutine 17 [running]:\nmain.parseSensorFrame(...)\n"
        "\t/src/chiller-monitor/sensor.go:42",
    }
    node = {
        "message": "store 12 tills error on completing sale",
        "service": "pos-api",
        "stack_trace": "TypeError: Cannot read properties of undefined (reading 'price')\n"
        "    at completeSale (/srv/pos-api/src/handlers/checkout.js:112:31)",
    }
    for incident, code in ((go_panic, "CH-502"), (node, "POS-500-CHECKOUT")):
        first = draft(incident, (code, 0.55))["hypotheses"][0]
        assert first["error_code"] == code
        cited = [e["id"] for claim in first["claims"] for e in claim["evidence"]]
        assert "incident:stack:1" in cited, code


def test_a_message_of_punctuation_alone_is_not_quoted() -> None:
    rca = draft({"message": "."})
    cited = [e["id"] for h in rca["hypotheses"] for c in h["claims"] for e in c["evidence"]]
    assert "incident:message" not in cited
    assert "Insufficient evidence" in rca["summary"]


def test_a_long_contradiction_is_cut_to_fit_the_reviewers_flag() -> None:
    frames = "\n".join(
        f'  File "/srv/app/reporting/module_{n:03d}_with_a_rather_long_name.py", line {n}, in f'
        for n in range(60)
    )
    incident = {
        "message": "checkout 500",
        "stack_trace": f"Traceback (most recent call last):\n{frames}\nKeyError: 'region'",
    }
    result = draft(incident, ("CO-500", 0.5), ("POS-500-CHECKOUT", 0.45))
    flags = [f for h in result["hypotheses"] for f in h["flags"]]
    assert flags and all(len(f["message"]) <= 1000 for f in flags)
