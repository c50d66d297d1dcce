"""A signal counted zero is not seen: "503 count 0", "0 ZeroDivisionError events", "504=0".

Dashboards, weekly reports and health summaries name the failures they did *not* see: "no
ZeroDivisionError in checkout logs last 24h", "payments: 503=0, 504: 0", "inventory API 503
count 0", "2xx 18,220 / 5xx 0"; nor is one counted at its usual level ("422 rate 0.02%
(baseline)"), nor a latency well inside the timeout beside it ("p95 0.3s, timeout 10s"), nor
an error rate under half a percent. Read as observations, every such line confirms the family
it names, and its failure words make it a failing record. ``quiet_spans`` finds those readings
(``ZERO_COUNT_RE``, a measure beside its baseline, latencies against their limits, low error
rates); a value is left out where every place a piece of evidence writes it is inside one, and
the readings are left out before a text is read for trouble (``app.evidence.trouble``).
"""

from __future__ import annotations

import re
from functools import lru_cache

_COUNT_LABEL = (
    r"(?:count|counts|events?|errors?|hits?|total|ratio|rate|share|responses?|requests?|seen)"
)
_ZERO = r"0(?:\.0+)?(?!\d|[.,]\d)"
#: The window, labels or words a count is over: "502 count 24h: 0", "errors (last 1h) = 0",
#: "502 rate store=0012 0.0%", "502 rate across estate 0.0%".
_WINDOW = (
    r"(?:\s+\(?(?:(?:last|past)\s+)?\d+\s*(?:s|m|h|d|w|mins?|hours?|days?)\)?)?"
    r"(?:\s+(?:[\w.-]+=[\w.-]+|[A-Za-z][\w-]*)){0,3}?"
)
#: A measure said to be at its usual level: "(baseline)", "at baseline", "back to baseline".
AT_BASELINE = r"\(baseline\)|\b(?:at|to|within)\s+baseline\b(?!\s*[\d<>~=])|\bas usual\b"
#: A signal as a record writes it: a status, an exception's name, a metric (not a bare store
#: or order number: "store 0233: 0 failed authorisations" counts the failures, not the store).
_NAME = r"(?:[1-5]\d\d|(?=[\w.-]*[A-Za-z_])[\w.-]*\w)"
#: A count of zero. A bare number after a status is not one: an access log writes "503 0" for
#: a 503 with an empty body.
ZERO_COUNT_RE = re.compile(
    # "503 count 0", "ZeroDivisionError events: 0", "503=0", "504: 0", "503 rate back to 0"
    rf"\b{_NAME}(?:/{_NAME})*\s*(?:{_COUNT_LABEL}{_WINDOW}\s*"
    r"(?:=>|[:=]|(?:(?:is|was)\s+)?(?:(?:back|down|dropped)\s+)?(?:to|at)\b)?\s*"
    rf"|(?:=>|[:=])\s*){_ZERO}\s*%?"
    # A query's result: "gateway 502 on /chiller => 0", "sum(rate(…{code=\"503\"}[5m])) => 0",
    # "…{status=\"502\"}[15m])) => 0"
    rf"|\b{_NAME}(?:/{_NAME})*(?:\s+on\s+\S+)?\s*=>\s*{_ZERO}(?!\s*%?\s*[/.,\d])"
    rf"|\b(?:code|status(?:_code)?)=~?\"?[1-5](?:\d\d|\.\.|xx)\"?[^\n=]{{0,40}}=>\s*{_ZERO}(?![/.,\d])"
    # "408 0.00%", and a status class's bare count: "2xx 18,220 / 5xx 0"
    rf"|\b{_NAME}\s+{_ZERO}\s*%|\b[1-5]xx\s+{_ZERO}"
    # "422 rate last 1h: 0.02% (baseline)": a rate at its usual level is no failure either
    # ("… (baseline 0.1%)" or "above baseline" is the comparison that shows a spike)
    rf"|\b{_NAME}\s+(?:{_COUNT_LABEL})\b[^\n;(]{{0,30}}?(?:{AT_BASELINE})"
    # "0 ZeroDivisionError events", "zero 503s"
    rf"|(?:\bzero|(?<![\d.,:/-])\b0)\s+(?:new\s+)?{_NAME}"
    # "no ZeroDivisionError in checkout logs", "without a 503" (an exception's own name: "no
    # error-rate monitor is firing" is not a count)
    r"|\b(?:no|without|never)\s+(?:an?\s+|new\s+|more\s+|further\s+)?"
    r"(?:(?-i:[A-Z]\w*(?:Error|Exception))\b|[1-5]\d\d\b|[1-5]xx\b)",
    re.IGNORECASE,
)


