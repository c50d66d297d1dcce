"""Observed signals: one test per signal kind, evidence ids, weak INFO lines, code sources."""

from __future__ import annotations

import pytest

from app.evidence.signals import (
    CODE,
    EXCEPTION,
    FIELD,
    FILE,
    IDENTIFIER,
    MESSAGE,
    PATH,
    STATUS,
    STATUS_CLASS,
    exception_kind,
    exception_types,
    files,
    identifiers,
    incident_texts,
    is_routine,
    item_shows_trouble,
    observe_incident,
    path_matches,
    paths,
    site_hosts,
    url_hosts,
    workload_names,
)
from app.evidence.statuses import statuses
from app.evidence.trouble import failure_conditions, says_nothing_fails, shows_trouble
from app.evidence.wording import contains_phrase, words


def test_exception_types_use_the_last_dotted_part() -> None:
    text = "requests.exceptions.ReadTimeout: read timed out; then java.lang.NullPointerException"
    assert exception_types(text) == ["ReadTimeout", "NullPointerException"]
    assert exception_types("an Error happened") == []


def test_statuses_as_logs_phrases_and_bare_numbers() -> None:
    assert statuses("POST /pos/v1/sales -> 422: lines must not be empty") == [422]
    assert statuses("gateway answering bad gateway") == [502]
    assert statuses("408/504 status") == [408, 504]
    assert statuses("inventory unavailable (503) returned") == [503]
    assert statuses("checkout-service answered") == []
    # A number after a word that names what it numbers is an id, wherever the line goes on.
    assert statuses("pos-api INFO till 3 opened by operator 541") == []
    assert statuses("inventory-service answered 503") == [503]
    # Counted in the plural, or followed by what they are.
    assert statuses("tills getting 503s since 9") == [503]
    assert statuses("429s from the psp") == [429]
    assert statuses("seeing 502 errors at the gateway") == [502]
    assert statuses("retry after 500s, took 400s to finish") == []  # durations
    # An access log's byte count after the status is a size.
    assert statuses('10.1.2.7 "POST /pos/v1/sales HTTP/1.1" 201 422 "-" "till/4.3"') == []
    assert statuses('10.8.3.7 "POST /checkout HTTP/1.1" 500 141') == [500]


def test_statuses_in_the_languages_reports_arrive_in() -> None:
    # In a reporter's sentence, where a lone number is never read as a status.
    def said(text: str) -> list[int]:
        return statuses(text, bare=False)

    assert said("Kassorna kan inte hämta priser - 503 från PLU-tjänsten") == [503]
    assert said("Kasse zeigt 503-Fehler beim Scannen") == [503]
    assert said("erreur 502 sur les terminaux de carte") == [502]
    assert said("error 503 again on stock") == [503]
    # A store's or a version's number stays a number.
    assert said("Filiale 503 meldet Druckerfehler") == []
    assert said("error 500.3 in the installer") == []
    # A threshold is no status: "queue depth 48,112 (baseline <500)".
    assert statuses("esl_update_queue_depth => 48,112 (baseline <500)") == []


def test_reason_phrases_count_only_when_written_as_statuses() -> None:
    # Plain English in a reporter's sentence is not an HTTP status.
    assert statuses("fridge temps gone, store 12", bare=False) == []
    assert statuses("after the stock sync conflict, lookups fail", bare=False) == []
    assert statuses("payments not found in reconciliation", bare=False) == []
    # Capitals, a number or HTTP in front, or HTTP jargon make it one.
    assert statuses("the shop says Not Found", bare=False) == [404]
    assert statuses("HTTP 410 gone for old links", bare=False) == [410]
    assert statuses("an internal server error from the POS backend", bare=False) == [500]
    # Log lines read the same way: "not found" in a warning is English, "Not Found" a status.
    assert statuses("WARN feature flag 'new-promo-banner' not found, using default") == []
    assert statuses("upstream answered Gone") == [410]
    assert statuses("GET /v1/stock/9 404 not found") == [404]


def test_bare_numbers_that_are_not_statuses_do_not_count() -> None:
    assert statuses("code CO-500 at store 0051 took 2210ms, 130 reads, size 30, port=443") == []
    assert statuses("quantity 450 items") == []
    assert statuses("the 422 is bad", bare=False) == []
    # What a service does with it, in a sentence, is a status; what it returns in rows is not.
    assert statuses("the payment provider returns 502 to us", bare=False) == [502]
    assert statuses("checkout throws a 500", bare=False) == [500]
    assert statuses("the export returns 500 rows", bare=False) == []


def test_paths_from_text_and_urls_ignore_hosts_and_queries() -> None:
    assert paths("POST /checkout failed") == ["/checkout"]
    found = paths('GET http://plu-service:8080/v2/price/731104 -> 503 "/x?y=1"')
    assert "/v2/price/731104" in found
    assert path_matches("/v2/price", "/v2/price/731104")
    assert not path_matches("/checkout", "/checkout/reserve")


