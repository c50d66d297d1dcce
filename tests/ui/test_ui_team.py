"""The reviewer workspace's team features in real Chromium, each checked through the API too.

The edit form (reorder, delete, bands, claims, the citation check's refusal and its
confirmation), claims, a group decided at once, readable chips and times, one badge per
state, the diagnosis and collected evidence, the keyboard list, dark and phone layouts, the
wrong-key guidance, and an axe-core scan with no serious or critical violation.
"""

from __future__ import annotations

import re
import uuid
from pathlib import Path
from typing import Any

import pytest
from tests.ui.helpers import KEYS, Api

from app.sample_app import crash_checkout

try:
    from playwright.sync_api import Page, Route, expect
except ImportError:  # the fixtures skip, or fail under CI=true, with the reason
    Page = Route = Any  # type: ignore[misc,assignment]
    expect = None  # type: ignore[assignment]

pytestmark = pytest.mark.slow

AXE = Path(__file__).parent / "vendor" / "axe.min.js"


def open_incident(page: Page, server: str, incident_id: str) -> None:
    page.goto(f"{server}/#/incidents/{incident_id}")
    expect(page.locator(f".incident-layout[data-id='{incident_id}']")).to_be_visible()


def test_edit_form_reshapes_the_draft_and_the_check_guards_it(
    page: Page, server: str, api: Api
) -> None:
    incident = api.create(crash_checkout())
    hypotheses = incident["rca"]["hypotheses"]
    assert len(hypotheses) >= 3
    open_incident(page, server, incident["id"])
    page.locator("#main").focus()
    page.keyboard.press("e")
    expect(page.locator("#edit-summary")).to_be_focused()

    page.click("#edit-down-0")  # the leading hypothesis becomes the second
    expect(page.locator("#edit-statement-1")).to_have_value(hypotheses[0]["statement"])
    page.click("#edit-delete-2")  # the third one goes
    expect(page.locator("li.edit-hypothesis")).to_have_count(len(hypotheses) - 1)
    page.select_option("#edit-band-1", "medium")
    page.select_option("#edit-band", "medium")
    page.fill("#edit-missing", "the basket contents at the time")
    page.fill("#edit-claim-1-1", "The till printer ran out of paper.")
    page.click("button.submit-edit")

    message = page.locator("#decide-message .notice")
    expect(message).to_contain_text("fail the citation check")
    expect(message).to_contain_text("claim 2.2")
    expect(message).to_have_attribute("data-status", "422")
    assert api.get(incident["id"])["status"] == "awaiting_review"
    page.check("#edit-confirm-unsupported")
    page.click("button.submit-edit")
    expect(page.locator("#flash")).to_contain_text("Approved with your edits")

    final = api.get(incident["id"])["final_rca"]
    assert [h["statement"] for h in final["hypotheses"]] == [
        hypotheses[1]["statement"],
        hypotheses[0]["statement"],
        *[h["statement"] for h in hypotheses[3:]],
    ]
    assert final["confidence"] == "medium" and final["hypotheses"][1]["confidence"] == "medium"
    assert final["missing_evidence"] == ["the basket contents at the time"]
    claim = final["hypotheses"][1]["claims"][1]
    assert claim["text"] == "The till printer ran out of paper." and claim["supported"] is False
    expect(page.locator("li.claim.unsupported")).to_contain_text("till printer")


def test_claims_show_everywhere_and_deciding_a_held_incident_asks(
    page: Page, server: str, api: Api
) -> None:
    incident = api.create({**crash_checkout(), "service": f"claims-{uuid.uuid4().hex[:6]}"})
    open_incident(page, server, incident["id"])
    page.click("#claim-button")
    expect(page.locator("#claim-line")).to_contain_text("Claimed by you")
    assert api.get(incident["id"])["assignee"] == "ana"
    expect(page.locator(f"a.inbox-item[data-id='{incident['id']}']")).to_contain_text(
        "claimed by ana"
    )
    with api.client("bob") as http:
        taken = http.post(f"/api/incidents/{incident['id']}/assign", json={"assignee": "bob"})
    assert taken.status_code == 200
    # The next poll notices the new holder.
    expect(page.locator("#claim-line")).to_contain_text("Claimed by bob")
    assigned = [e for e in api.audit(incident["id"]) if e["type"] == "assigned"]
    assert [(e["actor"], e["assignee"]) for e in assigned] == [("ana", "ana"), ("bob", "bob")]

    page.click("#decide-approve")
    page.click("button.submit-approve")
    dialog = page.locator("#confirm-dialog")
    expect(dialog).to_contain_text("bob has claimed this incident")
    page.click("#confirm-no")
    expect(dialog).to_have_count(0)
    assert api.get(incident["id"])["status"] == "awaiting_review"
    page.click("button.submit-approve")
    page.click("#confirm-yes")
    expect(page.locator("#outcome")).to_contain_text("Approved by ana")


