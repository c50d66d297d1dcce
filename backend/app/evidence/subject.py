"""The well-known system a report says is in trouble ("Jira returns 502").

On-call messages usually start with what broke: "Jira returns 502", "the VPN gateway returns
502", "Slack bot replies 'invalid quantity'"; or name it after the symptom: "503 from Keycloak",
"ZeroDivisionError in a pandas notebook". When no ``service`` field and no record names a
system, a well-known product named there is where the trouble is, and a family whose doc does
not cover it is about another system (``app.rca.match_context.MatchContext``).

Only products a retail IT estate runs beside the systems in the knowledge base count
(``THIRD_PARTY_SYSTEMS``): a report's own words for its subject ("cooling dashboards", "web
orders", "the self-checkout") are too often the knowledge base's systems in other words to rule
a family out. Tools that deliver or display alerts (Prometheus, Grafana, PagerDuty) and the
platform everything runs on (Kubernetes) are left out: "Grafana shows chiller temps flat" is
about the chiller. A monitoring tool the report opens with as what fails ("Grafana is down",
"Grafana behind nginx: 502") is the subject (``MONITORING_TOOLS``).
"""

from __future__ import annotations

import re

from app.evidence.services import GENERIC_NAME_PARTS, REPORTING_TOOLS
from app.evidence.trouble import TROUBLE_RE

#: Well-known products that are not in the knowledge base's estate unless a doc names them.
THIRD_PARTY_SYSTEMS = frozenset(
    "jira confluence bitbucket jenkins gitlab github slack zoom outlook sharepoint onedrive "
    "excel sap salesforce servicenow zendesk workday okta keycloak ldap vpn wifi wi-fi kafka "
    "rabbitmq elasticsearch opensearch airflow jupyter pandas snowflake bigquery tableau looker "
    "wordpress moodle citrix shopify magento woocommerce hubspot mailchimp sendgrid twilio teams "
    "gmail office365 dropbox notion trello asana docusign vault consul terraform ansible "
    "cloudflare akamai fastly "
    # Kinds of system a retail estate runs beside the ones the knowledge base covers: "the WMS",
    # "BMS web UI", "payroll portal", "intranet app" name where the trouble is as well.
    "wms erp crm bms hris cms lms edi sftp smtp intranet payroll helpdesk".split()
)

#: Where a phrase ends: punctuation that closes a clause or opens an aside.
_CLAUSE_END_RE = re.compile(r"[:;,.!?()\[\]\"“”—–]| - ")
_WORD_RE = re.compile(r"[A-Za-z][A-Za-z0-9'’-]*|\d\S*")
#: Words after which a phrase no longer names a system.
_STOPS = frozenset(
    "is are was were be been has have had does do did returns return returned gives give gave "
    "throws threw raises raised replies replied shows showed says said keeps kept gets got "
    "sends sent answers answered reports reported seems looks went goes started stopped won't "
    "doesn't don't didn't isn't can cannot can't will would with when on after during for in "
    "at from since because while to via by into and or but then again".split()
)
#: A label a report opens with before what it is about: "resolved:", "FYI -", "[update]".
_LABEL_RE = re.compile(r"^\s*(?:\[[^\]]{1,20}\]|[\w!:+-]+(?:\s[\w!+-]+)?\s*(?::|\s-\s))\s*")
#: After these words the phrase that follows names where the symptom happened.
_PLACE_RE = re.compile(r"\b(?:from|in|on)\s+(?:the\s+|a\s+|an\s+|our\s+)?", re.IGNORECASE)


#: Tools that show or deliver alerts: the subject only when a report says they fail
#: ("Grafana is down", "Grafana behind nginx: 502"), not when they show a failure.
MONITORING_TOOLS = frozenset("grafana kibana prometheus alertmanager datadog".split())
#: Words that make a monitoring tool the messenger: "Grafana shows …", "Grafana dashboard …".
_DISPLAY_WORDS = frozenset(
    "dashboard dashboards panel panels graph graphs chart charts board boards shows showed "
    "show says said reports reported alert alerts alerting fired fires firing paged pages "
    "notifies notified".split()
)


def _phrase(text: str) -> tuple[list[str], str | None]:
    """The lower-case words of ``text``'s first phrase, and the word that ended it if any.

    A phrase runs up to a verb, link or trouble word (returned), or to punctuation (None).
    """
    clause = _CLAUSE_END_RE.split(text, maxsplit=1)[0]
    found: list[str] = []
    for word in _WORD_RE.findall(clause):
        lower = word.lower().strip("'’-")
        if lower[:1].isdigit() or lower in _STOPS or TROUBLE_RE.fullmatch(lower):
            return found, lower
        found.append(lower)
    return found, None


