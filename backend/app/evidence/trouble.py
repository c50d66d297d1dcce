"""What says something fails, and what says nothing does, in any piece of an incident.

The diagnosis asks two questions of the reporter's words, the log lines and a knowledge doc's
fields alike:

- is something failing at all? ``TROUBLE_RE`` ("down", "503s", "timing out", "no prices
  showing"), minus what says the opposite (``NO_TROUBLE_RE``: "no errors", "error rate
  normal"); ``says_nothing_fails`` is the reporter saying so outright, slowness aside;
- is it a live failure at all? ``says_not_live``: a question, a planned change, a test or a
  closed incident's follow-up uses a family's words without anything failing now;
- is it a failure of the platform rather than of a family's own code? ``FAILURE_CONDITIONS``
  (a full disk, an OOM kill, an expired certificate, an exhausted pool, the site's network …),
  generic, never per family: a doc that names one expects it like any other signal.
"""

from __future__ import annotations

import re

from app.evidence.zero import quiet_spans, without_zero_counts

#: Failure conditions of the platform a service runs on, each a failure of its own: an incident
#: showing one is explained by it, not by a family whose doc never names it. Generic, not per
#: family: a doc that names one ("out of memory") expects it like any other signal.
FAILURE_CONDITIONS: dict[str, re.Pattern[str]] = {
    name: re.compile(pattern, re.IGNORECASE)
    for name, pattern in {
        "disk full": r"\bdisk\b[^.\n]{0,30}\bfull\b|\bno space left on device\b",
        "out of memory": r"\bOOM(?:Killed|[- ]?kill(?:ed|er)?)?\b|\bout of memory\b"
        r"|\bKilled process\b",
        "image pull failure": r"\bImagePullBackOff\b|\bErrImagePull\b|\bimage pull\b",
        "unschedulable": r"\binsufficient (?:cpu|memory)\b|\bFailedScheduling\b"
        r"|\bunschedulable\b|\bpods? (?:stuck )?pending\b",
        "certificate": r"\b(?:certificate|cert|tls|ssl)s?\b(?:[^.\n]|\.(?=\S)){0,40}"
        r"\b(?:expir\w*|not yet valid)"
        r"|\bexpired (?:tls |ssl )?cert(?:ificate)?s?\b|\bCERTIFICATE_VERIFY_FAILED\b"
        r"|\bERR_CERT_\w+|\bx509\b",
        "authentication": r"\bunauthori[sz]ed\b|\btoken (?:has )?expired\b"
        r"|\binvalid credentials\b|\bauthentication failed\b|\bbind failures?\b"
        r"|AuthenticationError\b|\bpassword (?:was )?not accepted\b"
        r"|\b(?:permission|access) denied\b"
        r"|\b(?:can(?:no|')?t|unable to) (?:log|sign) ?(?:in|on)(?:to)?\b"
        r"|\b(?:login|log-in|sign-in|sso)s?\b[^.\n]{0,20}\bfail\w*"
        r"|\bsignature (?:verification|validation|checks?)\b[^.\n]{0,20}\bfail\w*"
        r"|\bfail\w* (?:the )?signature (?:verification|validation|checks?)\b"
        r"|\b(?:invalid|bad) (?:webhook )?signatures?\b|\bsignature mismatch\b",
        "payload too large": r"\bpayload too large\b|\brequest entity too large\b"
        r"|\bbody too large\b|\bclient_max_body_size\b",
        # A file or feed a job reads is malformed: the job works, its input does not.
        "malformed input": r"\b(?:csv|tsv|xml|file|feed|header|schema|column)s?\b[^.\n]{0,25}"
        r"\b(?:mismatch\w*|malformed|unparse?able)\b|\bmalformed (?:csv|json|xml|file|row|line)s?\b"
        r"|\b(?:csv|xml|json) parse error\b|\bunexpected (?:column|header)s?\b",
        # One browser draws a page wrong: the servers answer, the page does not render.
        "browser rendering": r"\b(?:renders?|rendering|displays?|shows?) (?:a )?blank\b[^.\n]{0,40}"
        r"\b(?:in|on) (?:safari|chrome|firefox|edge|ios|android)\b"
        r"|\biframe\b[^.\n]{0,30}\b(?:blank|empty|not (?:load|render)\w*)\b"
        r"|\bblank\b[^.\n]{0,30}\b(?:in|on) (?:safari|chrome|firefox|edge|ios|android)\b"
        r"|\bcontent security policy\b|\brefused to (?:frame|load|connect)\b",
        # The same message delivered again and again: the notifier, not the service it tells of.
        "duplicate delivery": r"\bduplicate (?:alerts?|alarms?|notifications?|messages?|e-?mails?"
        r"|pages?|sms)\b|\b(?:alerts?|alarms?|notifications?|messages?|e-?mails?) "
        r"(?:\w+ )?(?:twice|three times|\d+ ?(?:x|times))\b"
        r"|\b(?:sends?|sent|fires?|fired|delivers?|delivered) (?:each|every) \w+ (?:\w+ )?"
        r"(?:twice|three times|\d+ ?(?:x|times))",
        "rate limit": r"\brate[- ]limit(?:ed|ing)?\b|\btoo many requests\b|\bthrottl(?:ed|ing)\b",
        # Every driver words it differently: SQLAlchemy, HikariCP, PostgreSQL, MySQL.
        "connection pool exhausted": r"\bpool\b[^.\n]{0,30}\bexhaust\w*"
        r"|\bexhaust\w*\b[^.\n]{0,40}\bpool\b|\bQueuePool limit\b"
        r"|\btoo many (?:clients|connections)\b"
        r"|\bremaining connection slots are reserved\b|\bConnection is not available\b"
        r"|\b(?:could not|cannot|can't|unable to) (?:get|obtain|acquire) (?:a )?(?:database |db )?"
        r"connection\b|\bTimeout waiting for idle object\b|\bPoolTimeout\b"
        # .NET's SqlClient: "… prior to obtaining a connection from the pool … max pool size
        # was reached".
        r"|\bobtaining a connection from the pool\b|\bmax(?:imum)? pool size was reached\b",
        "dns": r"\bNXDOMAIN\b|\bname resolution\b|\bcould not resolve host\b|\bno such host\b"
        r"|\bDNS (?:outage|failures?|down|errors?|issues?|problems?)\b"
        # How runtimes say it: Node's ENOTFOUND, urllib3's NameResolutionError, Java's
        # UnknownHostException, "Failed to resolve 'api.psp.example'".
        r"|\b(?:ENOTFOUND|NameResolutionError|UnknownHostException)\b"
        r"|\bfailed to resolve\b",
        # The store's or site's network itself: "router down", "lost connectivity".
        "network outage": r"\b(?:router|uplink|wan link|firewall|isp"
        r"|(?:store|site|office) network)s?\b[^.\n]{0,20}\b(?:down|outage|failed|failure|dropped)\b"
        r"|\blost (?:all )?(?:network )?connectivity\b|\bnetwork (?:outage|partition)\b"
        # "WAN1 (fibre) link down", "core switch sw-store112-core unreachable".
        r"|\blink (?:is |went )?down\b|\bswitch\b[^.\n]{0,30}\b(?:unreachable|down)\b",
        # The delivery pipeline, not the running service: "deploy pipeline failed at lint".
        "build failure": r"\b(?:build|pipeline|lint(?:er|ing)?|ci job|unit tests?|compil\w*)\b"
        r"[^.\n]{0,30}\bfail\w*",
        # The machine in the store, not the software: a compressor alarm (``compressor_fault=1``,
        # "Kompressor-Alarm"), a printer out of paper.
        "equipment fault": r"(?<![A-Za-z0-9])(?:[ck]ompressors?|refrigerant)(?![A-Za-z0-9])"
        r"|\bhigh[- ]pressure (?:fault|alarm|trip)|\bpower (?:outage|cut|failure)\b"
        r"|\bpaper (?:jam|low)\b|\bout of paper\b|\bjam(?:med|ming|s)?\b"
        r"|\bprinters?\b[^.\n]{0,30}\b(?:not printing|offline|cover open|fault|error)\b"
        r"|\bcover open\b|\bnot printing\b"
        r"|\bhardware (?:fault|failure|error)\b|\bloud noise\b"
        r"|\bfans?\b[^.\n]{0,15}\b(?:failure|fault)s?\b|\b(?:under|over)[- ]?voltage\b"
        r"|\bsensors? (?:fault|failure|error|defect)s?\b|\bcontroller (?:error|fault)s?\b"
        r"|\bdoors? (?:was |were |is |are |been )?(?:left )?(?:open|ajar)\b",
        # The card issuer said no, which is the payment working: "insufficient funds".
        "issuer decline": r"\binsufficient funds\b|\bdo not honou?r\b"
        r"|\b(?:invalid|wrong|incorrect) (?:cvv|cvc|pin)\b|\b(?:lost|stolen) card\b"
        r"|\bpin required\b|\bSCA_REQUIRED\b|\bstrong customer authentication\b",
        # Data a service serves that is wrong, not a service that fails: "last week's prices".
        "wrong data": r"\b(?:wrong|incorrect|outdated|stale|old|last (?:week|month)'?s?"
        r"|yesterday'?s?)\s+(?:[\w-]+\s+){0,2}?(?:prices?|promos?|promotions?|counts?"
        r"|stock levels?|readings?|symbols?|labels?|translations?)\b"
        r"|\b(?:prices?|counts?|stock levels?|readings?|values?|temps?|temperatures?|units?)"
        r"(?: (?:on|at|in|for|of) (?:the )?[\w-]+)? (?:are |is |were |was |looks? )?"
        r"(?:wrong|incorrect|outdated|stale)\b",
    }.items()
}


