"""Signals: the checkable facts in a text, and those an incident shows, each with its evidence id.

One set of extractors serves both sides of the diagnosis: a knowledge doc's fields give the
signals that would confirm its family (``app.rag.signals``), and every piece of an incident
gives the signals it shows (``observe_incident``). Kinds:

- ``exception``: exception type names (``ZeroDivisionError``; a dotted name counts by its last
  part, so ``requests.exceptions.ReadTimeout`` is ``ReadTimeout``);
- ``status`` / ``status_class``: HTTP error statuses (4xx and 5xx) and their class (``5xx``),
  also when written as the reason phrase (``Bad Gateway``);
- ``path``: endpoint paths (``/checkout``; digits in a segment do not count, they are ids);
- ``file``: source file names (``checkout_service.py``);
- ``identifier``: snake_case code identifiers (``apply_discount``);
- ``code``: error codes (``PAY-408``);
- ``phrase``: a distinctive phrase, matched word by word (``QueuePool limit reached`` matches
  ``QueuePool limit of size 10 overflow 5 reached``; numbers match any number).

Every observation names the incident evidence it came from: ``incident:service``,
``incident:error_code``, ``incident:event``, ``incident:message``, ``incident:stack:N``,
``incident:log:N`` (1-based), ``incident:note:N`` (a reviewer's note added on re-analysis,
read like the message: prose) or a collected item's id. A log line at INFO level or below is
``weak``: routine lines are noise, so what they show counts for less.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property, lru_cache
from typing import Any

from app.evidence.escapes import stack_trace_text, without_escapes
from app.evidence.injection import without_instructions
from app.evidence.logs import services_in, serving_service
from app.evidence.model import ParsedEvidence
from app.evidence.parse import parse_incident
from app.evidence.patterns import (
    DEFAULT_ERROR_CODE_PATTERNS,
    EXCEPTION_TYPE_RE,
    INFO_LEVELS,
    LEVEL_LOWER_RE,
    LEVEL_RE,
    WARN_LEVELS,
    find_error_codes,
    normal_code,
    unique,
)
from app.evidence.python_trace import source_echo_lines
from app.evidence.services import is_reporting_channel, service_name
from app.evidence.sources.signals import metric_signals
from app.evidence.statuses import status_class, statuses
from app.evidence.trouble import failure_conditions, shows_trouble, told_now
from app.evidence.wording import dismissed, phrase_words
from app.evidence.zero import counted_zero

EXCEPTION = "exception"
STATUS = "status"
STATUS_CLASS = "status_class"
PATH = "path"
FILE = "file"
IDENTIFIER = "identifier"
CODE = "code"
SERVICE = "service"
PHRASE = "phrase"
CONDITION = "condition"
#: Kinds of observation that show a failure whatever the words around them.
FAILURE_SIGNS = frozenset({CODE, STATUS, STATUS_CLASS, EXCEPTION, CONDITION})

#: The evidence id of the incident's ``error_code`` field.
FIELD_CODE = "incident:error_code"
#: The evidence id of the incident's ``service`` field.
SERVICE_FIELD = "incident:service"
#: The evidence id of the incident's ``event`` field: the alert's or monitor's name, what the
#: rule that fired calls the failure, a claim like the reporter's words, not a record of it
#: ("Sentry alert rule: POS amount mismatch").
EVENT_FIELD = "incident:event"
#: The evidence id of the incident's message.
MESSAGE_FIELD = "incident:message"
#: Where an observation came from; ``message`` is the reporter's own words (prose).
FIELD, MESSAGE, STACK, LOG, COLLECTED = "field", "message", "stack", "log", "collected"
#: Where records come from, as against the reporter's words and the structured fields.
RECORD_SOURCES = frozenset({STACK, LOG, COLLECTED})
#: The start of an Alertmanager notification title: ``[FIRING:2] HighErrorRate (job=plu …)``.
ALERT_TITLE_RE = re.compile(r"\[(?:FIRING|RESOLVED)(?::\d+)?\]")

_PATH_RE = re.compile(r"(?<![\w.:/\\-])(/[A-Za-z][\w.-]*(?:/[\w.{}\[\]-]+)*)")
_URL_RE = re.compile(r"\b[a-z][a-z0-9+.-]*://(?P<host>[A-Za-z0-9-]+)[^\s\"'<>)]*")
_FILE_RE = re.compile(
    r"(?<![\w.-])(?:[\w-]+/)*(?P<name>[\w-]+\.(?:py|java|kt|go|js|ts|rb|cs|php|scala))\b"
)
_IDENTIFIER_RE = re.compile(r"(?<![\w.-])[a-z][a-z0-9]*(?:_[a-z0-9]+)+(?![\w-])")
#: ``EXCEPTION_TYPE_RE`` without its message part, so every exception of a line is found.
_EXCEPTION_NAME_RE = re.compile(EXCEPTION_TYPE_RE.pattern.split("(?::")[0])


def exception_types(text: str) -> list[str]:
    """Exception type names in ``text`` (last dotted part), in order, without repeats."""
    found = _EXCEPTION_NAME_RE.finditer(without_escapes(text))
    return unique(m.group("type").rsplit(".", 1)[-1] for m in found)


#: Kinds of failure an exception's name says, however a runtime spells it: .NET's and Java's
#: ``TimeoutException``, Python's ``TimeoutError``, requests' ``ReadTimeout``, urllib3's
#: ``ReadTimeoutError`` and Java's ``SocketTimeoutException`` all say "no answer in time".
#: A ``fault`` is a programming fault: code used a value that was not there (a null or nil
#: dereference, a missing key, attribute or method, a bad index or cast), however the runtime
#: names it. A ``TypeError`` is one only where its message says so: ``TypeError: fetch
#: failed`` is a network error.
EXCEPTION_KINDS: dict[str, re.Pattern[str]] = {
    "timeout": re.compile(r"time[ds]?[-_ ]?out|deadline exceeded", re.IGNORECASE),
    "fault": re.compile(
        r"Null(?:Pointer|Reference)|NilClass|KeyError|AttributeError|NoMethodError|IndexError"
        r"|IndexOutOfRange|OutOfBounds|UnboundLocalError|NameError|ClassCast|InvalidCast"
        r"|undefined method|nil pointer dereference|has no attribute|'NoneType' object"
        r"|cannot read propert(?:y|ies) of (?:undefined|null)|is not a function"
        r"|unsupported operand|index out of range|sequence contains no elements"
        r"|object is not (?:subscriptable|iterable|callable)",
        re.IGNORECASE,
    ),
}


#: The kind of an exception whose message says it waited for a pooled connection in vain:
#: SQLAlchemy's ``TimeoutError: QueuePool limit of size 5 overflow 10 reached``, HikariCP's
#: ``Connection is not available, request timed out``. A full pool, not a slow answer.
POOL_WAIT = "pool wait"
_POOL_WAIT_RE = re.compile(
    r"QueuePool limit|pool (?:is |has been )?exhausted|Connection is not available"
    r"|(?:timeout|timed out) (?:while )?(?:waiting for|acquiring|obtaining) (?:a )?connection",
    re.IGNORECASE,
)


def exception_kind(name: str) -> str | None:
    """The kind of failure an exception type's name says (``EXCEPTION_KINDS``), if any."""
    return next((kind for kind, pattern in EXCEPTION_KINDS.items() if pattern.search(name)), None)