#: Named before a ticket or a message ("ServiceNow INC0051277", "Jira ticket OPS-4411", "Slack
#: thread from #stores"), a tool reports arrive through (``REPORTING_TOOLS``) is how the
#: report came, not what fails.
_CHANNEL_NOUNS = frozenset(
    "ticket tickets incident inc case request thread message messages channel chat dm post "
    "email mail notification".split()
)
#: A ticket's number: ``INC0051277``, ``OPS-4411``, ``#4411``.
_TICKET_ID_RE = re.compile(r"#?[a-z]{0,6}-?\d{3,}")


#: A header line naming the tool and the conversation: "Teams - Till Support chat".
_CHANNEL_HEADER_RE = re.compile(
    rf"^\W*(?P<tool>{'|'.join(sorted(REPORTING_TOOLS))})\b[^\n]{{0,40}}?"
    rf"\b(?:{'|'.join(sorted(_CHANNEL_NOUNS))})\b",
    re.IGNORECASE,
)


def _channel_header(message: str) -> str | None:
    """The tool a report's first line names as where the conversation happened, if any."""
    header = _CHANNEL_HEADER_RE.match(message)
    return header["tool"].lower() if header else None


def _names_the_channel(words: list[str], at: int, ended_by: str | None) -> bool:
    """Whether ``words[at]`` is a tool the report came through, named before its ticket.

    The ticket's number ends the phrase ("Zendesk #771204 - Store 114"): ``ended_by``.
    """
    if words[at] not in REPORTING_TOOLS:
        return False
    after = words[at + 1] if at + 1 < len(words) else ended_by
    return after is not None and (after in _CHANNEL_NOUNS or bool(_TICKET_ID_RE.fullmatch(after)))


def _failing_monitor(message: str) -> str | None:
    """The monitoring tool a report opens with as what fails, not as what shows a failure."""
    words, ended_by = _phrase(message)
    if not words or words[0] not in MONITORING_TOOLS:
        return None
    if any(w in _DISPLAY_WORDS for w in [*words, ended_by or ""]):
        return None
    # "Grafana: chiller temps flat" prefixes what it shows; "Grafana behind nginx: 502"
    # says where it runs, "Grafana down" what happens to it.
    return words[0] if ended_by is not None or len(words) > 1 else None


def named_system(message: str) -> str | None:
    """The well-known third-party system ``message`` says is in trouble, if any.

    Args:
        message: The reporter's message.

    Returns:
        The system's name, lower-case, from the message's opening phrase or a phrase after
        "from", "in" or "on"; None when it names none of ``THIRD_PARTY_SYSTEMS`` there.
    """
    monitor = _failing_monitor(message)
    if monitor is not None:
        return monitor
    phrases = [_phrase(message)]
    label = _LABEL_RE.match(message)
    if label:
        # "resolved: Jira back after the reindex", "FYI - Vault sealed": the label is not it.
        phrases.append(_phrase(message[label.end() :]))
    phrases += [_phrase(message[m.end() :]) for m in _PLACE_RE.finditer(message)]
    channel = _channel_header(message)
    for words, ended_by in phrases:
        for at, word in enumerate(words):
            if word == channel or _names_the_channel(words, at, ended_by):
                continue
            if word in THIRD_PARTY_SYSTEMS:
                return word
            parts = word.split("-")
            hit = next((p for p in parts if p in THIRD_PARTY_SYSTEMS), None)
            if hit:
                return hit
    return None


#: Business capabilities a retail estate runs beside the knowledge base's systems, as their
#: hosts and services are named: ``api.taxwise-vat.example``, ``loyalty-service``,
#: ``shipping-quote``, ``api.pointshub-loyalty.example``.
OTHER_CAPABILITIES = frozenset(
    "tax vat shipping shipment shipments parcel parcels carrier courier freight loyalty rewards "
    "points email mail smtp sms newsletter notification notifications search recommendation "
    "recommendations recommender reviews ratings geocoding maps analytics reporting report "
    "reports marketing payroll hr cms cdn images media auth oauth sso login identity "
    "print printer printers printing spooler address addresses fraud marketplace seller sellers "
    "affiliate energy meter meters metering receipt receipts ereceipt".split()
)