def test_url_hosts_files_and_identifiers() -> None:
    assert url_hosts("GET http://inventory-service:8080/v1/stock") == ("inventory-service",)
    assert files('File "/app/checkout_service.py", line 88') == ["checkout_service.py"]
    assert files("at com.pos.CheckoutHandler.apply(CheckoutHandler.java:188)") == [
        "checkouthandler.java"
    ]
    assert identifiers("in apply_discount of checkout_service.py") == ["apply_discount"]


def test_phrases_match_word_by_word_in_order_with_any_number() -> None:
    line = words("QueuePool limit of size 10 overflow 5 reached, connection timed out")
    assert contains_phrase(line, words("QueuePool limit reached"))
    assert not contains_phrase(line, words("reached QueuePool"))
    assert contains_phrase(
        words("total 31.47 does not equal sum of lines 31.48"),
        words("total 19.99 does not equal sum of lines 20.00"),
    )


def test_every_piece_gets_its_citable_id_and_source() -> None:
    incident = {
        "service": "pos-api",
        "error_code": "POS-422-QTY",
        "event": "pos.sale_rejected",
        "message": "sale rejected",
        "stack_trace": "line one\n\nline three",
        "logs": ["INFO a", "", "ERROR c"],
    }
    collected = [{"id": "log:pos.log:7", "kind": "log", "summary": "1 error", "lines": []}]
    items = incident_texts(incident, collected)
    assert [i.id for i in items] == [
        "incident:service",
        "incident:error_code",
        "incident:event",
        "incident:message",
        "incident:stack:1",
        "incident:stack:3",
        "incident:log:1",
        "incident:log:3",
        "log:pos.log:7",
    ]
    assert items[0].source == FIELD and items[3].source == MESSAGE
    assert [i.weak for i in items if i.id.startswith("incident:log:")] == [True, False]


def test_observations_tie_each_signal_to_its_evidence_id() -> None:
    incident = {
        "error_code": "co-500",
        "message": "checkout broken, maybe PAY-408?",
        "stack_trace": (
            'File "/app/checkout_service.py", line 88, in apply_discount\n'
            "ZeroDivisionError: division by zero"
        ),
        "logs": ["ERROR POST /checkout -> 500"],
    }
    observed = observe_incident(incident)
    by_kind = {
        kind: {(o.value, o.evidence_id) for o in observed.of(kind)}
        for kind in (CODE, EXCEPTION, FILE, IDENTIFIER, PATH, STATUS, STATUS_CLASS)
    }
    assert ("CO-500", "incident:error_code") in by_kind[CODE]
    assert ("PAY-408", "incident:message") in by_kind[CODE]
    assert by_kind[EXCEPTION] == {("ZeroDivisionError", "incident:stack:2")}
    assert by_kind[FILE] == {("checkout_service.py", "incident:stack:1")}
    assert ("apply_discount", "incident:stack:1") in by_kind[IDENTIFIER]
    assert by_kind[PATH] == {("/checkout", "incident:log:1")}
    assert by_kind[STATUS] == {("500", "incident:log:1")}
    assert by_kind[STATUS_CLASS] == {("5xx", "incident:log:1")}
    message_code = next(o for o in observed.of(CODE) if o.value == "PAY-408")
    assert message_code.source == MESSAGE


def test_collected_items_are_observed_under_their_own_ids() -> None:
    collected = [
        {
            "id": "prom:abc",
            "kind": "metric",
            "summary": "5xx ratio of checkout rose; HTTP 503 Service Unavailable",
        }
    ]
    observed = observe_incident({"message": "slow"}, collected)
    assert ("503", "prom:abc") in {(o.value, o.evidence_id) for o in observed.of(STATUS)}


def test_a_bare_number_between_plain_words_in_a_log_is_not_a_status() -> None:
    assert statuses("INFO  store 500 till 4 opened by operator 17") == []
    assert statuses("ERROR upstream returned 502 in 3ms") == [502]
    assert statuses("ERROR sale rejected 422: total off by one") == [422]


def test_a_code_a_log_line_mentions_in_prose_is_only_a_hint() -> None:
    observed = observe_incident(
        {
            "message": "card payments failing",
            "logs": ["WARN  opsbot: this looks like CO-500 again", "ERROR [PAY-408] timed out"],
        }
    )
    sources = {o.value: o.source for o in observed.of(CODE)}
    assert sources == {"CO-500": MESSAGE, "PAY-408": "log"}


def test_an_alertmanager_title_as_the_message_is_a_record() -> None:
    title = "[FIRING:2] HighErrorRate (job=plu code=503 severity=page) error ratio 0.31"
    items = {i.id: i for i in incident_texts({"message": title})}
    assert items["incident:message"].source != MESSAGE
    prose = {i.id: i for i in incident_texts({"message": "plu lookups fail, 503"})}
    assert prose["incident:message"].source == MESSAGE