#: Words that say something is failing, in any piece of an incident: "down", "503s",
#: "erroring", "declining everything", "alarms silent", and what does not happen ("prices not
#: showing", "no temperatures coming in", "stock unknown"). "Slow to load" or "counts are
#: wrong" say something is off, not that a service fails.
TROUBLE_RE = re.compile(
    r"\b(?:down|outages?|errors?|erroring|errored|fail\w*|unavailable|unreachable"
    r"|time[sd]?[- ]?outs?|timing out|crash\w*|refus\w*|reject\w*|declin\w*|dead|dying|died"
    r"|broken|breaks|stuck|hang\w*|silent|stopped|not|no|never|nothing|none|unknown|missing"
    r"|blank|empty|gone|lost|stale|frozen"
    r"|can(?:no|')?t|unable|exceptions?|panic\w*|restart\w*|crashloop\w*|[45](?:\d\d|xx)s?"
    r"|alert\w*|alarms?|firing|paging|fatal|critical|severe|warn(?:ing)?)\b",
    re.IGNORECASE,
)


#: Words that say nothing is failing: "slow, no errors", "zero 5xx", "error rate normal", "no
#: latency monitor is firing".
NO_TROUBLE_RE = re.compile(
    # "No error-rate … monitor is firing" is read whole, before "no error" alone.
    r"\bno(?:\s+[\w-]+){0,4}?\s+(?:monitors?|alerts?|alarms?|rules?)\s+(?:is |are |was |were )?"
    r"(?:firing|paging)\b|\b(?:nothing|none)\s+(?:is |are |was )?(?:firing|paging)\b"
    r"|\b(?:no|without|zero|0)\s+(?:new\s+)?(?:errors?|failures?|exceptions?|alerts?|alarms?"
    r"|[45](?:\d\d|xx)s?|timeouts?|crash(?:es)?|restarts?|gaps?|issues?|problems?)\b"
    r"|\berror budgets?\b"
    r"|\berror (?:rate|ratio)s? (?:is |are |was |were |looks? |stays? |stayed |remained )?"
    r"(?:normal|flat|ok|fine|zero)\b",
    re.IGNORECASE,
)


