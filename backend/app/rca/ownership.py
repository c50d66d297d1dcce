"""Whose failure is it: the family's, or another system's that the incident also shows.

A family can match an incident word for word and still not be what fails: the timeout, the
503 or the exception may belong to a system beside it. Three rules read the records for that,
each appending a contradiction to the candidate:

- another system's code: a fault in code that serves a capability no doc covers
  (``DailyZReportJob`` in the POS backend) is not the family's (``weigh_code_location``);
- another system's record: where the family's own failure (an exception, a condition, else a
  status) shows only in records naming a system whose name says a capability no doc covers
  (``api.taxwise-vat.example``, ``loyalty-service``) or another family's service, and none of
  the family's services, the failure is that system's (``weigh_foreign_systems``); a record
  naming no system is the system its pasted command asked (``IncidentSignals.commands``);
- the family shown working: a record shows the family's own service answering
  ("plu-service GET /health 200", ``up{job="chiller-monitor"}=1``) while every failing record
  that names a system names one no doc knows (``label-print-hub``, ``giftcard-svc``) and none
  the knowledge base does; or no record fails at all and only where the family runs confirms
  it ("inventory API 2xx ratio 99.99%, 503 count 0" under a stock discrepancy)
  (``weigh_shown_working``).
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from app.evidence.patterns import normal_code, unique
from app.evidence.services import GENERIC_NAME_PARTS, telling_parts
from app.evidence.signals import (
    CODE,
    CONDITION,
    EXCEPTION,
    FIELD_CODE,
    FILE,
    MESSAGE,
    PATH,
    PHRASE,
    RECORD_SOURCES,
    SERVICE,
    STACK,
    STATUS,
    EvidenceText,
)
from app.evidence.subject import HOST_PARTS, code_capability, name_parts, system_names
from app.evidence.wording import words
from app.evidence.zero import AT_BASELINE
from app.rca.candidates import WHERE_KINDS, Candidate, SignalHit
from app.rca.evidence import evidence_position
from app.rca.match_context import MatchContext
from app.rca.service_matching import is_neighbour, mentions

#: Words of a Component line that name no place in code.
_PLACELESS_WORDS = GENERIC_NAME_PARTS | {"endpoint", "post", "get", "point", "used", "called"}


def weigh_code_location(
    cand: Candidate, ctx: MatchContext, component: str, names: Sequence[str]
) -> None:
    """A fault in code that serves another capability is not the family's fault.

    "NullPointerException … at com.retail.pos.reporting.DailyZReportJob.sumTenders" in
    pos-backend is the end-of-day report failing, not the till checkout handler: the trace's
    code, or the failing request's path (``POST /pos/v1/stores/0412/reports/end-of-day 500``),
    names a capability no doc covers (``report``) and nothing of the family's component
    (``till``, ``checkout``, ``sale``). A family whose own file shows is never contradicted so.
    """
    if not any(h.kind == EXCEPTION and not h.weak for h in cand.confirmed):
        return
    if any(h.kind == FILE for h in cand.confirmed):
        return
    failing = ctx.observed.failing_records
    # The failing request's path says which code ran too: ``POST …/reports/end-of-day 500``.
    requests = [
        o
        for o in ctx.observed.of(PATH)
        if not o.weak and o.source != MESSAGE and o.evidence_id in failing
    ]
    files = [o for o in ctx.observed.of(FILE) if not o.weak] + requests
    place = {
        w
        for w in [*words(component), *(p for n in names for p in telling_parts(n))]
        if len(w) >= 4 and w not in _PLACELESS_WORDS
    }
    if not files or any(w in o.value.lower() for o in files for w in place):
        return
    others = [(o, c) for o in files if (c := code_capability(o.value, ctx.known))]
    if not others:
        return
    observed = ", ".join(unique(o.value for o, _ in others))
    capability = others[0][1]
    cand.contradicted.append(
        SignalHit(
            FILE,
            component or "its own code",
            unique(o.evidence_id for o, _ in others),
            observed=observed,
            why=f"the failing code ({observed}) serves {capability}, not the family's component",
        )
    )


def weigh_foreign_systems(
    cand: Candidate, ctx: MatchContext, names: Sequence[str], neighbours: set[str]
) -> None:
    """A failure seen only in another system's records is that system's, not the family's.

    "outbound POST https://api.taxwise-vat.example/… ReadTimeout" from checkout is the tax
    provider timing out, not the payment provider; "loyalty-service … QueuePool limit reached"
    beside "inventory-service … pool in use 4/15" is the loyalty service's pool; "print-spooler
    … connection refused" is the label printer's. The family's own failure (exceptions,
    conditions, its doc's phrases) decides, every record of it another system's; with only a
    status, the first record of it must be another system's and none the family's (the
    callers' "search backend answered 503" lines follow "search-api … 503"). A record naming
    one of the family's services is the family's whatever else it names.

    Another family's service counts too, for the family's own failure: "pod/plu-service-84b6c7
    Readiness probe failed … connection refused" is the PLU service refusing, not the
    inventory family's "Connection refused", unless it calls or neighbours the family. A family
    only the ``error_code`` field and the prose name, where every failing record is another
    system's (a triage bot's POS-502-CARD over a payroll API's 502s), is contradicted too.
    """
    failing = ctx.observed.failing_records
    # Only a full service name: "plu" alone is the field a sale line lacks, not the service.
    others = [
        n
        for n in ctx.all_services
        if "-" in n and n not in names and not is_neighbour(n, neighbours)
    ]
    if not ctx.foreign and not others:
        return

    def records(hit: SignalHit) -> list[str]:
        return [i for i in hit.evidence_ids if i in failing]

    own_parts = {p for n in names for p in telling_parts(n)}

    def named(record: str) -> bool:
        # The family's service, or a host with a part of its name (``psp.example`` for the
        # payment family's ``psp-adapter``), makes the record the family's.
        return any(mentions(ctx.by_id[record], n) for n in names) or any(
            own_parts & set(name_parts(n)) for n in system_names(ctx.texts[record])
        )

    def foreign(record: str) -> bool:
        return record in ctx.foreign and not named(record)

    def systems_of(record: str) -> list[str]:
        return ctx.foreign.get(record) or [n for n in others if mentions(ctx.by_id[record], n)]

    own = [h for h in cand.confirmed if h.kind in (EXCEPTION, CONDITION, PHRASE) and not h.weak]
    if own := [h for h in own if records(h)]:
        ids = unique(i for h in own for i in records(h))
        if not all(systems_of(i) and not named(i) for i in ids):
            return
    elif statuses := [h for h in cand.confirmed if h.kind == STATUS and not h.weak and records(h)]:
        ids = sorted(unique(i for h in statuses for i in records(h)), key=evidence_position)
        if not foreign(ids[0]) or any(named(i) for i in ids):
            return
        ids = [i for i in ids if foreign(i)]
    elif _by_field(cand) and failing and all(foreign(i) for i in failing):
        # Only the ``error_code`` field (a triage bot's tag) and the prose name the family,
        # and every record that fails is another system's: the field is the claim they overrule.
        ids = sorted(failing, key=evidence_position)
    else:
        return
    systems = ", ".join(unique(n for i in ids for n in systems_of(i)))
    covered = all(i not in ctx.foreign for i in ids)
    cand.contradicted.append(
        SignalHit(
            SERVICE,
            names[0] if names else "its own system",
            ids,
            observed=systems,
            why=f"the failure shows in {systems}, "
            + (
                "another family's service"
                if covered
                else "a system the family's doc does not cover"
            ),
        )
    )


def _by_field(cand: Candidate) -> bool:
    """Whether the ``error_code`` field names the family."""
    return any(h.kind == CODE and FIELD_CODE in h.evidence_ids for h in cand.confirmed)


#: A record that shows a service answering: a success status, "ok", "healthy", "telemetry
#: fresh", "no gaps", "circuit breaker OPEN -> CLOSED", a gauge of 1
#: (``up{job="chiller-monitor"}=1``) or every target up (``up{…} => 6/6``), a query counting
#: its 5xx zero, a success, 2xx or availability share of 95 % or more.
WORKING_RE = re.compile(
    r"(?<!not )\b(?:2\d\d|ok|okay|healthy|green|succeeded|completed|ready|normal|fresh"
    r"|up to date|recovered|resolved|running)\b|->\s*closed\b|"
    + AT_BASELINE
    + r"|\b(?:no|0|zero) (?:gaps?|errors|failed|failures)\b"
    r"|\}\s*=>?\s*1\b|\bup\{[^}]*\}\s*=>?\s*(\d+)/\1\b"
    # A query counting the service's 5xx answers zero: ``…{code="503"}[5m])) => 0``.
    r"|\b(?:code=~?\"?)?5(?:\d\d|\.\.|xx)\b[^\n=]{0,40}=>\s*0(?:\.0+)?(?![.,/\d])"
    r"|\b(?:success|2xx|availability|health|uptime)(?:\s+(?:rate|ratio))?\s*[:=]?\s*"
    r"(?:9[5-9]|100)(?:\.\d+)?\s*%",
    re.IGNORECASE,
)
#: A record saying a service is back: "health check green", "breaker OPEN -> CLOSED",
#: "incident INC-3391 resolved", "recovered".
_RECOVERED_RE = re.compile(
    r"\b(?:recovered|resolved|back to normal|green)\b|->\s*closed\b", re.IGNORECASE
)


def _telling_name_parts(name: str) -> set[str]:
    """The alphabetic parts of a host's or service's name that say which system it is."""
    return {
        p
        for p in name_parts(name.lower())
        if p.isalpha() and len(p) > 1 and p not in GENERIC_NAME_PARTS and p not in HOST_PARTS
    }


def shows_working(item: EvidenceText, names: Sequence[str]) -> bool:
    """Whether a record names one of ``names`` answering as it should."""
    return bool(WORKING_RE.search(item.text)) and any(mentions(item, n) for n in names)


def weigh_shown_working(
    cand: Candidate, ctx: MatchContext, names: Sequence[str], neighbours: set[str]
) -> None:
    """The family's service shown working while the failure shows in a system no doc knows.

    "label-print-hub POST /jobs -> 503" beside "plu-service GET /health 200" is the label
    printers' hub failing, not the PLU service, whatever the ``service`` field or the prose
    guesses; "ereceipt-svc … 500 NullPointerException" after "pos-api … /till/checkout -> 201"
    is the e-receipt sender's fault, not the till checkout's. A failing record that names a
    system the knowledge base knows (any family's service, a host with a part of one's name,
    or a caller the family's doc names: ``pos-api`` for the PLU service "used by the POS API")
    leaves the family in the running: the failure may be the family's, seen by a caller;
    unless it was logged before a record says the family recovered ("health check green",
    "breaker OPEN -> CLOSED") and the failure now is another system's (an earlier PLU blip,
    sorted, beside tonight's NAS backup failure).
    """
    if not names:
        return
    failing = ctx.observed.failing_records
    working = [
        i.id
        for i in ctx.observed.items
        # Routine records count: "INFO plu-service GET /health 200" is what shows it working.
        # A stack frame is code, never a service answering ("checkout_service.py, line 212").
        if i.source in RECORD_SOURCES
        and i.source != STACK
        and i.id not in failing
        and shows_working(i, names)
    ]
    if not working:
        return
    if not failing and all(h.kind in WHERE_KINDS for h in cand.confirmed):
        # Nothing fails in the records and only where it runs names the family: "inventory
        # API 2xx ratio 99.99%, 503 count 0" under "3.1 % of SKUs differ after the sync" is
        # that service's data, not its outage.
        cand.contradicted.append(
            SignalHit(
                SERVICE,
                names[0],
                working,
                observed=names[0],
                why=f"{names[0]} is shown working ({', '.join(working)}) and no record fails",
            )
        )
        return
    claimed = {p for name in ctx.all_services for p in telling_parts(name)} | (
        neighbours - GENERIC_NAME_PARTS
    )
    ours = {p for name in names for p in telling_parts(name)} | (neighbours - GENERIC_NAME_PARTS)
    recovered = [i for i in working if _RECOVERED_RE.search(ctx.texts[i])]
    last_recovery = max((evidence_position(i) for i in recovered), default=None)
    elsewhere: list[tuple[str, list[str]]] = []
    covered: set[bool] = set()
    for record in sorted(failing, key=evidence_position):
        # A known system's failure logged before the family is said to have recovered is over
        # ("PLU service unavailable (503)" before "plu-service health check green").
        over = last_recovery is not None and evidence_position(record) < last_recovery
        systems = [s for s in system_names(ctx.texts[record]) if normal_code(s) not in ctx.codes]
        known = [n for n in ctx.all_services if mentions(ctx.by_id[record], n)]
        hosts = [s for s in systems if _telling_name_parts(s) & claimed]
        if any(n in names or is_neighbour(n, neighbours) for n in known) or any(
            _telling_name_parts(s) & ours for s in hosts
        ):
            if over:
                continue
            return
        if known or hosts:
            # Only another family's service fails there ("chiller-monitor … CrashLoopBackOff"
            # beside "pos-card-gateway … authorisation approved 200"): that family's failure.
            elsewhere.append((record, known or hosts))
            covered.add(True)
        elif unknown := [s for s in systems if _telling_name_parts(s)]:
            elsewhere.append((record, unknown))
            covered.add(False)
    if not elsewhere:
        return
    others = ", ".join(unique(s for _, found in elsewhere for s in found))
    cand.contradicted.append(
        SignalHit(
            SERVICE,
            names[0],
            [*working, *(record for record, _ in elsewhere)],
            observed=others,
            why=f"{names[0]} is shown working ({', '.join(working)}); the failure shows in "
            + f"{others}, "
            + {
                frozenset({True}): "another family's service",
                frozenset({False}): "a system no doc covers",
            }.get(frozenset(covered), "systems this family's doc does not cover"),
        )
    )