def test_failure_conditions_of_the_platform() -> None:
    assert failure_conditions("inventory-service disk full on /var/log") == ["disk full"]
    assert failure_conditions("BMS AHU-3 fan VFD fault F0004 (undervoltage)") == ["equipment fault"]
    assert failure_conditions("write failed: No space left on device") == ["disk full"]
    assert failure_conditions("Killed process 4121 (python) (OOM)") == ["out of memory"]
    assert failure_conditions("Back-off pulling image: ImagePullBackOff") == ["image pull failure"]
    assert failure_conditions("0/3 nodes available: Insufficient cpu") == ["unschedulable"]
    assert failure_conditions("x509: certificate has expired") == ["certificate"]
    cert = ["certificate"]
    assert failure_conditions("TLS cert for api.shop.example expired at 00:00") == cert
    assert failure_conditions("browsers show NET::ERR_CERT_DATE_INVALID") == cert
    assert failure_conditions("expired certificate on the intranet") == cert
    assert failure_conditions("receipt printer on till 2 jammed") == ["equipment fault"]
    assert failure_conditions("DNS outage at our provider for 20 min") == ["dns"]
    network = ["network outage"]
    assert failure_conditions("store 14 lost connectivity entirely (router down)") == network
    assert failure_conditions("store network down since 9") == network
    assert failure_conditions("acquirer network down") == []  # the card family's own hop
    assert failure_conditions("429 Too Many Requests") == ["rate limit"]
    assert failure_conditions("payment provider timed out after 30 s") == []
    assert failure_conditions("compressor high pressure fault") == ["equipment fault"]
    assert failure_conditions("receipt printer out of paper on till 3") == ["equipment fault"]
    assert failure_conditions("connection leak in the pool, memory leak suspected") == []
    assert failure_conditions("deploy pipeline failed at the lint step") == ["build failure"]
    assert failure_conditions("chiller door left open overnight") == ["equipment fault"]
    equipment_field = "ALARM unit=walkin-2 compressor_fault=true high_temp=true"
    assert failure_conditions(equipment_field) == ["equipment fault"]
    assert failure_conditions("Kühlraum zu warm, Kompressor-Alarm") == ["equipment fault"]
    sql_client = (
        "System.InvalidOperationException: Timeout expired. The timeout period elapsed prior to "
        "obtaining a connection from the pool. All pooled connections were in use and max pool "
        "size was reached."
    )
    assert failure_conditions(sql_client) == ["connection pool exhausted"]
    assert failure_conditions("till 2 receipt printer not printing") == ["equipment fault"]
    assert failure_conditions("display says 'cover open'") == ["equipment fault"]
    pool = ["connection pool exhausted"]
    assert failure_conditions("HikariPool-1 - Connection is not available, timed out") == pool
    assert failure_conditions("FATAL:  sorry, too many clients already") == pool
    assert failure_conditions("QueuePool limit of size 10 overflow 5 reached") == pool
    assert failure_conditions("callers log a pool exhaustion error") == pool
    assert failure_conditions("worker pool busy, 3 tasks queued") == []
    assert failure_conditions("card declined: insufficient funds") == ["issuer decline"]
    assert failure_conditions("PLU returns last week's promo prices") == ["wrong data"]
    assert failure_conditions("stock counts wrong after the nightly sync") == ["wrong data"]
    assert failure_conditions("sale total wrong by a cent, 422 mismatch") == []
    assert failure_conditions("checkout 500s since the 14:05 deploy") == []
    # A service's own feature failing in a way no doc names: each a failure of its own.
    auth = ["authentication"]
    assert failure_conditions("PSP webhooks failing signature verification") == auth
    assert failure_conditions("rejected: invalid webhook signature") == auth
    too_large = ["payload too large"]
    assert failure_conditions("600+ lines rejected with 413 Payload Too Large") == too_large
    assert failure_conditions("import rejected: CSV header mismatch") == ["malformed input"]
    assert failure_conditions("file header looks fine, 422 on lines") == []
    blank = ["browser rendering"]
    assert failure_conditions("3-D Secure iframe renders blank in Safari 17") == blank
    duplicates = ["duplicate delivery"]
    assert failure_conditions("monitor sends each temperature alarm 3x to managers") == duplicates
    assert failure_conditions("duplicate notifications to store managers") == duplicates
    assert failure_conditions("temps in F since the config push, values look wrong") == [
        "wrong data"
    ]
    assert failure_conditions("lines must not be empty") == []
    equipment = ["equipment fault"]
    assert failure_conditions("the bakery oven controller shows temperature sensor fault") == (
        equipment
    )
    assert failure_conditions("blast chiller on line 3 shows controller error E07") == equipment
    assert failure_conditions("warehouse robots stopped, controller returns 503") == []
    assert failure_conditions("3-D Secure challenge page blank in Safari") == blank
    assert failure_conditions("Refused to frame 'https://acs.bank.example/'") == blank
    assert failure_conditions("prices on tills wrong after catalogue sync") == ["wrong data"]
    assert failure_conditions("prices not showing at the tills") == []
    assert failure_conditions("contactless loops on 'PIN required'") == ["issuer decline"]
    observed = observe_incident({"message": "ok", "logs": ["INFO disk full check skipped"]})
    assert [o.weak for o in observed.of("condition")] == [True]