#: Words that report slowness, which is the timeout family's failure even with "no errors";
#: "latency fine" and "latency and error rates were normal" are not one.
SLOWNESS_RE = re.compile(
    r"\b(?:slow\w*|sluggish|latency|p9[059]|hang\w*|spinning|lag(?:s|ging)?)\b"
    r"(?!(?:\s+and\s+[\w-]+(?:\s+[\w-]+)?)?\s+(?:is\s+|are\s+|was\s+|were\s+|looks?\s+"
    r"|stayed\s+|remained\s+)?(?:fine|normal|ok|okay|good|flat)\b)",
    re.IGNORECASE,
)


#: The reporter saying outright that nothing is wrong ("nothing is broken", "everything is
#: fine" -- not "everything is down").
_NOTHING_WRONG = (
    r"\bnothing (?:is |was |seems |looks )?(?:broken|down|failing|wrong)\b"
    r"|\bnot (?:an? )?(?:incident|outage)\b|\bno live (?:issue|incident|problem|failure)s?\b"
    r"|\beverything (?:is |works |working )+(?:fine|ok)\b"
    # The same in the languages the stores write in: "no hay incidencia", "keine Störung",
    # "pas d'incident", "geen storing", "nessun incidente", "nenhum incidente", "ingen incident".
    r"|\bno hay (?:ninguna )?(?:incidencia|incidente|aver[ií]a)\b|\bsin incidencias?\b"
    r"|\bkein(?:e|en)? (?:st[öo]rung|incident|ausfall|vorfall)\b"
    r"|\b(?:pas d'|aucun(?:e)? )(?:incident|panne)\b|\bgeen (?:storing|incident)\b"
    r"|\bnessun (?:incidente|guasto)\b|\bnenhum (?:incidente|problema)\b"
    r"|\bingen (?:incident|st[öo]rning)\b"
    # "No errors right now, everything runs normally" in the same languages.
    r"|\bingen fejl (?:lige )?nu\b|\bingen feil (?:akkurat )?nå\b|\binga fel (?:just )?nu\b"
    r"|\balt (?:kører|går|fungerer|virker|fungerar) (?:som )?normalt\b"
    r"|\ballt (?:fungerar|går) (?:normalt|som vanligt)\b|\balles (?:läuft|funktioniert) normal\b"
    r"|\balles werkt normaal\b|\btout fonctionne normalement\b"
    r"|\btodo funciona (?:con )?normal(?:idad|mente)\b|\btutto funziona normalmente\b"
    r"|\btudo funciona normalmente\b|\bwszystko działa normalnie\b"
)
_NOTHING_WRONG_RE = re.compile(_NOTHING_WRONG, re.IGNORECASE)

