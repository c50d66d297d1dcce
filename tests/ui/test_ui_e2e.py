"""The reviewer UI end to end: real server, real Chromium, decisions checked through the API."""

from __future__ import annotations

import re
import uuid
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

XSS = '<img src=x onerror="window.__xss=1"><script>window.__xss=1</script>'


def checkout_crash() -> dict[str, Any]:
    return crash_checkout()


def quantity_incident() -> dict[str, Any]:
    return {
        "error_code": "POS-422-QTY",
        "message": "sale rejected: quantity must be greater than 0",
        "logs": [
            "2026-11-29T10:00:01Z INFO  pos-api POST /pos/v1/sales",
            "2026-11-29T10:00:01Z ERROR pos-api 422 quantity must be greater than 0",
        ],
        "service": "pos-api",
    }


def open_incident(page: Page, server: str, incident_id: str) -> None:
    page.goto(f"{server}/#/incidents/{incident_id}")
    expect(page.locator(f".incident-layout[data-id='{incident_id}']")).to_be_visible()


def first_citation(incident: dict[str, Any], prefix: str) -> dict[str, Any]:
    for hypothesis in incident["rca"]["hypotheses"]:
        for claim in hypothesis["claims"]:
            for citation in claim["evidence"]:
                if citation["id"].startswith(prefix) and citation.get("quote"):
                    return dict(citation)
    raise AssertionError(f"no citation starting with {prefix!r}")


def test_inbox_shows_the_queue_and_filters_by_status(page: Page, server: str, api: Api) -> None:
    waiting = api.create(checkout_crash())
    decided = api.create(quantity_incident())
    assert api.decide(decided["id"], {"action": "approve", "reviewer": "ana"}).status_code == 200

    page.goto(f"{server}/#/")
    expect(page).to_have_title(re.compile("Inbox"))
    # The queue by default: what awaits review.
    expect(page.locator(f"a.inbox-item[data-id='{waiting['id']}']")).to_be_visible()
    expect(page.locator(f"a.inbox-item[data-id='{decided['id']}']")).to_have_count(0)
    statuses = page.locator("a.inbox-item").evaluate_all("els => els.map(e => e.dataset.status)")
    assert set(statuses) == {"awaiting_review"}, statuses
    page.select_option("#inbox-status", "")
    expect(page.locator(f"a.inbox-item[data-id='{decided['id']}']")).to_contain_text(
        "Approved by ana"
    )
    page.select_option("#inbox-status", "awaiting_review")
    waiting_item = page.locator(f"a.inbox-item[data-id='{waiting['id']}']")
    expect(waiting_item).to_contain_text("CO-500")
    expect(waiting_item).to_contain_text("checkout-service")
    expect(waiting_item.locator(".band")).to_have_attribute(
        "data-band", waiting["rca"]["confidence"]
    )

    waiting_item.click()
    expect(page).to_have_url(re.compile(f"#/incidents/{waiting['id']}$"))
    expect(page.locator("#incident-heading")).to_contain_text("CO-500")
    expect(page).to_have_title(re.compile("CO-500"))


def test_inbox_refreshes_on_its_own(page: Page, server: str, api: Api) -> None:
    page.goto(f"{server}/#/")
    expect(page.locator("#poll-state")).to_have_attribute("data-state", "live")
    created = api.create({**quantity_incident(), "service": "pos-api-polling"})
    expect(page.locator(f"a.inbox-item[data-id='{created['id']}']")).to_be_visible()


def test_a_poll_with_nothing_new_keeps_the_rows_it_shows(page: Page, server: str, api: Api) -> None:
    # A row rebuilt under the pointer between press and release would lose the click.
    service = f"steady-{uuid.uuid4().hex[:6]}"
    created = api.create({**quantity_incident(), "service": service})
    page.goto(f"{server}/#/")
    page.fill("#inbox-filter", service)
    row = page.locator(f"a.inbox-item[data-id='{created['id']}']")
    expect(row).to_be_visible()
    row.evaluate("el => { window.keptRow = el; }")
    state = page.locator("#poll-state")
    first = state.text_content()
    # The next poll (every 4 s) stamps a new time; the row must be the same node after it.
    expect(state).not_to_have_text(first or "", timeout=15_000)
    assert page.evaluate("() => window.keptRow.isConnected")
    # A change still shows: a second incident of the service appears on the next poll.
    second = api.create({**quantity_incident(), "service": service})
    expect(page.locator(f"a.inbox-item[data-id='{second['id']}']")).to_be_visible()