def test_a_line_whose_failure_was_handled_is_weak() -> None:
    observed = observe_incident(
        {
            "message": "x",
            "logs": [
                "ERROR sale rejected 422: total 4.50 does not equal 4.49 (till 7, re-keyed ok)",
                "WARN  rejected 422: quantity must be greater than 0 (till 3, operator corrected)",
                "WARN  ReadTimeout on charge ch_77, succeeded on retry",
                "ERROR plu-service GET /plu/v1/prices/7311 -> 503",
                "WARN  pos-api PLU lookup 503 for sku 3045 (retry ok)",
            ],
        }
    )
    weak = {o.evidence_id: o.weak for o in observed.of(STATUS)}
    assert weak == {
        "incident:log:1": True,
        "incident:log:2": True,
        "incident:log:4": False,
        "incident:log:5": True,
    }
    assert [o.weak for o in observed.of(EXCEPTION)] == [True]


def test_echoed_source_code_shows_its_names_and_nothing_else() -> None:
    incident = {
        "message": "till crash",
        "stack_trace": (
            "Traceback (most recent call last):\n"
            '  File "/srv/pos_api/client.py", line 12, in fetch_price\n'
            "    if status_code == 503: raise PluUnavailable(total)\n"
            "KeyError: 'sku'"
        ),
    }
    items = {i.id: i for i in incident_texts(incident)}
    assert items["incident:stack:3"].source_code
    assert not items["incident:stack:4"].source_code
    observed = observe_incident(incident)
    from_code = {o.kind for o in observed.observations if o.evidence_id == "incident:stack:3"}
    assert from_code == {IDENTIFIER}
    assert observed.values(EXCEPTION) == {"KeyError"}


def test_the_site_served_and_the_workload_name_the_system() -> None:
    line = 'upstream: "http://10.0.0.5:3000/", host: "wiki.corp"'
    assert site_hosts(line) == ["wiki"]
    assert site_hosts("GET http://inventory-svc/stock/1 -> 503") == []
    assert site_hosts('{"host": "localhost:8080"}') == []
    labels = "labels: alertname=KubePodCrashLooping container=recommender namespace=ml"
    assert workload_names(labels) == ["recommender"]
    observed = observe_incident({"message": "502 on wiki.corp", "logs": [line, labels]})
    assert (observed.site, observed.workload) == ("wiki", "recommender")
    two = observe_incident({"message": "x", "logs": [line, 'host: "shop.corp"']})
    assert two.site is None


@pytest.mark.parametrize(
    ("text", "trouble"),
    [
        ("503s on lookups", True),
        ("checkout down since 14:05", True),
        ("card machines declining everything", True),
        ("fridge alarms silent since 02:00", True),
        ("prices not showing at the tills", True),
        ("product pages say stock unknown", True),
        ("new dashboard colours look off", False),
        ("stock counts wrong after the nightly sync", False),
        ("checkout page slow to load product images", False),
        ("sales endpoint slow, p95 2s, no errors", False),
        ("error rate normal, only latency is up", False),
        ("no errors in our logs but card payments answer 502", True),
        ("what read timeout does payment-service use? Nothing is broken.", False),
        ("no impact on customers, just asking which retries we run", False),
        ("no impact on the card reader, but sales fail with 422", True),
        # A rate at its usual level and failures counted zero beside a store's number.
        ("pos-api 422 rate last 1h: 0.02% (baseline)", False),
        ("pos-card-gateway store 0233: 0 failed authorisations in 1h", False),
        ("store 0233: 12 failed authorisations in 1h", True),
        # A comparison with the baseline shows the spike; back at it, nothing fails.
        ("checkout 5xx rate 40% (baseline 0.1%)", True),
        ("payment-service 408/504 rate 0.02% (baseline 0.02%)", False),
        ("payment errors rate back to baseline", False),
        ("CPU usage > 90%. No error-rate or latency monitor is firing.", False),
        ("no tills are down but the PLU alert is firing", True),
        ("everything is down at store 12", True),
        ("everything is fine, just asking which retries we run", False),
        ("payment latency and error rates were normal all day", False),
        ("the slowness turned out to be a CDN change; it's fixed since the rollback", False),
        ("Everything's green this morning, do we need a postmortem?", False),
        ("it's fixed, yet the 503s are back again", True),
    ],
)
def test_trouble_words_say_something_fails(text: str, trouble: bool) -> None:
    assert shows_trouble(text) is trouble


