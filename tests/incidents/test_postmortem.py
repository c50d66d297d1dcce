"""Postmortems: built from the record and the audit trail; served as Markdown and JSON; CLI."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient
from tests.helpers import make_settings
from tests.intake.helpers import alert, notification

from app.core.config import PROJECT_ROOT
from app.core.errors import Conflict
from app.incidents.postmortem import build_postmortem
from app.incidents.postmortem_markdown import render_markdown
from app.incidents.repository import AuditEvent
from app.main import create_app
from app.sample_app import crash_checkout
from app.schemas import IncidentPublic

SECTIONS = [
    "## Summary",
    "## Impact",
    "## Timeline",
    "## Root cause",
    "## What was ruled out",
    "## Remediation",
    "## Validation",
    "## Action items",
]


class CollectedIncident(IncidentPublic):
    """A record as it looks once live evidence collection adds its fields."""

    collected_evidence: list[dict[str, Any]] = []
    sources_unavailable: list[dict[str, Any]] = []


def rca(**overrides: Any) -> dict[str, Any]:
    draft: dict[str, Any] = {
        "summary": "Checkout divides by zero for empty baskets.",
        "hypotheses": [
            {
                "statement": "calculate_discount divides by a zero unit count",
                "error_code": "CO-500",
                "confidence": "high",
                "claims": [
                    {
                        "text": "The traceback ends in calculate_discount",
                        "evidence": [
                            {"id": "incident:stack:2", "quote": "line 33, in calculate_discount"}
                        ],
                    },
                    {
                        "text": "The 5xx ratio rose at the same time",
                        "evidence": [{"id": "prom:ab12", "quote": "rose from 0.2% to 37%"}],
                    },
                    {
                        "text": "Known cause of CO-500",
                        "evidence": [
                            {"id": "error-doc-1", "quote": "divides by the item count"},
                            {"id": "incident:stack:2", "quote": "line 33, in calculate_discount"},
                        ],
                    },
                ],
            },
            {"statement": "A payment provider timeout", "error_code": "PAY-408", "claims": []},
        ],
        "ruled_out": ["Database outage: no connection errors in the logs"],
        "missing_evidence": ["The basket payload of a failing request"],
        "next_checks": ["Replay an empty basket: expect 4xx, no ZeroDivisionError"],
        "remediation": ["Return zero discount when the divisor is zero"],
        "confidence": "high",
    }
    return {**draft, **overrides}


def record(status: str = "approved", **fields: Any) -> CollectedIncident:
    decided = status in ("approved", "rejected")
    values: dict[str, Any] = {
        "id": "inc-1",
        "status": status,
        "incident": {
            "message": "ZeroDivisionError in checkout",
            "service": "checkout-service",
            "event": "CheckoutErrors",
            "stack_trace": 'Traceback (most recent call last):\n  File "co.py", line 33, in '
            "calculate_discount\nZeroDivisionError: division by zero",
            "logs": [
                "alertmanager receiver=rca alert=CheckoutErrors status=firing "
                "startsAt=2026-11-29T10:00:00+00:00 fingerprint=f1",
                "labels: alertname=CheckoutErrors service=checkout-service",
            ],
        },
        "rca": rca(),
        "final_rca": rca() if status == "approved" else None,
        "similar_error_docs": [
            {
                "id": "error-doc-1",
                "content": "Error: CO-500 CHECKOUT_SERVICE_CRASH\nCause: the discount calculation "
                "divides by the basket item count.",
                "similarity": 0.8,
                "metadata": {"error_code": "CO-500", "error_name": "CHECKOUT_SERVICE_CRASH"},
            }
        ],
        "decision": {
            "action": "approve" if status == "approved" else "reject",
            "reviewer": "ana",
            "comment": "matches the traceback" if status == "approved" else "wrong family",
            "decided_at": "2026-11-29T10:20:00+00:00",
        }
        if decided
        else None,
        "collected_evidence": [
            {
                "id": "prom:ab12",
                "source": "prometheus",
                "kind": "metric",
                "summary": "5xx ratio of checkout-service rose from 0.2% to 37% at 10:02:11Z",
                "query": "sum(rate(http_requests_total{code=~'5..'}[1m]))",
            }
        ],
        "created_at": "2026-11-29T10:00:05+00:00",
        "updated_at": "2026-11-29T10:20:00+00:00",
        **fields,
    }
    return CollectedIncident.model_validate(values)


def trail(action: str = "approve") -> list[AuditEvent]:
    return [
        AuditEvent("created", "2026-11-29T10:00:05+00:00", None, None, None, {}),
        AuditEvent("draft", "2026-11-29T10:00:09+00:00", "extractive", None, None, {"rca": rca()}),
        AuditEvent(
            "assigned", "2026-11-29T10:05:00+00:00", "lead", None, None, {"assignee": "ana"}
        ),
        AuditEvent(
            "alert_resolved",
            "2026-11-29T10:31:00+00:00",
            "alertmanager",
            None,
            None,
            {"alertname": "CheckoutErrors", "ends_at": "2026-11-29T10:30:00+00:00"},
        ),
        AuditEvent(
            "decision",
            "2026-11-29T10:20:00+00:00",
            "ana",
            action,
            "matches the traceback" if action == "approve" else "wrong family",
            {},
        ),
    ]


def test_only_a_decided_incident_has_a_postmortem() -> None:
    with pytest.raises(Conflict, match="awaiting_review"):
        build_postmortem(record("awaiting_review"), trail()[:2])


def test_timeline_orders_alert_creation_drafts_assignment_decision_and_resolve() -> None:
    postmortem = build_postmortem(record(), trail())
    kinds = [(e.kind, e.actor) for e in postmortem.timeline]
    assert kinds == [
        ("alert_fired", "alertmanager"),
        ("created", None),
        ("draft", "extractive"),
        ("assignment", "lead"),
        ("decision", "ana"),
        ("alert_resolved", "alertmanager"),
    ]
    decision = postmortem.timeline[4]
    assert (
        decision.comment == "matches the traceback" and decision.description == "Approved the RCA"
    )
    assert postmortem.timeline[3].description == "Assigned to ana"
    assert postmortem.timeline[5].at == "2026-11-29T10:30:00+00:00"


def test_impact_comes_from_collected_metrics_and_the_alert_window() -> None:
    impact = build_postmortem(record(), trail()).impact
    assert any(line.startswith("5xx ratio of checkout-service rose") for line in impact)
    assert any("http_requests_total" in line for line in impact)
    assert (
        "Alert CheckoutErrors fired from 2026-11-29 10:00:00Z until 2026-11-29 10:30:00Z, 30 min."
        in impact
    )
    assert not any("No metrics" in line for line in impact)


def test_without_collected_metrics_impact_says_so() -> None:
    bare = IncidentPublic.model_validate(record().model_dump(exclude={"collected_evidence"}))
    impact = build_postmortem(bare, trail()).impact
    assert any("No metrics were collected" in line for line in impact)
    assert any(line.startswith("As reported: ZeroDivisionError") for line in impact)


def test_citations_become_shared_footnotes_quoting_the_evidence() -> None:
    postmortem = build_postmortem(record(), trail())
    cause = postmortem.root_cause
    assert cause is not None and cause.error_code == "CO-500"
    assert [c.footnotes for c in cause.claims] == [[1], [2], [3, 1]]
    stack, metric, doc = postmortem.footnotes
    assert (stack.evidence_id, stack.source, stack.verbatim) == (
        "incident:stack:2",
        "incident",
        True,
    )
    assert metric.source == "collected metric (prometheus)" and metric.verbatim
    assert doc.source == "knowledge doc CO-500 CHECKOUT_SERVICE_CRASH"
    # The doc says "basket item count", not "item count" word for word after "divides by the".
    assert not doc.verbatim and "divides by the basket item count" in doc.evidence


def test_ruled_out_remediation_validation_and_action_items() -> None:
    unavailable = [{"source": "loki", "reason": "timed out after 5s"}]
    postmortem = build_postmortem(record(sources_unavailable=unavailable), trail())
    assert postmortem.ruled_out[0] == "Database outage: no connection errors in the logs"
    assert postmortem.ruled_out[1] == "Considered, not chosen: A payment provider timeout"
    assert postmortem.remediation == ["Return zero discount when the divisor is zero"]
    assert postmortem.validation == ["Replay an empty basket: expect 4xx, no ZeroDivisionError"]
    assert postmortem.action_items == [
        "Make this evidence available next time: The basket payload of a failing request",
        "Restore access to loki: timed out after 5s",
    ]


def test_a_rejected_incident_has_no_root_cause_and_says_why() -> None:
    postmortem = build_postmortem(record("rejected"), trail("reject"))
    assert postmortem.root_cause is None
    assert "rejected by ana: wrong family" in postmortem.summary
    assert postmortem.ruled_out[-1].startswith("Rejected by the reviewer: calculate_discount")
    assert postmortem.action_items[0].startswith("Establish the root cause")
    markdown = render_markdown(postmortem)
    assert "_Not established._" in markdown


def test_markdown_has_every_section_in_order_and_defines_each_footnote() -> None:
    markdown = render_markdown(build_postmortem(record(), trail()))
    positions = [markdown.index(section) for section in SECTIONS]
    assert positions == sorted(positions)
    assert markdown.startswith("# Postmortem: CheckoutErrors on checkout-service\n")
    assert "| 2026-11-29 10:20:00Z | Approved the RCA — “matches the traceback” | ana |" in markdown
    used = set(re.findall(r"\[\^(\d+)\](?!:)", markdown))
    defined = set(re.findall(r"^\[\^(\d+)\]:", markdown, flags=re.MULTILINE))
    assert used == defined == {"1", "2", "3"}
    assert "- [ ] Make this evidence available next time" in markdown
    assert "1. Return zero discount when the divisor is zero" in markdown


def test_api_serves_markdown_and_json_for_decided_incidents_only(client: TestClient) -> None:
    created = client.post("/api/incidents", json=crash_checkout()).json()
    url = f"/api/incidents/{created['id']}/postmortem"
    early = client.get(url)
    assert early.status_code == 409
    assert early.json()["error"]["code"] == "conflict"
    assert client.get("/api/incidents/nope/postmortem").status_code == 404
    decided = client.post(
        f"/api/incidents/{created['id']}/decision",
        json={"action": "approve", "comment": "matches the traceback"},
    )
    assert decided.status_code == 200

    markdown = client.get(url)
    assert markdown.status_code == 200
    assert markdown.headers["content-type"].startswith("text/markdown")
    text = markdown.text
    assert all(section in text for section in SECTIONS)
    assert "Approved the RCA — “matches the traceback”" in text
    assert "`incident:message` (incident)" in text

    document = client.get(url, params={"format": "json"}).json()
    assert document["status"] == "approved" and document["decided_by"] == "local"
    assert document["root_cause"]["error_code"] == "CO-500"
    assert [e["kind"] for e in document["timeline"]] == ["created", "draft", "decision"]
    assert client.get(url, params={"format": "pdf"}).status_code == 422


def test_an_alertmanager_incident_shows_the_alert_start_and_resolve(client: TestClient) -> None:
    fired = alert("fp-postmortem", labels={"service": "checkout-service"})
    accepted = client.post("/api/intake/alertmanager", json=notification(fired))
    assert accepted.status_code == 202
    (incident_id,) = accepted.json()["incident_ids"]
    resolved = alert("fp-postmortem", status="resolved", labels={"service": "checkout-service"})
    assert (
        client.post("/api/intake/alertmanager", json=notification(resolved)).json()["resolved"] == 1
    )
    client.post(f"/api/incidents/{incident_id}/decision", json={"action": "approve"})

    document = client.get(f"/api/incidents/{incident_id}/postmortem?format=json").json()
    timeline = [(e["kind"], e["at"]) for e in document["timeline"]]
    assert timeline[0] == ("alert_fired", "2026-11-29T10:00:00+00:00")
    assert ("alert_resolved", "2026-11-29T10:30:00+00:00") in timeline
    created = next(e for e in document["timeline"] if e["kind"] == "created")
    assert created["description"] == "Incident recorded from alert CheckoutErrors"


@pytest.mark.slow
def test_rca_postmortem_prints_the_document(tmp_path: Path) -> None:
    state = tmp_path / "state"
    settings = make_settings(state)
    with TestClient(create_app(settings)) as client:
        created = client.post("/api/incidents", json=crash_checkout()).json()
        client.post(f"/api/incidents/{created['id']}/decision", json={"action": "approve"})
    env = {
        **os.environ,
        "PYTHONPATH": str(PROJECT_ROOT / "backend"),
        "RCA_STATE_DIR": str(state),
        "RCA_COLLECTION_NAME": settings.collection_name,
        "RCA_AUTH": "off",
    }

    def run(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "app.cli", "postmortem", *args],
            cwd=tmp_path,
            env=env,
            capture_output=True,
            text=True,
            timeout=300,
        )

    markdown = run(created["id"])
    assert markdown.returncode == 0, markdown.stderr
    assert markdown.stdout.startswith("# Postmortem: CO-500 on checkout-service")
    as_json = run(created["id"], "--format", "json")
    assert json.loads(as_json.stdout)["incident_id"] == created["id"]
    unknown = run("no-such-incident")
    assert unknown.returncode == 2 and "no incident with id" in unknown.stderr