#: The reporter saying outright that all is well: a question or a request, not an incident
#: ("what read timeout do we use? Nothing is broken"), or that there is no impact.
ALL_WELL_RE = re.compile(
    _NOTHING_WRONG
    + r"|\bno (?:current |customer |user |live )?(?:outage|incident|impact|breakage)s?\b",
    re.IGNORECASE,
)


#: The reporter saying the trouble is over: "it's fixed since the rollback", "everything's
#: green this morning", "back to normal". Slowness told of beside it is over too.
FIXED_RE = re.compile(
    r"\b(?:it's|it is|is now|has been|have been) (?:fixed|resolved|mitigated)\b"
    r"|\b(?:everything|all)(?:'s| is| looks)? (?:green|back to normal)\b|\ball clear\b",
    re.IGNORECASE,
)

#: A turn after "all is well": "no impact on customers, but sales fail with 422", "it's fixed,
#: yet the 503s are back".
_CONTRAST_RE = re.compile(
    r"\b(?:but|however|except|although|though|yet|again"
    # The same turn in the store languages: "aber", "maar", "mais", "pero", "men" …
    r"|aber|maar|mais|pero|però|mas|ale|men)\b",
    re.IGNORECASE,
)


def _says_outright(pattern: re.Pattern[str], text: str) -> bool:
    """Whether ``text`` says what ``pattern`` matches with no turn after it ("…, but …")."""
    said = pattern.search(text)
    return said is not None and not _CONTRAST_RE.search(text, said.end())


def _says_fixed(text: str) -> bool:
    """Whether ``text`` says the trouble is over, with no turn after it."""
    return _says_outright(FIXED_RE, text)


#: What a quiet measure must be about to say nothing fails: a status, an error, a latency
#: ("zero on web checkout" in "div by zero on web checkout" is no count).
_FAILURE_SIGN_RE = re.compile(
    r"[45](?:\d\d|xx)|error|exception|fail|timeout|latency|\bp\d\d", re.IGNORECASE
)
_STATUS_WORD_RE = re.compile(r"\b[45](?:\d\d|xx)s?\b", re.IGNORECASE)


def says_nothing_fails(text: str, *, slowness_fails: bool = True) -> bool:
    """Whether ``text`` says outright that nothing fails ("CPU 95%, no errors, latency fine").

    Quiet readings say so too ("503 rate 0%", "p95 0.3s, timeout 10s"), where they count a
    failure sign and no status is left beside them.

    Slowness ("just slow, no errors") still fails where ``slowness_fails``: it is the timeout
    family's failure, not an outage family's. Not after the reporter says it is over: "the
    slowness we had yesterday … it's fixed since the rollback" is a question about the past.
    """
    if _says_fixed(text):
        return True
    # A latency well inside the timeout the report sets beside it is no slowness.
    loud = without_zero_counts(text)
    slow = slowness_fails and SLOWNESS_RE.search(loud)
    if ALL_WELL_RE.search(text):
        return not slow
    # Measures read as quiet ("no errors", "503 rate 0%", "p95 0.3s, timeout 10s") say nothing
    # fails only where no status is left beside them: "502 rate 31%, cash tenders 0 errors".
    measured = any(_FAILURE_SIGN_RE.search(text[a:b]) for a, b in quiet_spans(text))
    if not (NO_TROUBLE_RE.search(text) or measured):
        return False
    return not _STATUS_WORD_RE.search(NO_TROUBLE_RE.sub(" ", loud)) and not slow