def test_an_exception_name_says_its_kind_of_failure() -> None:
    assert exception_kind("TimeoutException") == "timeout"
    assert exception_kind("SocketTimeoutException") == "timeout"
    assert exception_kind("ReadTimeoutError") == "timeout"
    assert exception_kind("TimeoutError") == "timeout"
    assert exception_kind("ZeroDivisionError") is None
    assert exception_kind("NullPointerException") == "fault"
    assert exception_kind("NoMethodError") == "fault"
    assert exception_kind("AttributeError") == "fault"
    assert exception_kind("ValueError") is None
    from app.evidence.signals import exception_kind_in

    operand = "TypeError: unsupported operand type(s) for +=: 'decimal.Decimal' and 'float'"
    assert exception_kind_in(operand, "TypeError") == "fault"
    assert exception_kind("panic: runtime error: index out of range [3] with length 3") == "fault"


def test_a_type_error_is_a_fault_only_where_its_message_says_so() -> None:
    from app.evidence.signals import exception_kind_in

    node = "TypeError: Cannot read properties of undefined (reading 'tender')"
    assert exception_kind_in(node, "TypeError") == "fault"
    assert exception_kind_in("TypeError: fetch failed", "TypeError") is None


def test_the_code_a_fault_names_is_not_the_failures_words() -> None:
    from app.evidence.wording import without_fault_members

    ruby = "NoMethodError: undefined method `amount' for nil:NilClass"
    assert "amount" not in words(without_fault_members(ruby))
    assert "lines" not in words(without_fault_members("KeyError: 'lines'"))
    python = "AttributeError: 'NoneType' object has no attribute 'quantity'"
    assert "quantity" not in words(without_fault_members(python))
    body = "422 Unprocessable Entity: quantity must be greater than 0"
    assert without_fault_members(body) == body


def test_a_wrapper_exception_says_its_kind_in_its_message() -> None:
    from app.evidence.signals import exception_kind_in

    axios = "AxiosError: timeout of 10000ms exceeded\n    at handleRequestTimeout (http.js:647)"
    assert exception_kind_in(axios, "AxiosError") == "timeout"
    go = "rpc error: DeadlineExceeded(context deadline exceeded)"
    assert exception_kind_in(go, "DeadlineExceeded") == "timeout"
    hystrix = (
        "com.netflix.hystrix.exception.HystrixRuntimeException: PaymentClient#authorize"
        "(ChargeRequest) timed-out and no fallback available."
    )
    assert exception_kind_in(hystrix, "HystrixRuntimeException") == "timeout"
    assert exception_kind_in("HttpRequestException: operation has timed out", "X") is None
    assert exception_kind("The operation has timed out") == "timeout"
    assert (
        exception_kind_in("AxiosError: Request failed with status code 502", "AxiosError") is None
    )
    assert exception_kind_in("ReadTimeout: read timed out", "ReadTimeout") == "timeout"


def test_a_warning_level_alone_says_nothing_fails() -> None:
    observed = observe_incident(
        {
            "message": "x",
            "logs": [
                "chiller-monitor WARN  sensor 4 reading delayed (store 0146)",
                "pos-api WARN  PLU lookup failed for sku 3045",
                "pos-api INFO  lookup failed, retry ok",
            ],
        }
    )
    shown = [item_shows_trouble(i) for i in observed.items if i.id.startswith("incident:log:")]
    assert shown == [False, True, False]


def test_a_report_says_nothing_fails_only_without_slowness() -> None:
    assert says_nothing_fails("inventory-service CPU at 95%, no errors, latency fine")
    assert not says_nothing_fails("payment-service p99 latency 12s, no errors yet")
    assert not says_nothing_fails("checkout slow, no errors")
    assert not says_nothing_fails("tills down")
    assert not says_nothing_fails("everything is down at store 12")
    assert says_nothing_fails("Payment latency and error rates were normal all day")
    assert not says_nothing_fails("payment latency and timeouts up, error rates were normal")


def test_a_report_that_the_trouble_is_over_says_nothing_fails_slowness_and_all() -> None:
    past = "the checkout slowness we had yesterday was a CDN change; it's fixed since the rollback"
    assert says_nothing_fails(past)
    assert says_nothing_fails("Everything's green this morning after yesterday's slow checkout")
    assert not says_nothing_fails("it's fixed, but checkout is slow again")
    assert not says_nothing_fails("is it fixed? checkout still slow")


