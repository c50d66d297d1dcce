"""How a report's readings, tickets and labels are read: what counts zero, what is a setting,
what a ticket's header and an alert's labels say about where the report comes from."""

from __future__ import annotations

import pytest

from app.evidence.parse import parse_entries
from app.evidence.services import is_reporting_channel
from app.evidence.signals import STATUS, job_or_pod_names, observe_incident
from app.evidence.subject import named_system
from app.evidence.trouble import (
    NOT_PRODUCTION_RE,
    failure_conditions,
    says_not_live,
    says_nothing_fails,
    shows_trouble,
    states_settled,
)
from app.evidence.zero import counted_zero


@pytest.mark.parametrize(
    "text",
    [
        "gateway 502 count 24h: 0, 5xx 0",
        "503 count (last 1h) = 0",
        "card-gateway INFO 502 rate store=0012 0.0% (5m)",
        "pos-card-gateway INFO 502 rate across estate 0.0%",
        "card-gateway 502 rate 0.02%, baseline 0.03%",
        "pos-api 422 ratio => 0.04% (baseline 0.05%)",
    ],
)
def test_a_status_counted_zero_or_at_its_baseline_is_not_seen(text: str) -> None:
    assert not shows_trouble(text)
    assert not observe_incident({"message": "x", "logs": [text]}).of(STATUS)


def test_a_status_rate_names_the_status_and_a_spike_is_seen() -> None:
    observed = observe_incident({"message": "card-gateway auth 502 rate 31%"})
    assert observed.values(STATUS) == {"502"}
    assert not counted_zero("502 rate across estate 7%", "502")
    assert not counted_zero("5xx rate 40% (baseline 0.1%)", "5xx")


def test_a_latency_well_inside_its_timeout_is_quiet_and_one_near_it_is_not() -> None:
    assert says_nothing_fails("payments p95 0.3s, timeout 10s, error rate 0.1%")
    assert says_nothing_fails("p99 1.8 s vs 1.2 s on stable, client timeout 25 s, 408/504 count 0")
    assert not says_nothing_fails("payments p95 9.8s against a 10s timeout")
    assert not says_nothing_fails("error rate 0.4% (baseline 0.01%)")


def test_quiet_measures_beside_a_status_left_over_do_not_say_all_is_well() -> None:
    assert not says_nothing_fails("card-gateway auth 502 rate 31%, cash tenders 0 errors")
    assert says_nothing_fails("Payment latency and error rates were normal all day")
    # A zero that counts nothing ("div by zero on …", "groter dan 0 zijn") is no reading.
    assert not says_nothing_fails("div by zero on web checkout")
    assert not says_nothing_fails("aantal moet groter dan 0 zijn")


def test_a_structured_lines_duration_is_a_number_not_a_status() -> None:
    line = '{"level":"info","msg":"authorisation approved","status":200,"dur_ms":574}'
    assert not shows_trouble(line)
    assert shows_trouble('{"level":"error","msg":"upstream answered","status":504}')


def test_a_ticket_number_after_the_tool_makes_the_tool_the_channel() -> None:
    assert named_system("Zendesk #771204 - Store 114 Leeds - tills") is None
    assert named_system("Jira is down for everyone") == "jira"


def test_a_team_or_an_assignment_group_is_no_failing_service() -> None:
    assert is_reporting_channel("store-systems")
    assert is_reporting_channel("payments-team")
    assert not is_reporting_channel("systems-api")


def test_an_alerts_job_and_pod_labels_name_its_workload_but_an_exporter_does_not() -> None:
    labels = "alertname=TargetDown job=hr-timeclock pod=hr-timeclock-8b6c7d5f9-wq2zr"
    assert job_or_pod_names(labels) == ["hr-timeclock"]
    assert observe_incident({"message": "TargetDown", "logs": [labels]}).workload == "hr-timeclock"
    assert job_or_pod_names("job=kube-state-metrics pod=recommender-5c7d9-abcde") == ["recommender"]
    # A container label, on any line, names the workload before a pod does.
    lines = ["pod=search-indexer-7b6f9d8c4-p2xkq", "container=indexer"]
    assert observe_incident({"message": "x", "logs": lines}).workload == "indexer"


