"""Is it a live failure at all: a report's framing, and records that show history.

A question, planned work, a test, a closed incident's follow-up or a timeline that ends
"Resolved" names a family without anything failing now (``app.evidence.trouble.says_not_live``).
The diagnosis abstains on such a report unless a production record still fails
(``not_live``); a failing record a later record shows working again is the report's history
(``ended_later``), where the report itself ends the incident.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from functools import lru_cache

from app.evidence.services import service_name
from app.evidence.signals import (
    EVENT_FIELD,
    MESSAGE,
    MESSAGE_FIELD,
    RECORD_SOURCES,
    STACK,
    IncidentSignals,
)
from app.evidence.subject import system_names
from app.evidence.trouble import NOT_PRODUCTION_RE, SETTLED_RE, says_not_live, states_settled
from app.rca.evidence import evidence_position
from app.rca.ownership import WORKING_RE

#: A line that renders the alert itself (``app.intake.alertmanager.alert_logs`` and the like):
#: its labels, annotations (``annotations.description: …``), source, status or times.
ALERT_RENDERING_RE = re.compile(
    r"^\s*(?:labels|annotations|source)(?:\.[\w-]+)?\s*:|^\s*alertmanager\s+receiver="
    r"|^\s*(?:startsAt|endsAt|status|state)\s*=",
    re.IGNORECASE,
)
#: One label or annotation of an alert pasted on its own line ("severity=critical", "summary:
#: Pod is crash looping."): the alert's own words where the report ends it ("[RESOLVED] …"); a
#: firing alert someone only asks about is still the live record.
_ALERT_FIELD_RE = re.compile(
    r"^\s*(?:alertname|severity|namespace|job|instance|cluster|team|priority|exported_\w+)\s*="
    r"|^\s*(?:summary|description|runbook(?:_url)?)\s*[:=]",
    re.IGNORECASE,
)


def not_live(observed: IncidentSignals) -> bool:
    """The reporter frames the report as no live failure, and no production record shows one.

    A question, planned work, a test or a closed incident's follow-up ("AI-3 from last month's
    CO-500 postmortem", "[TEST] synthetic alert" with ``error_code`` POS-422-QTY) names a
    family without anything failing now: the ``error_code`` and ``event`` fields are labels,
    not records. A failing record from production (a log line, a stack trace, a collected
    series) says otherwise; one marked ``[staging]`` does not, nor one a later record shows
    ended (``ended_later``: "ZeroDivisionError" at 14:03, "POST /checkout 200" at 14:25 in a
    timeline that ends "Resolved").
    """
    # The message frames the report even where it is an alert's title read as a record
    # ("[RESOLVED] TargetDown job=chiller-monitor - target back up").
    framing = [
        i.text
        for i in observed.items
        if i.source == MESSAGE or i.id in (MESSAGE_FIELD, EVENT_FIELD)
    ]
    if not any(says_not_live(text) for text in framing):
        return False
    texts = {i.id: i.text for i in observed.items}
    # Only a report that ends the incident outright (a timeline's "14:40 Resolved", a game
    # day) makes the failures a later record shows ended its history; one asking "is this the
    # planned restart?" settles nothing unless a record announces it ("Game day started …").
    settled = any(states_settled(text) for text in framing) or any(
        SETTLED_RE.search(i.text) for i in observed.items if i.source in RECORD_SOURCES
    )
    # A record that itself announces the drill or the planned work ("Game day started … expect
    # 503s, do not page") tells what will fail, not a failure; the alert's own labels and
    # annotations, rendered as lines, are the alert the framing speaks of.
    # A stack trace carries no time: where the report ends the incident ("the traceback people
    # keep reposting is from the March incident, already patched"), it is that incident's.
    stack = {i.id for i in observed.items if i.source == STACK}
    return all(
        NOT_PRODUCTION_RE.search(texts[i])
        or ALERT_RENDERING_RE.search(texts[i])
        or (
            settled
            and (
                i in stack
                or SETTLED_RE.search(texts[i])
                or _ALERT_FIELD_RE.search(texts[i])
                or ended_later(i, observed, texts)
            )
        )
        for i in observed.failing_records
    )


def ended_later(record: str, observed: IncidentSignals, texts: Mapping[str, str]) -> bool:
    """Whether a later record shows the failing ``record``'s system working again.

    "api-gateway-lab GET /chiller/health 502" followed by "api-gateway-lab GET /chiller/health
    200"; a record that names no system ("ERROR checkout_service.py … ZeroDivisionError") is
    ended by any later working record. Read only where the report itself says the incident is
    over (a timeline ending "Resolved", a game day), to tell its history from a live failure.
    ``texts`` holds every piece's text by its evidence id.
    """
    systems = _services(texts[record])
    after = evidence_position(record)
    return any(
        i.source in RECORD_SOURCES
        and i.id not in observed.failing_records
        and evidence_position(i.id)[0] == after[0]
        and evidence_position(i.id) > after
        and WORKING_RE.search(i.text)
        and (not systems or systems & _services(i.text))
        for i in observed.items
    )


@lru_cache(maxsize=1024)
def _services(text: str) -> frozenset[str]:
    """The services a record names, each pod or instance as its service (``service_name``).

    "envoy … 503 … inventory-service:8080" is ended by "inventory-service-7f8a9b0c1-gg5hh GET
    /health 200", a new pod of the same service.
    """
    return frozenset(name for n in system_names(text) if (name := service_name(n)))