def exception_kind_in(text: str, name: str) -> str | None:
    """The kind of failure exception ``name`` says in ``text``: by its name, else its message.

    A client library's one wrapper type says what failed in the message on the same line:
    ``AxiosError: timeout of 10000ms exceeded``, ``HttpRequestException: The operation has
    timed out``. A message saying the wait was for a pooled connection (``POOL_WAIT``) decides
    over the name: ``sqlalchemy.exc.TimeoutError: QueuePool limit … reached`` is no read timeout.
    """
    message = re.search(rf"(?<!\w){re.escape(name)}\b[:(]([^\n]*)", text)
    if message and _POOL_WAIT_RE.search(message.group(1)):
        return POOL_WAIT
    kind = exception_kind(name)
    if kind is not None:
        return kind
    return exception_kind(message.group(1)) if message else None


_CODE_CONTEXT_WORDS = frozenset({"code", "error", "err", "errcode", "error_code", "reason"})
#: A code written as the ``error_code`` label (``labels: … error_code=PAY-408 …``), or a
#: triage bot logging the tag it applied (``"msg":"auto-tag applied" … "tag":"POS-422-AMOUNT"``).
_LABEL_ECHO_RE = re.compile(r"\berror_code=|\b(?:auto-?)?tag(?:ged|s)?\b|\btriage\b", re.IGNORECASE)