def marked(page: Page, css_class: str) -> str:
    """The text inside every ``mark.<css_class>`` of the evidence pane, joined."""
    return str(
        page.locator(f"#evidence pre.evidence-text mark.{css_class}").evaluate_all(
            "els => els.map(e => e.textContent).join('')"
        )
    )


def test_doc_citation_opens_the_doc_with_the_quote_highlighted(
    page: Page, server: str, api: Api
) -> None:
    incident = api.create(checkout_crash())
    citation = first_citation(incident, "error-doc-")
    doc = next(d for d in incident["similar_error_docs"] if d["id"] == citation["id"])
    open_incident(page, server, incident["id"])

    button = page.locator(f"button.cite[data-evidence-id='{citation['id']}']").first
    button.click()
    pane = page.locator("#evidence")
    expect(pane).to_have_attribute("data-evidence-id", citation["id"])
    expect(pane.locator("mark.cited-quote").first).to_be_visible()
    assert marked(page, "cited-quote") == citation["quote"]
    if citation.get("span"):
        start, end = citation["span"]
        assert marked(page, "cited-span") == doc["content"][start:end]
    if citation.get("support"):
        expect(pane.locator(".verdict")).to_contain_text("Citation check:")
    expect(pane.locator("pre.evidence-text")).to_have_text(doc["content"])
    expect(button).to_have_attribute("aria-pressed", "true")

    page.keyboard.press("Escape")
    expect(pane.locator("mark")).to_have_count(0)


def test_incident_line_citation_highlights_the_quote_in_that_line(
    page: Page, server: str, api: Api
) -> None:
    incident = api.create(checkout_crash())
    citation = first_citation(incident, "incident:stack:")
    line = int(citation["id"].rsplit(":", 1)[1])
    stack_line = incident["incident"]["stack_trace"].splitlines()[line - 1]
    open_incident(page, server, incident["id"])

    page.locator(f"button.cite[data-evidence-id='{citation['id']}']").first.click()
    pane = page.locator("#evidence")
    expect(pane.locator(".cited-item")).to_have_text(stack_line)
    assert marked(page, "cited-quote") == citation["quote"]
    if citation.get("span"):
        start, end = citation["span"]
        assert marked(page, "cited-span") == stack_line[start:end]
    expect(page.locator(f"#incident .line[data-evidence-id='{citation['id']}']")).to_have_class(
        re.compile("is-cited")
    )


def test_citation_span_is_used_when_present(page: Page, server: str, api: Api) -> None:
    incident = api.create(checkout_crash())
    citation = first_citation(incident, "error-doc-")
    doc = next(d for d in incident["similar_error_docs"] if d["id"] == citation["id"])
    start = doc["content"].index(":") + 2
    end = start + 20

    def with_span(route: Route) -> None:
        body = route.fetch().json()
        for hypothesis in body["rca"]["hypotheses"]:
            for claim in hypothesis["claims"]:
                for cited in claim["evidence"]:
                    if cited["id"] == citation["id"]:
                        cited["span"] = [start, end]
        route.fulfill(json=body)

    page.route(f"**/api/incidents/{incident['id']}", with_span)
    open_incident(page, server, incident["id"])
    page.locator(f"button.cite[data-evidence-id='{citation['id']}']").first.click()
    expect(page.locator("#evidence mark.cited-span").first).to_be_visible()
    assert marked(page, "cited-span") == doc["content"][start:end]
    expect(page.locator("#evidence .match")).to_contain_text("citation check found")


def test_approve(page: Page, server: str, api: Api) -> None:
    incident = api.create(checkout_crash())
    open_incident(page, server, incident["id"])

    page.click("#decide-approve")
    page.fill("#approve-comment", "matches the traceback")
    page.click("button.submit-approve")

    expect(page.locator("#flash")).to_have_text("Approved.")
    expect(page.locator("#flash")).to_be_focused()
    expect(page.locator(".incident-header .badge[data-status]")).to_have_text("Approved")
    expect(page.locator("#outcome")).to_contain_text("Approved by ana")
    expect(page.locator("#decide")).to_have_count(0)
    expect(page.locator("#rca-title")).to_have_text("Approved RCA")
    after = api.get(incident["id"])
    assert after["status"] == "approved"
    assert after["decision"]["reviewer"] == "ana"
    assert after["final_rca"] == incident["rca"]
    # It left the queue; the approved list has it.
    expect(page.locator(f"a.inbox-item[data-id='{incident['id']}']")).to_have_count(0)
    page.select_option("#inbox-status", "approved")
    expect(page.locator(f"a.inbox-item[data-id='{incident['id']}']")).to_have_attribute(
        "data-status", "approved"
    )