def test_a_failure_a_later_line_says_went_through_is_handled() -> None:
    from app.evidence.signals import recovered_lines

    logs = [
        "2024-10-07T03:40:02Z ERROR checkout.stock inventory-service returned 503 (retry 1/3)",
        "2024-10-07T03:40:02Z INFO  checkout.stock inventory-service 200 after retry",
        "2024-10-07T03:40:05Z ERROR checkout_service ZeroDivisionError: division by zero",
        'level=error svc=pos-api msg="card auth failed" upstream=pos-card-gateway status=502',
        'level=info svc=pos-api msg="card auth ok on retry" upstream=pos-card-gateway status=200',
    ]
    assert recovered_lines(logs) == {0, 3}
    # A line about retrying names what it calls, even where a logger would stand.
    retried = [
        "ERROR inventory-service 503 for stock badge, retrying",
        "INFO  inventory-service 200 after retry",
    ]
    assert recovered_lines(retried) == {0}
    # The service writing both lines is not what recovered, nor is a success with no words.
    same_writer = [
        "ERROR pos-api POST /pos/v1/sales 422 quantity must be > 0",
        "INFO pos-api POST /pos/v1/sales 201 after retry of till 4",
        "pos-api ERROR PLU service unavailable: GET http://plu-service/api/v2/price -> 503",
        "pos-api INFO  GET /pos/v1/health 200 3ms",
    ]
    assert recovered_lines(same_writer) == set()
    observed = observe_incident({"message": "checkout errors", "logs": logs})
    assert [i.weak for i in observed.items if i.id in ("incident:log:1", "incident:log:3")] == [
        True,
        False,
    ]


def test_inequality_signs_read_as_words() -> None:
    assert contains_phrase(
        words("WARN POST /pos/v1/sales 422 total 18.40 != sum of lines 18.39"),
        words("total 19.99 does not equal sum of lines 20.00"),
    )
    assert words("a ≠ b") == ("a", "does", "not", "equal", "b")


@pytest.mark.parametrize(
    ("line", "routine"),
    [
        ("pos-api debug: sum(lines.amount)=12.40 total=12.40", True),
        ("2026-12-01T02:11:09Z pos-api info: till 2 opened", True),
        ("chiller-monitor: fatal: unhandled exception, process exiting", False),
        ("sale 12 failed with an info: banner shown", False),
    ],
)
def test_a_lower_case_level_with_a_colon_near_the_start_is_the_lines_level(
    line: str, routine: bool
) -> None:
    assert is_routine(line) is routine


def test_a_code_the_reporter_denies_or_calls_past_is_no_hint() -> None:
    from app.evidence.wording import dismissed

    assert dismissed("This is NOT POS-422-AMOUNT, the totals are right", "POS-422-AMOUNT")
    assert dismissed("Last week's CH-502 (monitor crash) is fixed. Today: AC alarm", "CH-502")
    assert dismissed("PAY-408 was resolved on Monday; now tills are slow", "PAY-408")
    assert not dismissed("could this be INV-503 again?", "INV-503")
    assert not dismissed("CO-500 again, not PAY-408", "CO-500")
    observed = observe_incident({"message": "not CO-500: web payments hang then 504"})
    assert not observed.of(CODE)


def test_a_code_is_no_phrase_words() -> None:
    observed = observe_incident({"message": "this is NOT POS-422-AMOUNT"})
    assert "amount" not in observed.items[0].words


def test_what_a_request_carried_is_not_what_it_says_failed() -> None:
    from app.evidence.wording import said_words

    fields = {"quantity", "lines", "amount", "total"}
    request = said_words("POST /sales store=7 total=12.40 lines=3 -> 422", fields)
    assert "total" not in request and "lines" not in request
    body = said_words('{"tenders":[{"type":"cash","amount":23.10}]}', fields)
    assert "amount" not in body
    quoted = said_words('{"declared_total": "12.50", "sum_of_lines": "12.50"}', fields)
    assert "total" not in quoted and "lines" not in quoted
    assert "total" in said_words('{"error": "total does not match"}', fields)
    assert "lines" not in said_words("lines[3].quantity 12012 exceeds limit 999", fields)
    assert "lines" not in said_words("sale.lines[4].qty: 1200 exceeds limit 99", fields)
    assert "lines" in said_words("lines[2].plu is required", fields)
    pydantic = '{"detail":[{"loc":["body","lines",1,"quantity"],"msg":"ensure > 0"}]}'
    assert "lines" not in said_words(pydantic, fields)
    assert "lines" in said_words('{"loc":["body","lines",1,"plu"],"msg":"required"}', fields)
    assert "lines" in said_words('{"field":"lines","message":"expected array"}', fields)