#: A system's name as a record writes it: a host or a service, lower-case parts joined by ``-``
#: or ``.`` (a Java class, ``com.retail.pos.loyalty.LoyaltyCard``, is code and never matches).
_SYSTEM_NAME_RE = re.compile(r"(?<![\w.-])[a-z][a-z0-9]*(?:[-.][a-z0-9]+)+(?![\w.-])")
#: Code, not a system: a source or data file (``reports.py``, ``auth-test.json``) or a package
#: (``com.retail.reports``).
_CODE_NAME_RE = re.compile(
    r"\.(?:py|java|js|ts|go|rb|cs|php|kt|scala|rs|cpp|c|h|json|ya?ml|txt|log|csv|xml|conf|cfg"
    r"|ini|toml|sql|sh)$|^(?:com|org|java|javax|jdk|sun)\."
)
#: What follows an expression a fault's message quotes: ``"sale.loyalty" is null``,
#: ``"order.total()"`` (Java's helpful NullPointerException, .NET and JavaScript alike).
_CODE_EXPRESSION_RE = re.compile(r"(?:\(\))?[\"'`]\s+is\s+(?:null|undefined|nil|none)\b|\(\)")
#: A thread, not a system: what Java and .NET logs print in brackets before the logger
#: (``http-nio-8080-exec-3``, ``io-8443-exec-5``, ``pool-2-thread-1``, ``scheduling-1``).
_THREAD_NAME_RE = re.compile(
    r"-(?:exec|thread)-\d+$|^(?:scheduling|task|main|pool|worker|forkjoinpool[\w.]*)-\d+$"
)


def _names_capability(part: str, capability: str) -> bool:
    """Whether a name's part is ``capability`` or a brand built on it (``taxcalc``)."""
    if part == capability:
        return True
    if len(capability) < 3 or len(part) < len(capability) + 2:
        return False
    return part.startswith(capability) or (len(capability) >= 4 and part.endswith(capability))


#: A part of a host's name this long that the docs use says whose system it is.
_TELLING_WORD = 6
#: Parts of a host's name that say nothing about which system it is (domains, zones).
HOST_PARTS = frozenset("com net org io internal local lan corp example svc cluster www".split())
#: Parts every estate's hosts share, which say nothing about whose system it is.
_INFRA_PARTS = (
    GENERIC_NAME_PARTS
    | HOST_PARTS
    | frozenset(
        "gateway gateways upstream services servers network balancer monitor monitoring "
        "provider providers vendor partner partners external remote platform system systems "
        "cloud online".split()
    )
)


def foreign_systems(
    text: str, known: frozenset[str], claimed: frozenset[str] = frozenset()
) -> list[str]:
    """Names of systems in a record whose parts say a capability nobody here covers.

    Args:
        text: A record (a log line, a stack line).
        known: The knowledge base's own words: a capability a doc names is no other system's.
        claimed: Parts of the knowledge base's service names: a name with one of them is the
            families' own (``payment-auth``, ``card-auth``), whatever else it says.

    Returns:
        The names in text order (``api.taxwise-vat.example``, ``loyalty-service``).
    """
    # A monitoring tool's own host or service failing is that tool (``grafana_backend/grafana-1
    # is DOWN``), not the family whose failure it usually shows.
    capabilities = (OTHER_CAPABILITIES | THIRD_PARTY_SYSTEMS | MONITORING_TOOLS) - known
    found: list[str] = []
    for name in system_names(text):
        parts = name_parts(name)
        if claimed & set(parts):
            continue
        if any(len(p) >= _TELLING_WORD and p in known and p not in _INFRA_PARTS for p in parts):
            # A dependency the docs name is theirs: ``auth.acquirer-eu.example`` is the card
            # gateway's "upstream acquirer", whatever its ``auth`` part says.
            continue
        if any(_names_capability(p, c) for p in parts for c in capabilities):
            found.append(name)
    return found


def system_names(text: str) -> list[str]:
    """The hosts and services a record names, in text order, code aside.

    ``api.taxwise-vat.example``, ``loyalty-service``, ``psp.example``; never a source file
    (``reports.py``) or a code package (``com.retail.reports``).
    """
    found: list[str] = []
    for match in _SYSTEM_NAME_RE.finditer(text):
        name = match.group(0)
        if _CODE_NAME_RE.search(name) or _THREAD_NAME_RE.search(name):
            continue
        if _CODE_EXPRESSION_RE.match(text, match.end()) and "-" not in name:
            # A fault's message quotes the code that broke: ``because "sale.loyalty" is null``.
            continue
        if name not in found:
            found.append(name)
    return found


def name_parts(name: str) -> list[str]:
    """A host's or service's parts: ``api.taxwise-vat.example`` is api, taxwise, vat, example."""
    return re.split(r"[-.]", name)


def code_capability(name: str, known: frozenset[str]) -> str | None:
    """The capability a piece of code's name says it serves, when nobody here covers it.

    Args:
        name: A source file's or class's name, lower-case (``dailyzreportjob.java``,
            ``zreport.py``).
        known: The knowledge base's own words.

    Returns:
        The first of ``OTHER_CAPABILITIES`` (five letters or more, so that ``tax`` is not read
        in ``syntax``) the name holds, or None.
    """
    stem = name.lower().rsplit(".", 1)[0]
    return next(
        (c for c in sorted(OTHER_CAPABILITIES - known) if len(c) >= 5 and c in stem),
        None,
    )