def test_reject_needs_a_reason(page: Page, server: str, api: Api) -> None:
    incident = api.create(checkout_crash())
    no_reason = api.decide(incident["id"], {"action": "reject", "reviewer": "ana"})
    assert no_reason.status_code == 422
    assert "comment" in no_reason.json()["error"]["message"]

    open_incident(page, server, incident["id"])
    page.locator("#main").focus()
    page.keyboard.press("r")  # shortcut: opens the reject form with the reason focused
    expect(page.locator("#reject-reason")).to_be_focused()
    page.click("button.submit-reject")
    expect(page.locator("#decide-message")).to_contain_text("A reason is required")
    expect(page.locator("#reject-reason")).to_have_attribute("aria-invalid", "true")
    assert api.get(incident["id"])["status"] == "awaiting_review"

    page.fill("#reject-reason", "wrong family: the till API, not the web shop")
    page.click("button.submit-reject")
    expect(page.locator("#flash")).to_have_text("Rejected.")
    expect(page.locator("#outcome")).to_contain_text("Rejected by ana")
    expect(page.locator("#outcome")).to_contain_text("wrong family")
    after = api.get(incident["id"])
    assert after["status"] == "rejected"
    assert after["decision"]["comment"] == "wrong family: the till API, not the web shop"


def test_edit_and_approve_shows_the_diff(page: Page, server: str, api: Api) -> None:
    incident = api.create(checkout_crash())
    original = incident["rca"]["summary"]
    edited = "Empty basket makes calculate_discount divide by zero (confirmed in the trace)."
    open_incident(page, server, incident["id"])

    page.click("#decide-edit")
    page.fill("#edit-summary", edited)
    page.fill("#edit-remediation", "Guard the divisor\nAdd an empty-basket unit test")
    preview = page.locator("#form-edit .edit-preview")
    expect(preview.locator("ins.diff-add").first).to_contain_text(f"Summary: {edited}")
    page.click("button.submit-edit")

    expect(page.locator("#flash")).to_contain_text("Approved with your edits")
    expect(page.locator("#outcome")).to_contain_text("Approved with edits by ana")
    # The page shows what was decided; the original draft is one click away.
    expect(page.locator("#rca-title")).to_have_text("Approved RCA (edited)")
    expect(page.locator("#rca-summary")).to_have_text(edited)
    original_draft = page.locator("#original-draft")
    expect(original_draft.locator("del.diff-del").first).not_to_be_visible()
    original_draft.locator("summary").click()
    expect(original_draft.locator("del.diff-del").first).to_contain_text(f"Summary: {original}")
    expect(original_draft.locator("ins.diff-add").first).to_contain_text(f"Summary: {edited}")
    expect(
        original_draft.locator("ins.diff-add", has_text="Add an empty-basket unit test")
    ).to_have_count(1)
    expect(original_draft.locator(".original-body")).to_contain_text(original)
    expect(page.locator(".incident-header .badge[data-status]")).to_have_text("Approved with edits")
    page.select_option("#inbox-status", "approved")
    expect(page.locator(f"a.inbox-item[data-id='{incident['id']}']")).to_contain_text(
        "Approved with edits by ana"
    )

    after = api.get(incident["id"])
    assert after["status"] == "approved"
    assert after["rca"]["summary"] == original
    assert after["final_rca"]["summary"] == edited
    assert after["final_rca"]["remediation"] == [
        "Guard the divisor",
        "Add an empty-basket unit test",
    ]
    # The rest of the draft went back untouched.
    assert after["final_rca"]["hypotheses"] == incident["rca"]["hypotheses"]


def test_audit_trail_in_the_page_and_the_api(page: Page, server: str, api: Api) -> None:
    incident = api.create(checkout_crash())
    edited_rca = {**incident["rca"], "summary": "Edited for the audit test."}
    decision = {"action": "edit", "reviewer": "ana", "comment": "tightened", "rca": edited_rca}
    assert api.decide(incident["id"], decision).status_code == 200

    events = api.audit(incident["id"])
    assert [e["type"] for e in events] == ["created", "draft", "decision"]
    assert events[-1]["actor"] == "ana"
    assert events[-1]["action"] == "edit"
    assert events[-1]["original_rca"]["summary"] == incident["rca"]["summary"]
    assert events[-1]["edited_rca"]["summary"] == "Edited for the audit test."

    open_incident(page, server, incident["id"])
    audit = page.locator("#audit")
    expect(audit.locator("li.event")).to_have_count(3)
    expect(audit.locator("li.event").nth(0)).to_contain_text("Incident created")
    expect(audit.locator("li.event").nth(1)).to_contain_text("Draft written")
    decision_event = audit.locator("li.event[data-type='decision']")
    expect(decision_event).to_contain_text("Decision: edit by ana")
    expect(decision_event).to_contain_text("tightened")
    expect(decision_event.locator("ins.diff-add")).to_contain_text("Edited for the audit test.")