#: A measure written beside its usual level: "408/504 rate 0.02% (baseline 0.02%)", "502 rate
#: 0.02%, baseline 0.03%", "lines=4 (baseline 5)", "p95 410 ms vs usual 430 ms", "HTTP 504 share
#: (baseline 0.2%): 0.18%". At most half as much again is that level; "5xx rate 40% (baseline
#: 0.1%)" is the spike.
_USUAL = r"(?:baseline|usual|normal|typical)\s*[:=~]?\s*"
_BESIDE_BASELINE_RE = re.compile(
    rf"\b{_NAME}(?:/{_NAME})*(?:\s+{_COUNT_LABEL}{_WINDOW})?(?:\s*(?:=>|[:=])\s*|\s+)"
    r"(?P<now>\d+(?:\.\d+)?)\s*(?:%|ms|s)?\s*"
    rf"(?:\(\s*|,\s*|\s+(?:vs\.?|versus|against)\s+){_USUAL}"
    r"(?P<usual>\d+(?:\.\d+)?)\s*(?:%|ms|s)?\s*\)?"
    # The baseline first, as a panel's title writes it: "HTTP 504 share (baseline 0.2%): 0.18%".
    rf"|\b{_NAME}(?:\s+{_COUNT_LABEL})?\s*\(\s*{_USUAL}(?P<usual_first>\d+(?:\.\d+)?)\s*"
    r"(?:%|ms|s)?\s*\)\s*(?:=>|[:=])?\s*(?P<now_after>\d+(?:\.\d+)?)\s*(?:%|ms|s)?",
    re.IGNORECASE,
)
_USUAL_MARGIN = 1.5

#: Seconds per unit of a duration as reports write it.
_SECONDS = {"ms": 0.001, "s": 1.0, "sec": 1.0, "secs": 1.0, "second": 1.0, "seconds": 1.0}
_UNIT = r"(?:ms|secs?|seconds?|s)\b"
#: A timeout or latency objective *setting*, not a timeout that happened: "timeout 10s",
#: "timeout_ms=10000", "client timeout 25 s", "against a 10s timeout", "SLO 800ms".
_LIMIT_RE = re.compile(
    r"\b(?:(?:client|read|request|connect|upstream|socket)[\s_-]+)?(?:timeout|slo)"
    r"(?:[_-](?P<named>ms|s))?\s*(?:[:=]|of|is|at)?\s*"
    rf"(?P<value>\d+(?:\.\d+)?)\s*(?P<unit>{_UNIT})?"
    rf"|\b(?P<value2>\d+(?:\.\d+)?)\s*(?P<unit2>{_UNIT})\s+(?:(?:client|read|request)\s+)?"
    r"(?:timeout|slo)\b",
    re.IGNORECASE,
)
#: A latency measure: "p95 0.3s", "p99 1.8 s", "p95_latency_ms=410", "latency p95: 0.6s".
_LATENCY_RE = re.compile(
    r"\b(?:(?:latency|response[ _]time)\s+)?(?:p\d{2,3}(?:[_ ]latency)?|latency|response[ _]time)"
    r"(?:[_-](?P<named>ms|s))?"
    # "p95 (timeout 30s): 1.9s": the panel's limit between the measure and its value.
    r"(?:\s*\([^()]{0,30}\))?\s*[:=]?\s*"
    rf"(?P<value>\d+(?:\.\d+)?)\s*(?P<unit>{_UNIT})?",
    re.IGNORECASE,
)
#: At most this share of its limit, a latency is well inside it.
_WELL_INSIDE = 0.5
#: An error rate this low, with no baseline beside it, is a working service's: "error rate 0.1%".
_LOW_ERROR_RATE_RE = re.compile(
    r"\b(?:error|errors|5xx|failure)[\s_-]*(?:rate|ratio)\s*(?:[:=]|is|of|at)?\s*"
    r"(?P<rate>\d+(?:\.\d+)?)\s*%(?!\s*[(,]?\s*(?:vs\.?\s+)?(?:baseline|usual|normal))",
    re.IGNORECASE,
)
_LOW_ERROR_RATE = 0.5