def in_code_position(text: str, code: str) -> bool:
    """Whether ``code`` stands in a log line where a code is written, not in a sentence.

    A code position starts the line (after level and logger), follows ``=``, ``:``, ``[``,
    ``(``, a quote, or a word that names a code (``error``, ``code``); after any other word the
    code is prose (``looks like CO-500 again``).
    """
    index = text.upper().find(code.upper())
    if index < 0:
        return True
    before = text[:index].rstrip()
    if not before or before[-1] in "=:[(\"'{,|":
        return True
    last = re.findall(r"[A-Za-z_]+", before[-20:])
    if not last:
        return True
    word = last[-1]
    return word.lower() in _CODE_CONTEXT_WORDS or word.isupper()


def paths(text: str) -> list[str]:
    """Endpoint paths, lower-cased, trailing slash and query dropped; URL paths included."""
    found: list[str] = []
    for match in _PATH_RE.finditer(_URL_RE.sub(_url_path, text)):
        path = match.group(1).split("?", 1)[0].rstrip("/.").lower()
        if len(path) > 1 and not _FILE_RE.fullmatch(path.lstrip("/")):
            found.append(path)
    return unique(found)


def _url_path(match: re.Match[str]) -> str:
    """A URL reduced to its path, so ``http://host:8080/v1/x`` yields ``/v1/x``."""
    rest = match.group(0).split("://", 1)[1]
    slash = rest.find("/")
    return " " + rest[slash:] if slash >= 0 else " "


def path_matches(expected: str, observed: str) -> bool:
    """Whether ``observed`` is the endpoint ``expected``: equal, ignoring id segments."""

    def shape(path: str) -> list[str]:
        return [s for s in path.split("/") if s and not any(ch.isdigit() for ch in s)]

    return shape(expected) == shape(observed) and bool(shape(expected))


#: A request's host written as a field: nginx's ``host: "wiki.corp"``, ``Host=...``, JSON.
_HOST_FIELD_RE = re.compile(
    r"\bhost[\"']?\s*[:=]\s*[\"']?(?P<name>[A-Za-z][A-Za-z0-9-]*)", re.IGNORECASE
)
#: A workload label as alerts and Kubernetes write it (``container=recommender``).
_WORKLOAD_LABEL_RE = re.compile(
    r"\b(?:container|deployment|app|app_kubernetes_io_name)=(?P<name>[a-z][a-z0-9-]*)"
)
#: Labels that name the workload only where none of those does: a scrape job, a pod.
_JOB_OR_POD_LABEL_RE = re.compile(r"\b(?:job|pod)=(?P<name>[a-z][a-z0-9-]*)")
#: A scrape job that is the monitoring's own exporter, not the workload the alert is about
#: (``job=kube-state-metrics`` on a ``KubePodCrashLooping`` for ``container=recommender``).
_EXPORTER_RE = re.compile(r"metrics|exporter|prometheus|blackbox")


def workload_names(text: str) -> list[str]:
    """The workloads a record names as alerts and Kubernetes label them (``container=…``)."""
    return unique(m.group("name") for m in _WORKLOAD_LABEL_RE.finditer(text))


def job_or_pod_names(text: str) -> list[str]:
    """The services a record's scrape ``job`` and ``pod`` labels name, exporters aside.

    Read only where no record names a workload: ``pod=hr-timeclock-8b6c7d5f9-wq2zr`` is
    ``hr-timeclock``; ``job=kube-state-metrics`` is the monitoring's own exporter.
    """
    return unique(
        name
        for m in _JOB_OR_POD_LABEL_RE.finditer(text)
        if not _EXPORTER_RE.search(m.group("name")) and (name := service_name(m.group("name")))
    )


def site_hosts(text: str) -> list[str]:
    """The sites a proxy's record says it served (``host: "wiki.corp"`` -> ``wiki``).

    A URL's host does not count: it is usually a callee (``http://inventory-svc/stock``, the
    provider's API), not the system that failed. ``localhost`` names no site.
    """
    found = (m.group("name").lower() for m in _HOST_FIELD_RE.finditer(text))
    return unique(h for h in found if h != "localhost")