def test_a_group_is_decided_at_once_with_one_audit_event_each(
    page: Page, server: str, api: Api
) -> None:
    service = f"burst-{uuid.uuid4().hex[:6]}"
    members = [api.create({**crash_checkout(), "service": service}) for _ in range(4)]
    page.fill("#inbox-filter", service)
    page.check("#inbox-grouped")
    row = page.locator("a.inbox-item.is-group")
    expect(row).to_have_count(1)
    expect(row).to_have_attribute("data-group-size", "4")
    expect(row).to_contain_text("×4")
    row.click()
    expect(page.locator("#group-count")).to_have_text("4 similar incident(s), 4 awaiting review.")
    page.select_option("#group-action", "reject")
    page.click("#group-submit")
    expect(page.locator("#group-message")).to_contain_text("A reason is required")
    page.fill("#group-comment", "one outage, tracked in the parent incident")
    page.click("#group-submit")
    expect(page.locator("#group-result")).to_have_text("4 decided (reject).")
    expect(page.locator("#group-count")).to_have_text("4 similar incident(s), 0 awaiting review.")
    for member in members:
        decisions = [e for e in api.audit(member["id"]) if e["type"] == "decision"]
        assert [(e["action"], e["actor"]) for e in decisions] == [("reject", "ana")]
        assert api.get(member["id"])["status"] == "rejected"


def test_chips_times_and_one_badge_per_state(page: Page, server: str, api: Api) -> None:
    incident = api.create(crash_checkout())
    open_incident(page, server, incident["id"])
    chips = page.locator("#rca button.cite").all_inner_texts()
    assert any(re.fullmatch(r"CO-500 · (Symptoms|Cause|Evidence|Solution)", c) for c in chips), (
        chips
    )
    assert any(re.fullmatch(r"stack line \d+", c) for c in chips), chips
    assert not any(c.startswith("error-doc-") for c in chips), chips
    created = page.locator(".incident-header .meta time").first
    expect(created).to_have_text(re.compile(r"\b(UTC|GMT)\b.* · \d+(s| min| h| d) ago$"))

    abstained = api.create({"message": "the internal wiki shows a blank page", "service": "wiki"})
    assert abstained["rca"]["outcome"] == "insufficient_evidence"
    open_incident(page, server, abstained["id"])
    badges = page.locator(".incident-header .badges .badge")
    expect(badges).to_have_count(2)
    expect(badges.nth(1)).to_have_text("abstained")
    expect(page.locator("#rca > .badges")).to_have_count(0)
    expect(page.locator("#confidence-notice")).to_have_count(1)
    if not abstained["similar_error_docs"]:
        expect(page.locator("#confidence-notice")).to_contain_text("No knowledge doc")


def test_diagnosis_table_and_collected_evidence(page: Page, server: str, api: Api) -> None:
    incident = api.create(crash_checkout())
    diagnosis = incident.get("diagnosis")
    start = 1_764_583_200  # a series of 20 points, rising after the tenth
    collected = [
        {
            "id": "prom:1a2b3c",
            "source": "prometheus",
            "kind": "metric",
            "summary": "5xx ratio of checkout-service rose from 0.2% to 37% at 10:02:11Z",
            "query": 'sum(rate(http_requests_total{service="checkout-service",code=~"5.."}[1m]))',
            "range": {"start": "2025-12-01T10:00:00Z", "end": "2025-12-01T10:19:00Z"},
            "points": [[start + 60 * i, 0.002 if i < 10 else 0.37] for i in range(20)],
            "url": "http://127.0.0.1:9090/graph?g0.expr=up",
        },
        {
            "id": "log:app:12",
            "source": "logs",
            "kind": "log",
            "summary": "ERROR checkout ZeroDivisionError",
            "query": "/var/log/checkout/app.log",
            "range": {"start": "2025-12-01T10:00:00Z", "end": "2025-12-01T10:05:00Z"},
            "lines": [{"number": 12, "text": "ERROR checkout ZeroDivisionError: division by zero"}],
            "file": "/var/log/checkout/app.log",
            "line": 12,
        },
    ]

    def with_collected(route: Route) -> None:
        body = route.fetch().json()
        body["collected_evidence"] = collected
        body["sources_unavailable"] = [{"source": "loki", "reason": "timed out after 2 s"}]
        claim = body["rca"]["hypotheses"][0]["claims"][0]
        claim["evidence"].append({"id": "prom:1a2b3c", "quote": "rose from 0.2% to 37%"})
        route.fulfill(json=body)

    page.route(f"**/api/incidents/{incident['id']}", with_collected)
    open_incident(page, server, incident["id"])
    panel = page.locator("#collected")
    expect(panel.locator("li.collected-item")).to_have_count(2)
    expect(panel.locator("svg.chart")).to_have_count(1)
    expect(panel.locator("svg.chart path.chart-line")).to_have_attribute("d", re.compile("^M"))
    expect(panel.locator("a.graph-link")).to_have_attribute("href", collected[0]["url"])
    expect(panel).to_contain_text("app.log line 12")
    expect(page.locator("#sources-unavailable")).to_contain_text("loki")
    chip = page.locator("#rca button.cite[data-evidence-id='prom:1a2b3c']")
    expect(chip).to_have_text("5xx ratio")
    chip.click()
    expect(page.locator("#evidence svg.chart")).to_be_visible()
    expect(page.locator("#evidence pre.evidence-text mark.cited-quote")).to_have_text(
        "rose from 0.2% to 37%"
    )

    if diagnosis:  # the differential diagnosis, when this build computes one
        table = page.locator("#diagnosis table.diagnosis")
        expect(table.locator("tbody tr")).to_have_count(len(diagnosis["candidates"]))
        first = diagnosis["candidates"][0]
        row = table.locator(f"tbody tr[data-candidate='{first['error_code']}']").first
        for signal in first["confirmed"]:
            expect(row.locator(".signals-confirmed")).to_contain_text(signal["signal"])


