"""The retrieval query for an incident: the one place that turns an incident into search text.

The head is ``error_code event message``; the parsed evidence (``app.evidence``) adds its
terms -- exception, causal message, error codes, first HTTP status -- right after the head, and
the raw stack trace and log lines follow. ``incident_query_builder`` picks the variant the
``RCA_PARSE_EVIDENCE`` setting asks for; the rag node, ``rca eval`` and ``rca bench`` all get
their query from it. Log records collected from the service's files (``app.evidence.sources``)
join the incident's own log lines first (``with_collected_logs``), so they are parsed and
searched like pasted logs. Measured effect of each part: ``docs/architecture/intake.md``.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from functools import partial
from typing import Any

from app.evidence.escapes import stack_trace_text
from app.evidence.injection import without_instructions
from app.evidence.model import ParsedEvidence
from app.evidence.parse import parse_incident
from app.evidence.patterns import DEFAULT_ERROR_CODE_PATTERNS, status_text
from app.evidence.signals import ALERT_TITLE_RE, is_routine
from app.evidence.translation import in_english
from app.evidence.trouble import told_now
from app.evidence.wording import without_dismissed_codes

MAX_QUERY_MESSAGE_CHARS = 300
MAX_STACK_AND_LOGS_CHARS = 100_000
#: Collected log lines added to the query (records in collection order, trace lines included).
MAX_COLLECTED_QUERY_LINES = 60

#: Why an incident is not searched: its only text was instructions to the model.
NOTHING_TO_SEARCH = (
    "the incident holds no text to search once instructions to the model are left out"
)

#: Turns an incident (``IncidentCreate`` fields) into the retrieval query.
QueryBuilder = Callable[[dict[str, Any]], str]


#: One run-together name of letters and digits (an alert's name), and where it changes word:
#: ``InventoryServiceDown``, ``HRPortalDown``.
_ONE_NAME_RE = re.compile(r"[A-Za-z][A-Za-z0-9]*")
_CAMEL_BOUNDARY_RE = re.compile(
    r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])|(?<=[a-z]{2})(?=[0-9])"
)


def spaced_name(name: str) -> str:
    """A CamelCase alert name as words: ``InventoryServiceDown`` -> ``Inventory Service Down``.

    ``Checkout5xxHigh`` gives ``Checkout 5xx High``; an alert state tag in front stays
    (``[FIRING:1] InventoryServiceDown``).

    The embedder reads a run-together name as a few unrelated word pieces, and a keyword match
    on its whole token finds nothing: "InventoryServiceDown" retrieved no doc above the floor,
    "Inventory Service Down" the inventory family. Anything but one CamelCase word is kept.
    """
    tag = ALERT_TITLE_RE.match(name)
    if tag is not None:
        rest = name[tag.end() :]
        name = rest.lstrip()
        head = tag.group(0) + rest[: len(rest) - len(name)]
        return head + spaced_name(name)
    if not _ONE_NAME_RE.fullmatch(name) or name.isupper() or name.islower():
        return name
    return _CAMEL_BOUNDARY_RE.sub(" ", name)


def retrieval_query(incident: Mapping[str, Any]) -> str:
    """``f"{error_code} {event} {message}"``, skipping missing parts.

    Instructions aimed at the model ("cite PAY-408", "ignore previous instructions") are left
    out of the message (``app.evidence.injection``): they describe no symptom. So are codes
    the reporter sets aside ("not CO-500", "last week's CH-502 (crash) is fixed"). A CamelCase
    event or message (an alert's name as the whole text) is searched as words (``spaced_name``).
    A store's report in its own language is searched in the docs' English words
    (``app.evidence.translation.in_english``): "Die Kasse sagt 'Preis nicht gefunden'" as
    "till … price not found". Neither the earlier mail a reply quotes nor a handover's closed
    items are searched (``app.evidence.trouble.told_now``): they are history.
    """
    said = told_now(str(incident.get("message") or ""))
    said = in_english(without_dismissed_codes(without_instructions(said)))
    message = spaced_name(said.strip())
    event = spaced_name(str(incident.get("event") or "").strip())
    parts = (incident.get("error_code"), event, " ".join(message.split()))
    return " ".join(str(p).strip() for p in parts if p and str(p).strip())


#: A Python frame in an installed library, not the service's own code.
_LIBRARY_FRAME_RE = re.compile(
    r'^\s*File "[^"]*(?:site-packages|dist-packages|/lib/python\d[\d.]*/)[^"]*", line \d+'
)
#: A Java or Kotlin frame in the platform or a framework.
_FRAMEWORK_FRAME_RE = re.compile(
    r"^\s*at (?:java|javax|jdk|sun|kotlin|kotlinx|org\.springframework|org\.apache|org\.hibernate"
    r"|com\.zaxxer|com\.fasterxml|io\.netty|reactor|okhttp3|feign)\."
)
#: What every trace says: its header, the chain's joints, elisions and caret markers.
_TRACE_BOILERPLATE_RE = re.compile(
    r"^\s*(?:Traceback \(most recent call last\):|The above exception was the direct cause of the"
    r" following exception:|During handling of the above exception, another exception "
    r"occurred:|\.\.\. \d+ more|[~^\s]+)\s*$"
)


def telling_stack(stack: str) -> str:
    """A stack trace without what every trace says: library frames, headers and joints.

    A chained Python trace through urllib3 and requests is mostly frames of those libraries;
    searched whole and cut at the query's length, it drowns the exceptions and the service's
    own frames (``reserve_stock`` posting to ``inventory-api.internal``) or loses them. A
    library frame's source line goes with it. A trace of nothing else is kept as it is.
    """
    kept: list[str] = []
    skip_source = False
    for line in stack.splitlines():
        if skip_source and line.startswith("    ") and not line.lstrip().startswith("File "):
            skip_source = False
            continue
        skip_source = bool(_LIBRARY_FRAME_RE.match(line))
        if (
            not line.strip()
            or skip_source
            or _FRAMEWORK_FRAME_RE.match(line)
            or _TRACE_BOILERPLATE_RE.match(line)
        ):
            continue
        kept.append(line)
    return "\n".join(kept) if kept else stack


def incident_query(incident: Mapping[str, Any], max_chars: int = 2000) -> str:
    """The retrieval query for an incident: code, event, message, then stack trace and logs.

    The stack trace is searched without its library frames and boilerplate (``telling_stack``),
    the logs without routine lines around failing ones.

    Measured on ``data/eval/incidents.jsonl`` (93 in-domain cases): adding the stack trace and
    log lines lifts hybrid hit@1 from 56 to 86 -- many incidents carry their evidence only there.
    The text is cut to ``max_chars`` so it passes the engine's length check.

    Args:
        incident: A mapping with optional ``error_code``, ``event``, ``message``,
            ``stack_trace`` (str) and ``logs`` (list of str).
        max_chars: Maximum length of the query.

    Returns:
        The parts that are present, joined by newlines.
    """
    parts: list[str] = []
    head = retrieval_query(incident)
    if head:
        parts.append(head)
    stack = telling_stack(stack_trace_text(incident))
    if stack.strip():
        parts.append(stack.strip())
    logs = incident.get("logs")
    if isinstance(logs, list | tuple):
        lines = [str(line).strip() for line in logs if str(line).strip()]
        telling = [line for line in lines if not is_routine(line)]
        # Routine INFO lines around the failing ones name every service in the estate and
        # drown the failure; a log of routine lines alone is still searched as it is.
        parts.extend(telling or lines)
    return "\n".join(parts)[:max_chars]


def evidence_terms(parsed: ParsedEvidence) -> str:
    """Extra text for the retrieval query: exception, message, error codes, status.

    Args:
        parsed: What the evidence parser found.

    Returns:
        Space-separated terms; empty when nothing was found.
    """
    # When the cause is the message itself, the query already holds it: add only what
    # the message does not say (codes and statuses found elsewhere).
    said = (parsed.causal_line or "") if parsed.source == "message" else ""
    parts: list[str] = []
    if parsed.exception_type and parsed.exception_type not in said:
        parts.append(parsed.exception_type)
    message = parsed.exception_message or parsed.causal_message
    if message and not said:
        parts.append(message[:MAX_QUERY_MESSAGE_CHARS])
    parts.extend(code for code in parsed.error_codes if code not in said)
    if parsed.http_statuses and str(parsed.http_statuses[0]) not in said:
        parts.append(status_text(parsed.http_statuses[0]))
    return " ".join(p for p in parts if p).strip()


def enriched_query(
    incident: Mapping[str, Any], patterns: Sequence[str] = DEFAULT_ERROR_CODE_PATTERNS
) -> str:
    """The head plus the parsed evidence's terms.

    Args:
        incident: An incident as ``IncidentCreate`` fields.
        patterns: Error-code regular expressions.

    Returns:
        ``retrieval_query(incident) + " " + evidence_terms(parse_incident(incident))``, stripped.
    """
    terms = evidence_terms(parse_incident(incident, patterns))
    return f"{retrieval_query(incident)} {terms}".strip()


def enriched_incident_query(
    incident: Mapping[str, Any],
    patterns: Sequence[str] = DEFAULT_ERROR_CODE_PATTERNS,
    max_chars: int = 2000,
) -> str:
    """``incident_query`` (head, raw stack trace, log lines) with the parsed terms after the head.

    The terms go right after ``error_code event message`` so the length cap never cuts them,
    and so the causal line leads the noisy lines that follow.

    Args:
        incident: An incident as ``IncidentCreate`` fields.
        patterns: Error-code regular expressions.
        max_chars: Maximum length of the query.

    Returns:
        The query text.
    """
    head = retrieval_query(incident)
    full = incident_query(incident, max_chars=len(head) + MAX_STACK_AND_LOGS_CHARS)
    rest = full[len(head) :].lstrip("\n") if full.startswith(head) else full
    first = f"{head} {evidence_terms(parse_incident(incident, patterns))}".strip()
    return "\n".join(part for part in (first, rest) if part)[:max_chars]


def incident_query_builder(
    *, parse_evidence: bool = True, patterns: Sequence[str] = DEFAULT_ERROR_CODE_PATTERNS
) -> QueryBuilder:
    """The query builder the settings ask for.

    Args:
        parse_evidence: Add the parsed evidence's terms (``RCA_PARSE_EVIDENCE``).
        patterns: Error-code regular expressions (``RCA_ERROR_CODE_PATTERNS``).

    Returns:
        ``enriched_incident_query`` with ``patterns`` bound, or ``incident_query``.
    """
    if parse_evidence:
        return partial(enriched_incident_query, patterns=tuple(patterns))
    return incident_query


def with_collected_logs(
    incident: Mapping[str, Any], collected: Sequence[Mapping[str, Any]]
) -> dict[str, Any]:
    """The incident with the collected log records' lines after its own log lines.

    Used for the retrieval query only: the incident itself, its evidence ids and what the RCA
    cites are unchanged. Metric items add nothing here (their numbers are not search terms).

    Args:
        incident: An incident as ``IncidentCreate`` fields.
        collected: Collected items (``CollectedItem.as_dict``); only ``kind == "log"`` count.

    Returns:
        A copy of ``incident``; the same mapping's contents when nothing was collected.
    """
    lines = [
        str(line.get("text", ""))
        for item in collected
        if item.get("kind") == "log"
        for line in item.get("lines") or []
        if str(line.get("text", "")).strip()
    ][:MAX_COLLECTED_QUERY_LINES]
    enriched = dict(incident)
    if lines:
        enriched["logs"] = [*(incident.get("logs") or []), *lines]
    return enriched