#: A duration, size or latency a structured line records (``"dur_ms":574``, ``bytes=412``,
#: ``p95_ms=503``): a number, not a 5xx.
_MEASURED_VALUE_RE = re.compile(
    r"\b[\w.]*(?:dur|duration|latency|elapsed|took|time|_ms|bytes|size|len|length|p\d\d)[\w.]*"
    r"\"?\s*[:=]\s*\"?\d+(?:\.\d+)?",
    re.IGNORECASE,
)


def shows_trouble(text: str) -> bool:
    """Whether ``text`` says something is failing (``TROUBLE_RE``), ``NO_TROUBLE_RE`` aside.

    Not where it says outright that all is well, slowness aside (``ALL_WELL_RE``), or that the
    trouble is over (``FIXED_RE``): the words of a question ("what read timeout …? Nothing is
    broken") are no failure.
    """
    if _says_fixed(text):
        return False
    if _says_outright(ALL_WELL_RE, text) and not SLOWNESS_RE.search(text):
        return False
    # "503 count 0", "no ZeroDivisionError since the fix": failures counted zero did not happen.
    told = NO_TROUBLE_RE.sub(" ", without_zero_counts(text))
    return bool(TROUBLE_RE.search(_MEASURED_VALUE_RE.sub(" ", told)))


def failure_conditions(text: str) -> list[str]:
    """The platform failure conditions ``text`` names (``FAILURE_CONDITIONS``), in table order."""
    return [name for name, pattern in FAILURE_CONDITIONS.items() if pattern.search(text)]


#: How a report frames what it tells as no live failure, whatever failure words it quotes: a
#: test or a drill, planned work, a closed incident, a runbook or an example.
SETTLED_RE = re.compile(
    r"\b(?:planned|scheduled|upcoming)\s+(?:maintenance|downtime|restart|outage|change|work)\b"
    r"|\bmaintenance[ _](?:window|notice)\b"
    r"|\b(?:tonight|tomorrow)\b[^.!?\n]{0,30}\bwe (?:will |'ll )?(?:restart|deploy|upgrade|migrate)"
    r"|\ball clear\b|\bnothing to do\b|\[resolved\]|\bcloses the incident\b"
    r"|\bno (?:further )?action (?:is )?(?:needed|required)\b|\bno further action\b"
    r"|\bnothing to escalate\b|\bclosing (?:INC|incident|ticket)\b|\bdeploy(?:ment)? note\b"
    r"|\b(?:already|has been|was) patched\b|\bcleared (?:on its own|by itself)\b"
    # A failure still to come: "the cert is 13 days from expiring", "will start to fail in 13
    # days".
    r"|\b\d+ days? (?:from|before|until) expir\w*|\bexpir(?:es|ing) in \d+ days?\b"
    r"|\bwill (?:start to )?fail in \d+ days?\b"
    # A closed incident's follow-up: "Action item from postmortem PM-2291 (CO-500 …)".
    r"|\bfrom (?:the |a |our |last \w+'s )?post-?mortem\b"
    r"|\bclosed (?:on )?(?:(?:mon|tues|wednes|thurs|fri|satur|sun)day|yesterday"
    r"|last (?:week|night|month))\b"
    r"|\b(?:logs?|screenshots?|traces?|alerts?|errors?) (?:from|of) (?:yesterday|last (?:week|night"
    r"|month)|the weekend)\b"
    r"|\b(?:resolved|closed|fixed|recovered)\s+(?:at\s+)?\d{1,2}[:.]\d{2}\b|\bstatus[ _]update\b"
    r"|\[test\]|\bsynthetic(?:[ _]?(?:alert|test|check|event|page|transaction)s?)\b"
    r"|\bsmoke test\b|\bplease ignore\b|\bignore (?:the|this|that) (?:page|alert|alarm)\b"
    r"|\bload test\b|\bgame ?day\b|\bchaos (?:test|experiment)\b|\bon purpose\b"
    r"|\bdeliberately\b|\bas expected\b|\btraining (?:tills?|mode|store)\b"
    r"|\brunbook (?:section|excerpt|page|draft|entry|question)\b|\bduplicate of\b"
    r"|\bclosing this\b|\bnothing (?:is |left |still )?open\b"
    r"|\bno open (?:incidents?|items?|issues?)\b"
    # A timeline or status page that ends the incident: "14:40 Resolved", "Status: Resolved",
    # "closing the bridge", "exercise complete, nothing to fix".
    r"|\b\d{1,2}[:.]\d{2}\s+(?:resolved|closed)\b|\bstatus\s*:\s*resolved\b"
    r"|\bclosing the (?:bridge|incident|ticket)\b|\bexercise complete\b|\bnothing to fix\b"
    # A chat or status post headed "RESOLVED: card payments are working again".
    r"|^\s*resolved\s*[:\-\u2013]"
    # "provider incident resolved per their status page, sanity-checking before I close the
    # ticket".
    r"|\b(?:incident|outage|issue)\s+(?:is |was |has been |now )?(?:resolved|closed|over)\b"
    r"|\bbefore (?:i|we) close (?:the|this) (?:ticket|incident)\b"
    # The same in the languages the stores write in: "Kein Handlungsbedarf, Ticket kann
    # geschlossen werden", "résolu", "resuelto", "risolto", "opgelost", "rozwiązane".
    r"|\bkein handlungsbedarf\b|\bkann geschlossen werden\b|\bl[äa]uft wieder\b"
    r"|\br[ée]solu\b|\bresuelto\b|\brisolto\b|\bopgelost\b|\brozwi[ąa]zan[ey]\b",
    re.IGNORECASE,
)