def test_a_validation_error_names_its_field_however_it_points_to_it() -> None:
    from app.evidence.wording import named_fields, words

    pointer = '{"errors":[{"source":{"pointer":"/data/attributes/currency"}}]}'
    assert named_fields(pointer) == ["currency"]
    assert named_fields('{"field": "lines[0].quantity"}') == ["lines[0].quantity"]
    # A socket error's code reads as the doc's words.
    assert "refused" in words("connect ECONNREFUSED 10.12.4.33:8443")
    from app.evidence.patterns import find_http_statuses

    assert find_http_statuses("failed: connect ECONNREFUSED -> responding 503 stock") == [503]


def test_slowness_without_errors_fails_only_where_slowness_is_the_failure() -> None:
    from app.evidence.trouble import says_nothing_fails

    slow = "reservations take 3 s each but all succeed; no errors. Just slow."
    assert not says_nothing_fails(slow)
    assert says_nothing_fails(slow, slowness_fails=False)


def test_a_mail_servers_reply_code_is_no_http_status() -> None:
    line = (
        "alert mail failed: smtplib.SMTPAuthenticationError: (535, b'5.7.8 Password not accepted')"
    )
    assert statuses(line) == []
    assert statuses("inventory-client GET /stock -> 503") == [503]
    assert "authentication" in failure_conditions(line)
    upload = "upload to sftp://finance-dw/inbound/sales.csv failed: Permission denied"
    assert "authentication" in failure_conditions(upload)
    assert "authentication" in failure_conditions("can't log into chiller dashboard after Okta")
    assert "authentication" in failure_conditions("SSO login failing for store managers")


@pytest.mark.parametrize(
    ("text", "not_live"),
    [
        ("Planned maintenance: tonight 22:00 we restart chiller-monitor. Expect 502s.", True),
        ("AI-3: add unit test for empty basket after last month's CO-500", True),
        ("[TEST] synthetic alert from the alert-pipeline smoke test, please ignore.", True),
        ("What read timeout does the payment client use when it calls the provider?", True),
        ("How do we raise the inventory-service DB pool size? Planning for Black Friday", True),
        ("All clear: CH-502 resolved 14:05, fresh readings from every store.", True),
        ("Load test in staging against inventory-api produced 503s, as expected.", True),
        ("CR-1182: raise psp-adapter read timeout from 5 s to 8 s. Needs CAB approval.", True),
        ("SyntheticTest", True),
        # Live whatever the framing: now, still, since, for the last minutes.
        ("How do we raise the inventory pool size? We're hitting the limit right now", False),
        (
            "What read timeout does the payment client use? Payments have been failing with 504 "
            "for the last 20 minutes",
            False,
        ),
        ("Planned restart at 22:00 ran over: chiller-monitor still crash-looping", False),
        ("is PLU down? tills show 'price not available' since 10:02", False),
        ("what's wrong with the card terminals? 502 on every tap", False),
        ("Postmortem draft: the PLU service returned 503 to pos-api for 25 minutes", False),
        ("staging: payments time out against the PSP sandbox", False),
        ("After CR-1182 was deployed at 06:00, payments time out", False),
        ("CR-2231 went out at 06:00 and since then tills reject every sale", False),
        (
            "How do I tell PAY-408 from POS-502-CARD? Example: 'ReadTimeout: Read timed out'. "
            "Nothing is broken right now, this is just for the documentation.",
            True,
        ),
        (
            "[Resolved] card authorisations failed between 10:02 and 10:41; all card tenders "
            "have been working normally since 10:41. This update closes the incident.",
            True,
        ),
        (
            "Load test LT-18 (staging): inventory-service started returning 503 at 2,000 rps, "
            "as expected. Production is healthy.",
            True,
        ),
        ("what does '422 quantity must be greater than 0' mean? Nothing is broken today.", True),
        (
            "Deploy of checkout 5.14.2 finished, please review the startup logs before we close "
            "the change ticket",
            True,
        ),
        ("Status: Resolved - stock lookups green since 11:05; closing the bridge.", True),
        (
            "Game day: we killed chiller-monitor in the lab. Exercise complete, nothing to fix.",
            True,
        ),
        (
            "Nur zur Info: Kartenzahlung ging heute Morgen ca. 20 Minuten nicht (502), seit 10:15 "
            "läuft wieder alles normal. Kein Handlungsbedarf, Ticket kann geschlossen werden.",
            True,
        ),
        (
            "payment provider incident resolved per their status page, just sanity-checking "
            "before I close the ticket",
            True,
        ),
        (
            "[14:04] pia: this is the scheduled game day, I killed plu-service in the lab store "
            "on purpose\n[14:12] omar: health green, scans return prices again",
            True,
        ),
        ("Pregunta: ¿cómo se reinicia el inventario en staging? No hay incidencia.", True),
        ("Frage zum Runbook: wie startet man den PLU-Dienst neu? Keine Störung.", True),
        (
            "Ignore the page for chiller-monitor at 15:03 - that was me pushing a synthetic "
            "event to check the escalation policy.",
            True,
        ),
        ("Closing INC-4471: tills could not price this morning. No further action.", True),
        ("Deploy note: pos-api 4.12 rolls out at 14:00, nothing to escalate.", True),
        ("The ZeroDivisionError traceback is from the March incident, already patched.", True),
        ("Payment provider latency spike at 03:10 cleared on its own.", True),
        ("can someone explain what 'QueuePool limit' means in the logs from yesterday?", True),
        ("Weekly SLO review: error budget 82% left. Anything we should act on?", True),
        (
            "All clear on this morning's PLU issue: PLU health has been green since 09:12. "
            "Closing this out.",
            True,
        ),
        ("game day finished but the PLU 503s are back again", False),
        ("provider incident resolved? no - payments still failing with 504", False),
        (
            "Do we need to pause the campaign? Since around 11:30 the stock widget calls get "
            "503 Service Unavailable.",
            False,
        ),
        ("checkout slow, no errors", False),
        ("no impact on customers yet, tills slow to price", False),
        # A handover whose every item is marked over; one still open is live.
        (
            "Handover 18:00\n1. PLU 503s 11:10-11:35 - tills pricing since 11:36 RESOLVED\n"
            "2. Chiller monitor crash at 13:02 - readings from all stores since 13:06 RESOLVED\n"
            "Nothing open.",
            True,
        ),
        (
            "Handover 18:00\n1. PLU 503s since 11:10 - RESOLVED\n"
            "2. chiller-monitor still crash-looping, not resolved\nNothing else open.",
            False,
        ),
    ],
)
def test_a_report_framed_as_no_live_failure(text: str, not_live: bool) -> None:
    from app.evidence.trouble import says_not_live

    assert says_not_live(text) is not_live