@lru_cache(maxsize=4096)
def url_hosts(text: str) -> tuple[str, ...]:
    """Host names of URLs in ``text`` (first label, lower-cased): ``plu-service`` etc.

    Cached: the diagnosis asks it of every piece for every service name of every candidate.
    """
    return tuple(unique(m.group("host").lower() for m in _URL_RE.finditer(text)))


def files(text: str) -> list[str]:
    """Source file names (base name, lower-cased)."""
    return unique(m.group("name").lower() for m in _FILE_RE.finditer(text))


def identifiers(text: str) -> list[str]:
    """snake_case identifiers that are not file names."""
    names = set(files(text))
    stems = {n.rsplit(".", 1)[0] for n in names}
    return unique(m.group(0) for m in _IDENTIFIER_RE.finditer(text) if m.group(0) not in stems)


@dataclass(frozen=True)
class EvidenceText:
    """One citable piece of an incident as the diagnosis reads it."""

    id: str
    text: str
    source: str
    weak: bool = False
    words: tuple[str, ...] = ()
    #: A program-source line a traceback echoes under a frame: it names code, not events.
    source_code: bool = False


@dataclass(frozen=True)
class Observation:
    """One signal one piece of evidence shows."""

    kind: str
    value: str
    evidence_id: str
    source: str
    weak: bool = False


@dataclass
class IncidentSignals:
    """Everything observed in one incident."""

    items: list[EvidenceText] = field(default_factory=list)
    observations: list[Observation] = field(default_factory=list)
    #: The structured ``service`` field as its service's name (``service_name``); None if absent.
    service: str | None = None
    #: The one service the log records name, when the causal record names it (lower-cased).
    inferred_service: str | None = None
    #: The one workload the records (not the prose) name in labels (``container=…``).
    workload: str | None = None
    #: The one site the records' ``host:`` fields name (a proxy's front door, maybe shared).
    site: str | None = None
    #: The log entry holding the record the parser takes as the cause, when it is in the logs.
    causal_log_id: str | None = None
    #: The stack line that says what failed: the parser's causal line when the stack holds it,
    #: else the first line that shows trouble (a trace the parser does not read).
    causal_stack_id: str | None = None

    def of(self, kind: str) -> list[Observation]:
        """The observations of one kind, in evidence order."""
        return [o for o in self.observations if o.kind == kind]

    def values(self, kind: str, *, include_weak: bool = True) -> set[str]:
        """The distinct values of one kind (weak ones optionally left out)."""
        return {o.value for o in self.of(kind) if include_weak or not o.weak}

    @cached_property
    def commands(self) -> dict[str, str]:
        """The command each pasted log line answers: the last prompt line before it.

        ``$ curl -v http://recommendation-service:8080/…`` then ``< HTTP/1.1 503``: the 503 is
        the recommendation service's, though its own line names no system.
        """
        answered: dict[str, str] = {}
        command: str | None = None
        for item in self.items:
            if item.source != LOG:
                continue
            if COMMAND_RE.match(item.text):
                command = item.text
            elif command is not None:
                answered[item.id] = command
        return answered

    @cached_property
    def failing_records(self) -> frozenset[str]:
        """The records (stack, log, collected lines) that show something failing.

        Read once per incident: the diagnosis asks it of every candidate.
        """
        signs = {o.evidence_id for o in self.observations if o.kind in FAILURE_SIGNS and not o.weak}
        return frozenset(
            i.id
            for i in self.items
            if i.source in RECORD_SOURCES
            and not i.weak
            and (i.id in signs or item_shows_trouble(i))
        )


#: A log line that says its own failure was handled ("re-keyed ok", "operator corrected",
#: "succeeded on retry"): it happened, but it is not what the incident is about.
RESOLVED_RE = re.compile(
    r"\b(?:re-?keyed|corrected|recovered|resolved|re-?tried|retry|succeeded|fixed)\b[^.;\n]{0,20}?"
    r"\b(?:ok|okay|fine|successfully|on retry)\b"
    r"|\b(?:operator|cashier|user|supervisor|client)\s+(?:corrected|fixed|re-?keyed)\b",
    re.IGNORECASE,
)