#: Where a sentence ends, to tell a statement from a question.
_QUESTION_END_RE = re.compile(r"[.!?\n]")


def states_settled(text: str) -> bool:
    """Whether ``text`` says what it tells is settled (``SETTLED_RE``), not asking whether.

    "Is this real or the planned restart?" asks; "planned restart tonight, expect 502s" says.
    """
    for match in SETTLED_RE.finditer(text):
        end = _QUESTION_END_RE.search(text, match.end())
        if end is None or end.group() != "?":
            return True
    return False


#: How a report frames what it tells as a question or a plan: no live failure, unless it also
#: tells one in the present tense.
ASKING_RE = re.compile(
    r"\bchange[ _](?:request|ticket)\b|\bCR-\d+\b|\bCAB\b"
    # A request, not a fault: "Service Request RITM0019934", "Feature request: could the till …".
    r"|\b(?:service|feature|access) request\b|\bRITM\d{4,}\b"
    r"|\bpost-?mortem (?:review|meeting|follow-?up|action)|\baction items?\b|\bAI-\d+\b"
    r"|\bcapacity planning\b|\bforecast\b|\bdecommission\w*|\bplanning for\b"
    r"|\bon-call matrix\b|\btoo noisy\b|\braise the threshold\b"
    # A how-to or configuration question: "how do we raise the pool size?", "what read timeout
    # does the payment client use?", "which field does the 422 name?", "what does … mean?".
    r"|(?:^|[.!?:]\s+)(?:how (?:do|can|should) (?:we|i|you)|how to|can we|could we|should we"
    r"|do we (?:need|have|switch|still)|is there a way|who (?:gets|owns|is on)"
    r"|which (?:field|setting|value|version|team|timeout)"
    r"|what (?:[\w-]+ ){0,3}(?:does|do|should) (?:[\w-]+ ){1,4}(?:use|name|return|need|send)"
    r"|what does\b[^?]{0,120}\bmean"
    r"|(?:can|could) (?:someone|anyone|you) (?:explain|tell me|help me understand)"
    r"|anything (?:we|i) (?:should|need to|must|have to) (?:act on|do about|worry about|look at)"
    r"|(?:asks?|asked|asking|wondering|wants? to know) (?:whether|if)"
    # "Is this normal? … same as every Monday, just checking before the weekly review."
    r"|(?:is|are) (?:this|that|it|these|those) (?:normal|expected|usual|ok|okay|a problem))"
    r"\b[^?]{0,200}\?",
    re.IGNORECASE,
)