def test_shortcut_list_dark_scheme_and_phone_layout(page: Page, server: str, api: Api) -> None:
    incident = api.create(crash_checkout())
    page.locator("#main").focus()
    page.keyboard.press("?")
    dialog = page.locator("#shortcuts-dialog")
    expect(dialog).to_contain_text("approve and open the next incident")
    page.keyboard.press("Escape")
    expect(dialog).to_have_count(0)

    light = page.evaluate("getComputedStyle(document.body).backgroundColor")
    page.emulate_media(color_scheme="dark")
    dark = page.evaluate("getComputedStyle(document.body).backgroundColor")
    assert light != dark and sum(map(int, re.findall(r"\d+", dark)[:3])) < 150, (light, dark)
    page.emulate_media(color_scheme="light")

    page.set_viewport_size({"width": 390, "height": 844})
    open_incident(page, server, incident["id"])
    expect(page.locator("#inbox")).to_be_hidden()
    page.click("#inbox-toggle")
    expect(page.locator("#inbox")).to_be_visible()
    page.click("#inbox-toggle")
    expect(page.locator("#inbox")).to_be_hidden()
    page.locator("#rca button.cite").first.click()
    box = page.locator("#evidence").bounding_box()
    assert box is not None and box["width"] >= 389 and box["height"] >= 843, box
    page.keyboard.press("Escape")
    expect(page.locator("#evidence")).to_be_hidden()


def test_a_wrong_key_says_where_keys_come_from_and_a_right_one_reloads(
    page: Page, server: str, api: Api
) -> None:
    incident = api.create(crash_checkout())
    page.evaluate("localStorage.setItem('rca.apiKey', 'wrong-key-000000000000')")
    page.goto(f"{server}/#/incidents/{incident['id']}")
    dialog = page.locator("#api-key-dialog")
    expect(dialog).to_contain_text("rca setup-local")
    expect(dialog).to_contain_text(".env")
    dialog.get_by_role("button", name="Cancel").click()
    expect(page.locator(".error-panel")).to_contain_text("rca setup-local")
    page.click("#api-key-button")
    page.fill("#api-key-input", KEYS["ana"])
    page.keyboard.press("Enter")
    # The corrected key reloads the open incident: no click on the inbox needed.
    expect(page.locator(f".incident-layout[data-id='{incident['id']}']")).to_be_visible()
    expect(page.locator("#signed-in")).to_have_text("Signed in as ana (reviewer)")


def test_the_queue_explains_a_refused_key(page: Page, server: str) -> None:
    page.evaluate("localStorage.setItem('rca.apiKey', 'wrong-key-000000000000')")
    page.reload()
    page.locator("#api-key-dialog").get_by_role("button", name="Cancel").click()
    problem = page.locator("#key-problem")
    expect(problem).to_contain_text("rca setup-local")
    expect(page.locator("#home-lead")).not_to_have_text("Loading incidents…")
    problem.get_by_role("button", name="Enter API key").click()
    page.fill("#api-key-input", KEYS["ana"])
    page.keyboard.press("Enter")
    expect(problem).to_have_count(0)
    expect(page.locator("#stats")).to_be_visible()


def axe_violations(page: Page) -> list[dict[str, Any]]:
    """Serious and critical axe-core violations on the page as it is."""
    # Evaluated through the DevTools protocol, so the page's CSP does not apply.
    page.evaluate(AXE.read_text(encoding="utf-8"))
    result = page.evaluate("axe.run(document, {resultTypes: ['violations']})")
    return [
        {"id": v["id"], "impact": v["impact"], "nodes": [n["target"] for n in v["nodes"]][:5]}
        for v in result["violations"]
        if v["impact"] in ("serious", "critical")
    ]


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_axe_finds_no_serious_or_critical_violation(
    page: Page, server: str, api: Api, scheme: str
) -> None:
    incident = api.create(crash_checkout())
    page.emulate_media(color_scheme=scheme)
    page.goto(f"{server}/#/")
    expect(page.locator("#stats")).to_be_visible()
    found = axe_violations(page)
    assert found == [], found
    open_incident(page, server, incident["id"])
    page.locator("#rca button.cite").first.click()
    page.click("#decide-edit")
    found = axe_violations(page)
    assert found == [], found