def item_shows_trouble(item: EvidenceText) -> bool:
    """Whether a piece of the incident says something fails (``shows_trouble``).

    A routine or handled line never does, and a log line's warning level alone does not:
    "WARN sensor 4 reading delayed" says something is off, not that anything fails.
    """
    if item.weak:
        return False
    text = item.text
    if item.source == LOG:
        match = _level_match(text)
        if match is not None and match.group("level").upper() in WARN_LEVELS:
            text = text[: match.start("level")] + text[match.end("level") :]
    return shows_trouble(text)


def _level_match(line: str) -> re.Match[str] | None:
    """Where a log line's level is written (near its start), if anywhere."""
    return LEVEL_RE.search(line[:80]) or LEVEL_LOWER_RE.search(line[:80])


def is_routine(line: str) -> bool:
    """A log line written at INFO level or below."""
    match = _level_match(line)
    return match is not None and match.group("level").upper() in INFO_LEVELS


#: A command the reporter ran, pasted with its prompt: ``$ kubectl logs deploy/pos-card-gateway``,
#: ``root@lb-02:~# journalctl -u haproxy``, ``PS C:\> Get-Service``.
COMMAND_RE = re.compile(r"^\s*(?:[\w.-]+@[\w.-]+:[^\s$#]*)?[$#]\s+\S|^\s*PS [A-Z]:\\[^>]*>\s*\S")


def _is_weak(line: str) -> bool:
    """A routine line, a handled failure's, or a command the reporter ran.

    Routine is INFO or below; handled is ``RESOLVED_RE``; of a command (``COMMAND_RE``), the
    statuses a query or a URL names (``code=~"408|504"``) are what was asked, the next lines
    what came back.
    """
    return is_routine(line) or bool(RESOLVED_RE.search(line) or COMMAND_RE.match(line))


#: A line saying a call went through after all: "200 after retry", "ok on retry", "after
#: failover", "back under 300ms".
RECOVERY_RE = re.compile(
    r"\b(?:after|on) (?:a )?(?:retry|retries|retrying|failover|fail-over|reconnect\w*)\b"
    r"|\bback (?:up|under|to normal|online)\b|\brecovered\b",
    re.IGNORECASE,
)
#: What a line names as the system it called: an ``upstream=`` label or a hyphenated name.
_SUBJECT_TOKEN_RE = re.compile(
    r"\bupstream=\"?([\w.-]+)|(?<![\w/.=-])([a-z][a-z0-9]*(?:-[a-z0-9]+)+)\b"
)
#: A line that speaks of retrying a call.
_RETRY_RE = re.compile(r"\bretr(?:y|ying|ies|ied)\b", re.IGNORECASE)
#: A line's writer named by a label (``svc=pos-api``) or a bracketed prefix (``[pos-api]``).
_LABELLED_WRITER_RE = re.compile(
    r"\b(?:svc|service|service\.name|app|component|logger)\s*[=:]\s*\"?([\w.-]+)"
    r"|^\s*\[(?:pod/)?([\w.-]+)"
)
#: How many lines after a failure its recovery may come.
RECOVERY_WINDOW = 3


def recovered_lines(lines: Sequence[str]) -> set[int]:
    """Positions (0-based) of log lines whose failure a line just after says went through.

    "ERROR inventory-service 503 for stock badge, retrying" followed by "INFO
    inventory-service 200 after retry": a transient failure the caller handled, as much as
    one a line itself says was handled (``RESOLVED_RE``). The later line must say so in words
    (a success status alone may be another request) and name a system the failing line
    called; the service writing both lines (its label, prefix or the logger by the level) is
    not it.
    """

    def called(line: str) -> set[str]:
        # A line about retrying is a caller's about the system it names, even by the level
        # ("ERROR inventory-service 503 …, retrying"); only a label or prefix is its writer.
        if _RETRY_RE.search(line):
            writers = {a or b for a, b in _LABELLED_WRITER_RE.findall(line)}
        else:
            writers = set(services_in(line))
        found = {a or b for a, b in _SUBJECT_TOKEN_RE.findall(line)}
        return found - {w.lower() for w in writers}

    handled: set[int] = set()
    for later, line in enumerate(lines):
        if not RECOVERY_RE.search(line):
            continue
        names = called(line)
        for earlier in range(max(0, later - RECOVERY_WINDOW), later):
            if names & called(lines[earlier]):
                handled.add(earlier)
    return handled