#: A handover's item marked open: "3. OPEN: web orders hang", "* LIVE: all sales rejected".
_OPEN_ITEM = (
    r"^[ \t]*(?:[-*•]|\d+[.)])?[ \t]*(?:still[ \t]+)?(?:open|live|active|unresolved)"
    r"(?:[ \t]*:|[ \t]+[\u2013-][ \t])"
)
_OPEN_ITEM_RE = re.compile(_OPEN_ITEM, re.IGNORECASE | re.MULTILINE)
#: An item of a list: "- …", "* …", "3. …", "2) …".
_LIST_ITEM_RE = re.compile(r"^[ \t]*(?:[-*•]|\d+[.)])[ \t]+\S")


def live_items(text: str) -> str:
    """A handover's items marked open, and what is not a list item (its header, signature).

    "1) PLU 503 store 112 - resolved 03:10 … 3) STILL OPEN: /checkout returns 500": the
    closed items are the shift's history; only the open one is the incident. A text that
    marks no item open is returned whole.
    """
    if not _OPEN_ITEM_RE.search(text):
        return text
    kept = [
        line
        for line in text.splitlines()
        if _OPEN_ITEM_RE.match(line) or not _LIST_ITEM_RE.match(line)
    ]
    return "\n".join(kept)


#: What says the failure is happening now, whatever the report's framing: "we're hitting the
#: limit right now", "the window ran over and it still crash-loops", "but now stock 503s".
NOW_RE = re.compile(
    r"\bright now\b|\bcurrently (?:failing|down|erroring|broken|seeing|getting|hitting)\b"
    r"|\bstill (?:failing|down|erroring|broken|crash\w*|timing out|answering|returning|seeing)\b"
    # "again" beside what fails ("503s again", "again failing"); "scans return prices again"
    # is the recovery.
    r"|\b(?:[45]\d\ds?|5xx|fail\w*|down|erroring|errors?|time[sd]?[- ]?outs?|timing out"
    r"|crash\w*|broken|declin\w*|reject\w*)\b(?:\s+[\w-]+){0,3}?\s+again\b"
    r"|\bagain\b(?:\s+[\w-]+){0,3}?\s+(?:fail\w*|down|erroring|broken|timing out|crash\w*"
    r"|[45]\d\ds?)\b"
    r"|\bsince (?:around |about |approx\.? |~)?"
    r"(?:\d|then\b|(?:this|the) (?:morning|deploy|release|change|update))"
    r"|\bat the moment\b|\bas we speak\b|\bongoing\b|\bbut now\b|\bstill open\b|\bno fix yet\b"
    # A handover's item marked open: "3. OPEN: web orders hang", "* LIVE: all sales rejected".
    r"|" + _OPEN_ITEM + r"|\bran over\b|\bkeeps? (?:failing|crashing|timing out|erroring)\b"
    r"|\b(?:has|have) been (?:down|failing|hanging|erroring|timing out|crashing|broken)\b"
    r"|\bfor the (?:last|past) (?:\d+|few|couple)\b",
    re.IGNORECASE | re.MULTILINE,
)

#: A failure told in the present tense: "after CR-1182 went out, payments time out".
PRESENT_FAILURE_RE = re.compile(
    r"\b(?:is|are) (?:down|failing|erroring|timing out|crashing|broken)\b"
    r"|\b(?:fail|fails|failing|times? out|timing out|crash(?:es|ing)?|erroring|hangs?|hanging"
    r"|throws?|throwing|reject|rejects|rejecting|declines?|declining|broke|broken)\b"
    r"|\breturn(?:s|ing) (?:an? )?(?:[45]\d\d|errors?)\b"
    r"|\b(?:get|gets|getting) (?:an? )?(?:HTTP )?[45]\d\d\b|\b(?:is|are) full of\b",
    re.IGNORECASE,
)

#: A clause saying all is well, left out before looking for what fails now: "nothing is broken
#: right now", "working normally since 10:41", "production is healthy".
_WELL_CLAUSE_RE = re.compile(
    rf"(?:{ALL_WELL_RE.pattern}|{FIXED_RE.pattern}"
    r"|\bworking normally\b|\b(?:is|are|was|were) (?:healthy|fine|unaffected)\b"
    # "PLU health has been green since 09:12", "the 502 rate has been at baseline since 16:40",
    # "the PLU outage is resolved since 08:30": what is well since then, not what fails.
    r"|\b(?:green|healthy|fine|normal(?:ly)?|ok|okay|stable|clean|baseline|resolved|fixed"
    r"|recovered|mitigated)\b[^.;!?\n]{0,20}\bsince\b"
    # "all tills taking cards again since 09:26": the service doing its work again.
    r"|\b(?:taking|accepting|working|trading|selling|running|processing|approving|pricing"
    r"|answering)\b[^.;!?\n]{0,30}?\bagain\b[^.;!?\n]{0,20}\bsince\b)"
    r"[^.;!?\n]*",
    re.IGNORECASE,
)


