"""The well-known third-party system a report says is in trouble."""

import pytest

from app.evidence.subject import named_system


@pytest.mark.parametrize(
    ("message", "system"),
    [
        ("Jira returns 502 Bad Gateway", "jira"),
        ("the VPN gateway returns 502", "vpn"),
        ("Slack lunch bot replies 'invalid quantity' when ordering", "slack"),
        ("503 from Keycloak since 09:00", "keycloak"),
        ("ZeroDivisionError: division by zero in the finance team's pandas notebook", "pandas"),
        ("guest Wi-Fi portal down", "wi-fi"),
        # A monitoring tool that fails, rather than shows a failure.
        ("Grafana behind nginx: 502 Bad Gateway, upstream prematurely closed", "grafana"),
        ("Grafana is down for everyone", "grafana"),
        ("Kibana returns 503 since the upgrade", "kibana"),
        ("Prometheus is down, no scrapes since 10:00", "prometheus"),
        ("Datadog agent crash-looping on the POS hosts", "datadog"),
        ("Grafana: chiller temperatures flat since 03:00", None),
        ("Grafana dashboard for the fridges is empty", None),
        ("Prometheus alert: InventoryServiceDown", None),
        # Not named where the subject is, or not a third-party product.
        ("checkout 500 after the Jira ticket was closed", None),
        ("Grafana shows chiller temperatures flat", None),
        ("Kubernetes restarted the chiller pod", None),
        ("tills down", None),
        # After a label the report opens with.
        ("resolved: Jira back after the weekend reindex, 503s gone", "jira"),
        ("FYI - Vault sealed again after the restart", "vault"),
        ("[update] Jira slow for everyone", "jira"),
        ("resolved: inventory back, 503s gone", None),
        ("PagerDuty: [FIRING:1] HighErrorRate checkout-service", None),
        # Kinds of system the estate runs beside the covered ones.
        ("Blue Yonder WMS inventory sync job failing since 04:00", "wms"),
        ("EcoStruxure BMS web UI returns 502 Bad Gateway for the chiller plant page", "bms"),
        ("payroll export fails with 503", "payroll"),
        ("inventory sync to the tills failing since 04:00", None),
        # The tool a report came through, named before its ticket or thread, is no subject.
        ("ServiceNow INC0051277\nShort description: checkout 500", None),
        ("Jira ticket OPS-4411: tills reject every sale", None),
        ("Slack thread from #stores: fridge readings missing", None),
        ("ServiceNow is slow for everyone", "servicenow"),
        ("Teams - Till Support chat\nMonika: tills reject every sale", None),
        ("Teams - calls drop after 5 minutes for every store", "teams"),
    ],
)
def test_the_system_is_read_where_a_report_names_its_subject(
    message: str, system: str | None
) -> None:
    assert named_system(message) == system


def test_another_capabilitys_system_is_named_by_its_host_or_service() -> None:
    from app.evidence.subject import foreign_systems

    known = frozenset({"payment", "payments", "inventory", "checkout"})
    tax = "POST https://api.taxwise-vat.example/v1/transactions ReadTimeout (read timeout=30s)"
    assert foreign_systems(tax, known) == ["api.taxwise-vat.example"]
    loyalty = "outbound host=api.pointshub-loyalty.example path=/v1/points/redeem ReadTimeout"
    assert foreign_systems(loyalty, known) == ["api.pointshub-loyalty.example"]
    pool = "ERROR loyalty-service GET /v1/members/5/points -> 503: QueuePool limit reached"
    assert foreign_systems(pool, known) == ["loyalty-service"]
    # The family's own provider, code and a capability a doc covers are no other system.
    own = "POST https://api.paynova-payments.example/v1/payments/authorise ReadTimeout"
    assert foreign_systems(own, known) == []
    java = 'NullPointerException: Cannot invoke "com.retail.pos.loyalty.LoyaltyCard.getTier()"'
    assert foreign_systems(java, known) == []
    assert foreign_systems('File "/app/reports.py", line 3', known) == []
    assert foreign_systems("ERROR search-api 503", known | {"search"}) == []
    # A name with a part of a family's service name is that family's, whatever else it says.
    claimed = frozenset({"payment", "card", "inventory"})
    assert foreign_systems("ERROR payment-auth 504", known, claimed) == []
    assert foreign_systems("ERROR auth-service POST /oauth/token 500", known, claimed) == [
        "auth-service"
    ]
    # A label printer's spooler is another system, the shop's own words aside.
    spooler = "WARN print-spooler-store503 job 88121 to 10.53.0.41:5022 failed: connection refused"
    assert foreign_systems(spooler, known) == ["print-spooler-store503"]
    receipts = "pos-api e-receipt-client POST http://ereceipt-svc.internal/v1/receipts -> 503"
    assert foreign_systems(receipts, known) == ["e-receipt-client", "ereceipt-svc.internal"]


def test_a_thread_in_brackets_is_no_system() -> None:
    from app.evidence.subject import system_names

    spring = (
        "2024-05-30 16:12:42.779  WARN 7 --- [io-8443-exec-5] c.a.pos.api.ValidationAdvice : "
        "422 UNPROCESSABLE_ENTITY violations=[lines[2].plu is required]"
    )
    assert system_names(spring) == []
    for thread in ("http-nio-8080-exec-3", "pool-2-thread-1", "scheduling-1"):
        assert system_names(f"INFO [{thread}] c.r.Job : done") == [], thread
    assert system_names("ERROR [worker-7] stock-sync-worker-2 failed") == ["stock-sync-worker-2"]
    # Nor is the expression a fault's message quotes.
    npe = 'NullPointerException: Cannot invoke "LoyaltyCard.getId()" because "sale.loyalty" is null'
    assert system_names(npe) == []