def incident_texts(
    incident: Mapping[str, Any], collected: Iterable[Mapping[str, Any]] = ()
) -> list[EvidenceText]:
    """The incident's citable pieces in a stable order, with their source and weakness.

    Args:
        incident: An incident as ``IncidentCreate`` fields.
        collected: Collected items (``CollectedItem.as_dict``), cited by their own ids.

    Returns:
        Structured fields, message, stack lines, log lines (1-based), reviewer notes, then
        collected items.
    """
    items: list[EvidenceText] = []
    for name in ("service", "error_code", "event"):
        value = str(incident.get(name) or "").strip()
        if value:
            items.append(EvidenceText(f"incident:{name}", value, FIELD))
    message = str(incident.get("message") or "").strip()
    if message:
        # An Alertmanager title pasted as the message is written by a machine: its labels
        # (``job=plu code=503``) are a record, not the reporter's words.
        source = LOG if ALERT_TITLE_RE.match(message) else MESSAGE
        # An instruction to the model ("cite PAY-408") shows nothing: its code is no hint.
        # Nor are the earlier mail a reply quotes and a handover's closed items (``told_now``).
        said = told_now(without_instructions(message))
        items.append(EvidenceText(MESSAGE_FIELD, said, source))
    stack = stack_trace_text(incident).splitlines()
    echoed = source_echo_lines(stack)
    for number, line in enumerate(stack, start=1):
        if line.strip():
            code = number - 1 in echoed
            items.append(
                EvidenceText(f"incident:stack:{number}", line.rstrip(), STACK, source_code=code)
            )
    logs = [str(line).rstrip() for line in incident.get("logs") or []]
    echoed = source_echo_lines(logs)
    handled = recovered_lines(logs)
    for number, text in enumerate(logs, start=1):
        if text.strip():
            code = number - 1 in echoed
            weak = _is_weak(text) or number - 1 in handled
            items.append(EvidenceText(f"incident:log:{number}", text, LOG, weak, source_code=code))
    for number, note in enumerate(incident.get("reviewer_notes") or [], start=1):
        if str(note).strip():
            items.append(EvidenceText(f"incident:note:{number}", str(note).strip(), MESSAGE))
    for item in collected:
        lines = [str(x.get("text", "")) for x in item.get("lines") or [] if x.get("text")]
        text = "\n".join([str(item.get("summary") or ""), *lines]).strip()
        level = str((item.get("facts") or {}).get("level") or "")
        weak = item.get("kind") == "log" and level.upper() in INFO_LEVELS
        if text and item.get("id"):
            items.append(EvidenceText(str(item["id"]), text, COLLECTED, weak))
    return [
        EvidenceText(i.id, i.text, i.source, i.weak, phrase_words(i.text), i.source_code)
        for i in items
    ]