def test_incident_text_is_shown_literally_and_never_runs(page: Page, server: str, api: Api) -> None:
    incident = api.create(
        {"message": XSS, "service": "<b>svc</b>", "logs": [XSS], "stack_trace": XSS}
    )
    open_incident(page, server, incident["id"])

    expect(page.locator("#incident-message")).to_have_text(XSS)
    expect(page.locator("#incident pre.logs .line")).to_have_text(XSS)
    expect(page.locator(".incident-header .meta")).to_contain_text("<b>svc</b>")
    expect(page.locator(f"a.inbox-item[data-id='{incident['id']}']")).to_contain_text("<b>svc</b>")
    assert page.locator("#main img, #inbox img, #main script, #main b").count() == 0
    citation = page.locator("button.cite[data-evidence-id='incident:message']")
    if citation.count():
        citation.first.click()
        expect(page.locator("#evidence pre.evidence-text")).to_contain_text(XSS)
    assert page.evaluate("typeof window.__xss") == "undefined"


def test_reanalysis_with_added_logs_makes_a_second_draft(page: Page, server: str, api: Api) -> None:
    incident = api.create(checkout_crash())
    added = [
        "2026-11-29T10:00:02Z ERROR checkout basket 991 has 0 qualifying units",
        "2026-11-29T10:00:02Z WARN  checkout promotion SPRING-10 applied to empty basket",
    ]
    open_incident(page, server, incident["id"])

    page.click("#decide-reanalyze")
    page.fill("#reanalyze-comment", "check with the checkout logs")
    page.fill("#reanalyze-logs", "\n".join(added))
    page.fill("#reanalyze-note", "the basket was empty")
    page.click("button.submit-reanalyze")

    expect(page.locator("#flash")).to_contain_text("re-analysis")
    expect(page.locator("#drafts")).to_contain_text("Earlier drafts (1)")
    expect(page.locator("#rca-title")).to_have_text("RCA draft 2")
    expect(page.locator(".incident-header .badge[data-status]")).to_have_text("Awaiting review")
    expect(page.locator("#incident pre.logs")).to_contain_text(added[0])
    expect(page.locator("#incident")).to_contain_text("the basket was empty")
    expect(page.locator("#decide")).to_be_visible()

    after = api.get(incident["id"])
    assert after["status"] == "awaiting_review"
    assert len(after["drafts"]) == 1
    assert after["drafts"][0] == incident["rca"]
    assert after["incident"]["logs"][-2:] == added


def test_second_reviewer_sees_the_conflict(page: Page, server: str, api: Api) -> None:
    incident = api.create(checkout_crash())
    open_incident(page, server, incident["id"])
    page.click("#decide-approve")
    # Meanwhile another reviewer decides.
    assert api.decide(incident["id"], {"action": "approve", "reviewer": "bob"}).status_code == 200

    page.click("button.submit-approve")
    message = page.locator("#decide-message .notice")
    expect(message).to_contain_text("already decided (approved) by bob")
    expect(message).to_have_attribute("data-status", "409")
    message.get_by_role("button", name="Reload").click()
    expect(page.locator("#outcome")).to_contain_text("Approved by bob")


def test_api_key_is_asked_for_on_401_and_then_sent(page: Page, server: str) -> None:
    page.evaluate("localStorage.removeItem('rca.apiKey')")
    page.reload()
    dialog = page.locator("#api-key-dialog")
    expect(dialog).to_be_visible()
    expect(dialog).to_contain_text("missing or invalid API key")
    expect(page.locator("#api-key-input")).to_be_focused()
    page.fill("#api-key-input", "not-a-valid-key-at-all")
    page.keyboard.press("Enter")
    # Refused again: no second prompt, the API's message instead.
    expect(dialog).to_have_count(0)
    expect(page.locator("#inbox-error")).to_contain_text("missing or invalid API key")

    page.click("#api-key-button")
    expect(dialog).to_be_visible()
    page.fill("#api-key-input", KEYS["bob"])
    page.keyboard.press("Enter")
    expect(dialog).to_have_count(0)
    expect(page.locator("#poll-state")).to_have_attribute("data-state", "live")
    expect(page.locator("#inbox-error")).to_be_hidden()
    assert page.evaluate("localStorage.getItem('rca.apiKey')") == KEYS["bob"]


