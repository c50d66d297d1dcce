"""PromQL for an incident: the shipped RED templates, rendering, and the alert's own expression.

A template is PromQL with placeholders in ``string.Template`` syntax (PromQL itself never uses
``$``): ``$service``, ``$job``, ``$instance`` and ``$alertname`` are the incident's label values
(escaped for a PromQL string), ``$window`` is the rate window chosen from the data. A template
naming a label the incident does not have is skipped, so the defaults run only for incidents
that name a ``service``.

The defaults follow the RED conventions of ``prometheus-client`` and most exporters:
``http_requests_total{service, code}`` for the 5xx ratio, ``http_request_duration_seconds``
buckets for the p95 latency, ``process_start_time_seconds`` changes for restarts, and ``up``.
An Alertmanager alert's ``generatorURL`` carries the rule's expression as ``g0.expr``; a
trailing comparison with a number (``… > 0.05``) is split off so the series shows its baseline,
not only the points where the rule held.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum
from string import Template
from urllib.parse import parse_qs, quote, urlsplit

from app.evidence.sources.base import CollectionRequest

#: Placeholders filled from the incident's labels.
LABEL_PLACEHOLDERS = ("service", "job", "instance", "alertname")


class Unit(StrEnum):
    """How a series' values are read and written in a summary."""

    RATIO = "ratio"
    SECONDS = "seconds"
    COUNT = "count"
    VALUE = "value"


@dataclass(frozen=True)
class QueryTemplate:
    """A named PromQL template.

    Attributes:
        name: Stable name (``error_ratio``); recorded as the item's ``template``.
        title: What the series is, as a summary starts: "5xx ratio", "p95 latency".
        query: PromQL with ``$service``, ``$job``, ``$instance``, ``$alertname``, ``$window``.
        unit: How values are written.
        flat_below: A change smaller than this counts as flat (default per unit).
    """

    name: str
    title: str
    query: str
    unit: Unit = Unit.VALUE
    flat_below: float | None = None


RED_TEMPLATES: tuple[QueryTemplate, ...] = (
    QueryTemplate(
        name="error_ratio",
        title="5xx ratio",
        unit=Unit.RATIO,
        # ``or vector(0)``: with no 5xx series at all the ratio is 0 (flat), not missing.
        query=(
            '(sum(rate(http_requests_total{service="$service",code=~"5.."}[$window]))'
            " or vector(0))"
            ' / sum(rate(http_requests_total{service="$service"}[$window]))'
        ),
    ),
    QueryTemplate(
        name="latency_p95",
        title="p95 latency",
        unit=Unit.SECONDS,
        query=(
            "histogram_quantile(0.95, sum by (le) "
            '(rate(http_request_duration_seconds_bucket{service="$service"}[$window])))'
        ),
    ),
    QueryTemplate(
        name="restarts",
        title="restarts",
        unit=Unit.COUNT,
        query='sum(changes(process_start_time_seconds{service="$service"}[$window]))',
    ),
    QueryTemplate(
        name="up",
        title="up",
        unit=Unit.VALUE,
        query='min(up{service="$service"})',
    ),
)

_COMPARISON_RE = re.compile(
    r"(==|!=|>=|<=|>|<)\s*(?:bool\s+)?([-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?)\s*$"
)
_ANY_COMPARISON_RE = re.compile(r"==|!=|>=|<=|>|<")
_SET_OPERATOR_RE = re.compile(r"\b(?:and|or|unless)\b")


def escape_label_value(value: str) -> str:
    """``value`` escaped for a double-quoted PromQL string."""
    return value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")


def render(template: QueryTemplate, request: CollectionRequest, window: str) -> str | None:
    """The template's PromQL for ``request``; None when it needs a label the incident lacks.

    Args:
        template: The template.
        request: The collection request (its service and labels fill the placeholders).
        window: The rate window, e.g. ``"4s"``.

    Returns:
        The PromQL, or None.
    """
    text = Template(template.query)
    values: dict[str, str] = {"window": window}
    for name in text.get_identifiers():
        if name == "window":
            continue
        value = request.label(name) if name in LABEL_PLACEHOLDERS else None
        if value is None:
            return None
        values[name] = escape_label_value(value)
    return text.safe_substitute(values)


def alert_expression(generator_url: str) -> str | None:
    """The alerting rule's expression carried by an alert's ``generatorURL`` (``g0.expr``).

    Args:
        generator_url: The alert's ``generatorURL`` (may be empty).

    Returns:
        The expression, or None when the URL carries none.
    """
    if not generator_url:
        return None
    values = parse_qs(urlsplit(generator_url).query).get("g0.expr")
    expression = values[0].strip() if values else ""
    return expression or None


def _top_level_text(expression: str) -> str:
    """``expression`` with everything inside brackets and strings blanked out."""
    out: list[str] = []
    depth = 0
    quote_char = ""
    escaped = False
    for char in expression:
        if quote_char:
            if escaped:
                escaped = False
            elif char == "\\":
                escaped = True
            elif char == quote_char:
                quote_char = ""
            out.append(" ")
            continue
        if char in "\"'`":
            quote_char = char
            out.append(" ")
        elif char in "([{":
            depth += 1
            out.append(" ")
        elif char in ")]}":
            depth = max(0, depth - 1)
            out.append(" ")
        else:
            out.append(char if depth == 0 else " ")
    return "".join(out)


def split_threshold(expression: str) -> tuple[str, str, float] | None:
    """The series part of ``<series> <op> <number>``, its operator and the threshold.

    Only a single top-level comparison with a number on the right is split; expressions
    combining several (``and``, ``or``, ``unless``) are left whole.

    Args:
        expression: An alerting rule's expression.

    Returns:
        ``(series, operator, threshold)``, or None when the expression is not of that form.
    """
    top = _top_level_text(expression)
    if _SET_OPERATOR_RE.search(top):
        return None
    match = _COMPARISON_RE.search(top)
    # The blanked text keeps every position, so its match positions index the expression.
    if match is None or _ANY_COMPARISON_RE.search(top[: match.start()]):
        return None
    series = expression[: match.start()].strip()
    return (series, match.group(1), float(match.group(2))) if series else None


def graph_url(base_url: str, query: str, start: datetime, end: datetime, step: float) -> str:
    """A link to the query on the Prometheus graph page, over the collected range.

    Args:
        base_url: The Prometheus base URL.
        query: The PromQL.
        start: Range start.
        end: Range end.
        step: Resolution in seconds.

    Returns:
        The URL.
    """
    seconds = max(1, round((end - start).total_seconds()))
    end_text = end.strftime("%Y-%m-%d %H:%M:%S")
    return (
        f"{base_url.rstrip('/')}/graph?g0.expr={quote(query, safe='')}&g0.tab=0"
        f"&g0.range_input={seconds}s&g0.end_input={quote(end_text)}"
        f"&g0.step_input={max(1, round(step))}"
    )