def observe_incident(
    incident: Mapping[str, Any],
    collected: Iterable[Mapping[str, Any]] = (),
    patterns: Sequence[str] = DEFAULT_ERROR_CODE_PATTERNS,
) -> IncidentSignals:
    """The signals of every piece of an incident, each tied to its evidence id.

    Services and phrases depend on what the knowledge base names, so they are matched by the
    diagnosis against the pieces (``items``); everything else is extracted here.

    Args:
        incident: An incident as ``IncidentCreate`` fields.
        collected: Collected items (metric series, log records).
        patterns: Error-code regular expressions.

    Returns:
        The pieces and their observations.
    """
    items = incident_texts(incident, collected)
    field_code = normal_code(str(incident.get("error_code") or ""))
    message = str(incident.get("message") or "")
    observations: list[Observation] = []
    for item in items:

        def see(kind: str, values: Iterable[object], item: EvidenceText = item) -> None:
            observations.extend(
                Observation(kind, str(v), item.id, item.source, item.weak) for v in values
            )

        if item.id == SERVICE_FIELD:
            continue
        if item.source_code:
            # Echoed source shows which code ran (its names), not a status, code or failure.
            see(IDENTIFIER, identifiers(item.text))
            continue
        if item.id == FIELD_CODE:
            code = item.text.strip().upper()
            if dismissed(message, code):
                # "Reopened from the old CH-502 ticket by the bot - different problem": the
                # field carries a code the reporter sets aside, a hint at most.
                observations.append(Observation(CODE, code, item.id, MESSAGE, item.weak))
            else:
                see(CODE, [code])
            continue
        codes = find_error_codes(item.text, patterns)
        if item.source == LOG and _LABEL_ECHO_RE.search(item.text):
            # The alert's labels rendered as a log line, or the bot that set the tag, repeat
            # the ``error_code`` field: the same claim, not a second record of it.
            codes = [c for c in codes if normal_code(c) != field_code]
        if item.source in (LOG, COLLECTED):
            # A code a log line merely mentions in prose ("looks like CO-500") is a hint.
            placed = [c for c in codes if in_code_position(item.text, c)]
            see(CODE, placed)
            observations.extend(
                Observation(CODE, c, item.id, MESSAGE, item.weak) for c in codes if c not in placed
            )
        else:
            see(CODE, [c for c in codes if not dismissed(item.text, c)])
        # What a report counts zero ("503 count 0", "0 ZeroDivisionError events") did not happen.
        see(EXCEPTION, [e for e in exception_types(item.text) if not counted_zero(item.text, e)])
        found = [
            s
            for s in statuses(item.text, bare=item.source != MESSAGE)
            if not counted_zero(item.text, str(s))
        ]
        see(STATUS, found)
        see(STATUS_CLASS, unique(status_class(s) for s in found))
        see(PATH, paths(item.text))
        see(FILE, files(item.text))
        see(IDENTIFIER, identifiers(item.text))
        see(CONDITION, failure_conditions(item.text))
    observations += [Observation(*m, COLLECTED) for m in metric_signals(collected)]
    service = service_name(incident.get("service"))
    if service and is_reporting_channel(service):
        # "service-desk", "store-support": who took the report, not what fails.
        service = None
    causal = parse_incident(incident, patterns)
    # Only an unambiguous reporter: the one service the records name, on the causal line.
    only = causal.services[0] if len(set(causal.services)) == 1 else None
    inferred = (
        service_name(only)
        if only and causal.source != "message" and only in (causal.causal_line or "")
        else None
    )
    causal_log_id, causal_stack_id = _causal_ids(items, causal)
    records = [i for i in items if i.source != MESSAGE]
    if inferred is None:
        # No levelled record to read it from: the one service that served the requests
        # answered with an error status ("edi-gateway POST /asn 422 {…}"), never a client
        # logging its call to another ("inventory-client GET http://inventory-svc/… -> 503").
        with_status = {o.evidence_id for o in observations if o.kind == STATUS}
        failing = unique(
            name
            for i in records
            if i.id in with_status and (name := service_name(serving_service(i.text)))
        )
        inferred = failing[0] if len(failing) == 1 else None
    workloads = unique(n for i in records for n in workload_names(i.text)) or unique(
        n for i in records for n in job_or_pod_names(i.text)
    )
    sites = unique(h for i in records for h in site_hosts(i.text))
    return IncidentSignals(
        items=items,
        observations=observations,
        service=service,
        inferred_service=inferred,
        workload=workloads[0] if len(workloads) == 1 else None,
        site=sites[0] if len(sites) == 1 else None,
        causal_log_id=causal_log_id,
        causal_stack_id=causal_stack_id,
    )


def _causal_ids(
    items: Sequence[EvidenceText], causal: ParsedEvidence
) -> tuple[str | None, str | None]:
    """The log entry and the stack line holding what the parser takes as the cause.

    A stack the parser does not read (a Go panic) still has a line that says it failed: its
    first line showing trouble or naming an exception.
    """
    line = (causal.causal_line or "").strip()
    logs = [i for i in items if i.source == LOG]
    stack = [i for i in items if i.source == STACK and not i.source_code]
    log_id = next((i.id for i in logs if causal.source == "logs" and line and line in i.text), None)
    stack_id = next(
        (
            i.id
            for i in stack
            if causal.source == "stack_trace"
            and line
            and (line in i.text or line.startswith(i.text.strip()))
        ),
        None,
    )
    if stack_id is None:
        stack_id = next(
            (i.id for i in stack if shows_trouble(i.text) or exception_types(i.text)), None
        )
    return log_id, stack_id