def _seconds(match: re.Match[str], value: str, unit: str) -> float | None:
    """A duration's seconds; None where neither the number nor the name gives a unit."""
    written = match[unit] or match["named"]
    if not written or match[value] is None:
        return None
    return float(match[value]) * _SECONDS[written.lower()]


def _latency_spans(text: str) -> list[tuple[int, int]]:
    """Latencies well inside the timeout or objective the same text sets, and those settings.

    "payments p95 0.3s, timeout 10s" is a working service's latency beside a setting: neither
    the "timeout" nor the "p95" tells of a failure. "p95 9.8s against a 10s timeout" does.
    """
    limits = []
    for m in _LIMIT_RE.finditer(text):
        seconds = _seconds(m, "value", "unit") if m["value"] else _seconds(m, "value2", "unit2")
        if seconds is not None:
            limits.append((m.start(), m.end(), seconds))
    latencies = []
    for m in _LATENCY_RE.finditer(text):
        seconds = _seconds(m, "value", "unit")
        if seconds is not None:
            latencies.append((m.start(), m.end(), seconds))
    if not limits or not latencies:
        return []
    if max(s for _, _, s in latencies) > _WELL_INSIDE * min(s for _, _, s in limits):
        return []
    return [(start, end) for start, end, _ in limits + latencies]


@lru_cache(maxsize=1024)
def quiet_spans(text: str) -> tuple[tuple[int, int], ...]:
    """Where ``text`` counts a signal zero or writes it at its usual level.

    Read once per text: every status and exception a piece shows asks it again.
    """
    spans = [(m.start(), m.end()) for m in ZERO_COUNT_RE.finditer(text)]
    spans += [
        (m.start(), m.end())
        for m in _BESIDE_BASELINE_RE.finditer(text)
        if float(m["now"] or m["now_after"])
        <= _USUAL_MARGIN * float(m["usual"] or m["usual_first"])
    ]
    spans += [
        (m.start(), m.end())
        for m in _LOW_ERROR_RATE_RE.finditer(text)
        if float(m["rate"]) < _LOW_ERROR_RATE
    ]
    return tuple(spans + _latency_spans(text))


def counted_zero(text: str, value: str) -> bool:
    """Whether every place ``text`` writes ``value`` is inside a count of zero.

    A value the text does not write literally (a canonical condition name) is never zeroed.
    """
    places = [
        (m.start(), m.end())
        for m in re.finditer(re.escape(value), text, re.IGNORECASE)
        if not _glued(text, m.start(), m.end())
    ]
    if not places:
        return False
    counts = quiet_spans(text)
    return all(any(s <= start and end <= e for s, e in counts) for start, end in places)


def without_zero_counts(text: str) -> str:
    """``text`` with its counts of zero and its measures at their usual level blanked out."""
    kept: list[str] = []
    at = 0
    for start, end in sorted(quiet_spans(text)):
        if start >= at:
            kept += [text[at:start], " "]
        at = max(at, end)
    return "".join([*kept, text[at:]])


def _glued(text: str, start: int, end: int) -> bool:
    """Whether a match is part of a longer word or number (``1503``, ``MyZeroDivisionError``)."""
    before = text[start - 1] if start > 0 else " "
    after = text[end] if end < len(text) else " "
    return before.isalnum() or after.isalnum()