#: A line of a handover or a status list marked over ("… since 13:06 ✅ RESOLVED"): what it
#: tells is not read for a failure happening now, unless the line says it is not over.
_RESOLVED_LINE_RE = re.compile(
    r"^(?![^\n]*\b(?:not|un|still|again)\b)[^\n]*\b(?:resolved|closed|mitigated)\b[^\n]*$",
    re.IGNORECASE | re.MULTILINE,
)


#: Where a reply quotes the earlier mail under it: "On Fri, 11 Apr 2025 at 09:15, IT Service
#: Desk wrote:" (quoted with "> " or not), "-----Original Message-----".
_REPLY_HEADER_RE = re.compile(
    r"^[ \t>]*(?:On\b[^\n]{0,200}\bwrote:|-{2,}\s*Original Message\s*-{2,})[ \t]*$",
    re.MULTILINE | re.IGNORECASE,
)


def without_quoted_reply(text: str) -> str:
    """``text`` without the earlier mail a reply quotes under it.

    "Tills can't find prices … > On Fri, IT wrote: > the stock lookup outage (inventory
    service 503) … is resolved": the quoted mail is last month's incident, not this report.
    """
    header = _REPLY_HEADER_RE.search(text)
    return text[: header.start()].rstrip() if header and header.start() > 0 else text


def told_now(message: str) -> str:
    """What a reporter's message tells of now, its history left out.

    Neither the earlier mail a reply quotes under it (``without_quoted_reply``) nor a
    handover's closed items (``live_items``).
    """
    return live_items(without_quoted_reply(message))


def says_not_live(text: str) -> bool:
    """Whether ``text`` frames what it tells as no live failure.

    A test, a drill, planned work, a closed incident, a runbook or the reporter saying all is
    well ("[TEST] synthetic alert", "load test … 503s, as expected", "nothing is broken, this
    is for the docs") is no live failure unless the report also says one is happening now
    (``NOW_RE``: "right now", "still crash-looping", "since 09:12"); a question or a plan
    ("what read timeout does the payment client use?", "CR-1182: raise the timeout", "AI-3
    from last month's CO-500 postmortem") not even when it tells a failure in the present
    tense ("after CR-1182 went out, payments time out"). What a clause saying all is well says
    ("nothing is broken right now", "working normally since 10:41") is not read for that.
    """
    spaced = text.replace("_", " ")
    settled = (
        bool(SETTLED_RE.search(spaced))
        or _says_fixed(spaced)
        or _says_outright(_NOTHING_WRONG_RE, spaced)
    )
    asking = bool(ASKING_RE.search(spaced))
    if not (settled or asking):
        return False
    told = _RESOLVED_LINE_RE.sub(" ", _WELL_CLAUSE_RE.sub(" ", spaced))
    if settled:
        # A timeline that ends the incident ("11:02 502s since 10:40 … 11:51 all clear,
        # closing the incident"): what was happening before its last settling line is history.
        last = max((m.start() for m in SETTLED_RE.finditer(told)), default=0)
        told = told[told.rfind("\n", 0, last) + 1 :]
    if NOW_RE.search(told):
        return False
    return settled or not PRESENT_FAILURE_RE.search(told)


#: A record from an environment that is not production (``[staging]``, ``[staging-lab]``,
#: ``(staging)``, ``env=staging``) or a fault a drill injected (``(injected fault)``), or
#: a sample of one (``example: ERROR pos-api PLU service unavailable``, an alert rule's
#: ``rule: …`` expression).
NOT_PRODUCTION_RE = re.compile(
    r"^\s*(?:example|sample)s?\b|^\s*(?:rule|expr)\s*:|^\s*(?:staging|stage|dev|qa|uat|sandbox)\b"
    r"|[\[(](?:staging|stage|test|dev|qa|uat|sandbox)(?:[-_][\w-]+)?[\])]"
    r"|\binjected (?:fault|failure|error|latency)\b"
    r"|\b(?:env|environment)\s*[=:]\s*[\"']?(?:staging|stage|test|dev|qa|uat|sandbox)\b",
    re.IGNORECASE,
)