def test_decisions_are_recorded_under_the_api_key_identity(
    page: Page, server: str, api: Api
) -> None:
    incident = api.create(checkout_crash())
    open_incident(page, server, incident["id"])
    expect(page.locator("#deciding-as")).to_contain_text("recorded as ana")
    page.click("#decide-approve")
    page.click("button.submit-approve")
    expect(page.locator("#outcome")).to_contain_text("Approved by ana")
    assert api.get(incident["id"])["decision"]["reviewer"] == "ana"


def test_with_a_key_the_page_names_the_key_instead_of_asking(page: Page) -> None:
    # The API records the key's name, so a typed name would be ignored: none is asked for.
    expect(page.locator("#signed-in")).to_have_text("Signed in as ana (reviewer)")
    expect(page.locator("#reviewer-name")).to_be_hidden()


def test_dropped_citations_unsupported_claims_and_past_incidents_are_shown(
    page: Page, server: str, api: Api
) -> None:
    incident = api.create(checkout_crash())
    other = api.create(quantity_incident())

    def flagged(route: Route) -> None:
        body = route.fetch().json()
        claim = body["rca"]["hypotheses"][0]["claims"][0]
        claim["evidence"], claim["supported"] = [], False
        body["dropped_evidence_ids"] = ["error-doc-invented"]
        body["unsupported_citations"] = [
            {
                "claim": "The till printer caused it.",
                "id": "incident:message",
                "quote": "",
                "support": "unsupported",
                "score": 0.12,
                "span": [0, 17],
            }
        ]
        body["similar_past_incidents"] = [
            {
                "incident_id": other["id"],
                "error_code": "POS-422-QTY",
                "summary": "<i>quantity</i> zero",
                "similarity": 0.71,
                "decided_at": "2026-11-29T10:00:00+00:00",
            }
        ]
        route.fulfill(json=body)

    page.route(f"**/api/incidents/{incident['id']}", flagged)
    open_incident(page, server, incident["id"])

    expect(page.locator("#dropped-citations")).to_contain_text("1 citation(s) dropped")
    expect(page.locator("#dropped-citations")).to_contain_text("error-doc-invented")
    removed = page.locator("#removed-citations")
    expect(removed).to_contain_text("1 citation(s) removed by the citation check")
    expect(removed).to_contain_text("The till printer caused it.")
    removed.get_by_role("button").click()
    expect(page.locator("#evidence .verdict")).to_contain_text("not supported")
    assert marked(page, "cited-span") == incident["incident"]["message"][:17]
    unsupported = page.locator("li.claim.unsupported")
    expect(unsupported).to_have_count(1)
    expect(unsupported).to_contain_text("unsupported")
    expect(page.locator("#rca .badges")).to_contain_text("1 unsupported claim(s)")
    past = page.locator("#past")
    expect(past).to_contain_text("Similar past incidents (1)")
    expect(past).to_contain_text("<i>quantity</i> zero")
    past.get_by_role("link", name="POS-422-QTY").click()
    expect(page.locator(f".incident-layout[data-id='{other['id']}']")).to_be_visible()


def test_similar_docs_show_scores_and_why_they_ranked(page: Page, server: str, api: Api) -> None:
    incident = api.create(checkout_crash())
    open_incident(page, server, incident["id"])
    docs = page.locator("#docs li.doc")
    expect(docs).to_have_count(len(incident["similar_error_docs"]))
    first = incident["similar_error_docs"][0]
    card = page.locator(f"#docs li.doc[data-doc-id='{first['id']}']")
    expect(card.locator("pre.doc-content")).to_have_text(first["content"])
    expect(card.locator("table.why")).to_contain_text("Dense rank")
    expect(card.locator("table.why")).to_contain_text("Fused score")
    expect(card).to_contain_text(f"similarity {first['similarity']:.3f}")
    labels = [
        f"{h + 1}.{c + 1}"
        for h, hypothesis in enumerate(incident["rca"]["hypotheses"])
        for c, claim in enumerate(hypothesis["claims"])
        if any(e["id"] == first["id"] for e in claim["evidence"])
    ]
    cited = f"Cited by claim(s) {', '.join(labels)}" if labels else "Not cited by the draft."
    expect(card).to_contain_text(cited)