def test_an_unlevelled_record_with_a_status_comes_before_a_warning_naming_nothing() -> None:
    logs = [
        "2025/04/05 03:00:12 [warn] an upstream response is buffered to a temporary file",
        '10.8.2.41 - - [05/Apr/2025:03:01:17 +0000] "POST /api/chiller/v1/readings HTTP/1.1" '
        "502 157",
    ]
    assert parse_entries(logs).causal_line == logs[1]
    # A warning that names a status still leads.
    named = ["WARN upstream answered 503 for /stock", logs[1]]
    assert parse_entries(named).causal_line == named[0]


def test_a_drills_injected_fault_and_a_staging_record_are_no_production_failure() -> None:
    assert NOT_PRODUCTION_RE.search("payment-client (staging) WARN ReadTimeout after 10s")
    assert NOT_PRODUCTION_RE.search("payment-client WARN ReadTimeout (injected fault)")
    assert not NOT_PRODUCTION_RE.search("payment-service (production) WARN ReadTimeout")


def test_requests_and_no_live_issue_are_no_live_failure() -> None:
    assert says_not_live(
        "Service Request RITM0019934\nShort description: New till login for new starter"
    )
    assert says_not_live(
        "How to tell a quantity 422 from an amount 422? When pos-api rejects a sale with 422, "
        "which field tells me? No live issue, just want the deck right."
    )
    assert says_not_live("Status: Resolved. All tills taking cards again since 09:26.")
    assert not says_not_live("Status: Resolved? No - tills failing again since 10:00.")


def test_a_customer_service_desk_in_a_store_language_is_a_channel() -> None:
    assert is_reporting_channel("kundenservice")
    assert is_reporting_channel("klantenservice")


def test_a_closed_incidents_follow_up_and_a_postmortem_action_are_no_live_failure() -> None:
    assert says_not_live(
        "Re: INC-4402 (payment timeouts, closed Tuesday). Finance asks whether the provider "
        "published their RCA. Not urgent."
    )
    assert says_not_live(
        "Action item from postmortem PM-2291 (CO-500 checkout crash, 2 April): add a unit "
        "test for the empty basket. No current impact."
    )
    assert not says_not_live(
        "Action item from postmortem PM-2291: add a test. But checkout is still failing now"
    )


def test_a_panels_baseline_before_its_value_and_a_limit_beside_a_latency_are_read() -> None:
    assert not shows_trouble("panel=payment-service HTTP 504 share (baseline 0.2%): 0.18%")
    assert shows_trouble("panel=payment-service HTTP 504 share (baseline 0.2%): 4.5%")
    assert says_nothing_fails("authorise p95 (timeout 30s): 1.9s")
    assert says_nothing_fails("auth latency p95: 0.6s (timeout 15s)")
    assert counted_zero("422 rejects by field: lines=4 (baseline 5)", "lines")


def test_name_resolution_and_a_lost_link_are_platform_conditions() -> None:
    assert failure_conditions("web-shop ERROR getaddrinfo ENOTFOUND inventory-api.internal") == [
        "dns"
    ]
    assert failure_conditions("NameResolutionError: Failed to resolve 'api.psp.example'") == ["dns"]
    assert "network outage" in failure_conditions("router ERROR WAN1 (fibre) link down")


def test_a_failure_still_to_come_and_a_readout_asking_what_to_act_on_are_no_live_failure() -> None:
    assert says_not_live("The cert pos-card-gateway-acquirer-mtls is 13 days from expiring.")
    assert says_not_live("Weekly payments readout, nothing paged. Anything we need to act on?")
    assert says_not_live(
        "Spørgsmål til oplæring: hvad skal vi gøre, hvis kortbetaling fejler med 'Bad "
        "Gateway'? Der er ingen fejl lige nu, alt kører normalt."
    )


def test_a_settled_frame_inside_a_question_only_asks() -> None:
    assert not states_settled("Is this real or the planned restart? It was announced.")
    assert states_settled("Planned restart tonight at 22:00, expect 502s.")