def test_a_code_field_the_reporter_sets_aside_is_only_a_hint() -> None:
    observed = observe_incident(
        {
            "error_code": "CH-502",
            "message": "Reopened from the old CH-502 ticket by the bot - different problem "
            "though: stock reservations fail with 503 since 16:10.",
        }
    )
    codes = [o for o in observed.observations if o.kind == "code"]
    assert [(o.value, o.source) for o in codes] == [("CH-502", MESSAGE)]
    kept = observe_incident({"error_code": "CH-502", "message": "gateway 502 on chillers"})
    assert [o.source for o in kept.observations if o.kind == "code"] == ["field"]


@pytest.mark.parametrize(
    ("record", "kind", "value", "seen"),
    [
        ("inventory API 2xx ratio 99.99%, 503 count 0", STATUS, "503", False),
        ("no ZeroDivisionError in checkout logs last 24h", EXCEPTION, "ZeroDivisionError", False),
        ("checkout 5xx 0.002%, 0 ZeroDivisionError events", EXCEPTION, "ZeroDivisionError", False),
        ("payments: 503=0, 504: 0, 408 0.00%", STATUS, "504", False),
        ("GET /v1/stock -> 503 (12 times in 5m)", STATUS, "503", True),
        # An access log's "503 0" is a 503 with an empty body, not a count.
        ('10.0.0.1 - - [x] "GET /v1/stock HTTP/1.1" 503 0 "-"', STATUS, "503", True),
        ("stage 5: 504 = 9,880", STATUS, "504", True),
        ("Scenario 3 done, all inventory pods Ready, 503 rate back to 0.", STATUS, "503", False),
        ("503 rate back to 12% after the restart", STATUS, "503", True),
        # A monitoring query's result of zero.
        ("gateway 502 on /chiller => 0", STATUS, "502", False),
        ('sum(rate(http_requests_total{code="503"}[5m])) => 0', STATUS, "503", False),
        ("payment_client 408/504 => 0", STATUS, "408", False),
        ("pos-api 503 => 0.5/s", STATUS, "503", True),
        ("ZeroDivisionError: division by zero", EXCEPTION, "ZeroDivisionError", True),
    ],
)
def test_a_signal_a_record_counts_zero_is_not_seen(
    record: str, kind: str, value: str, seen: bool
) -> None:
    observed = observe_incident({"message": "weekly check", "logs": [record]})
    assert (value in {o.value for o in observed.of(kind)}) is seen


@pytest.mark.parametrize(
    ("service", "kept"),
    [
        ("service-desk", None),
        ("store-support", None),
        ("till-support", None),
        ("store-ops", None),
        ("noc", None),
        ("support-portal", "support-portal"),
        # A tool's name in a system's name: an integration, not the desk that took the call.
        ("jira-confluence-bridge", "jira-confluence-bridge"),
        ("slack-connector", "slack-connector"),
        ("inventory-service", "inventory-service"),
    ],
)
def test_a_service_field_naming_who_took_the_report_is_no_system(
    service: str, kept: str | None
) -> None:
    observed = observe_incident({"message": "tills cannot price anything", "service": service})
    assert observed.service == kept
