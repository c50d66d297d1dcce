"""Observed signals from collected metric series: what a series' trend says about the incident.

A collected log record is read like a pasted log line (its summary and lines go through
``app.evidence.signals.incident_texts``): exceptions, codes and statuses come from its text.
A metric series' summary names no status, so its ``facts`` are read here instead:

- the shipped 5xx ratio (``facts.template == "error_ratio"``) **rising** -- a step, ramp or
  spike -- is an observed ``5xx`` (kind ``status``, value ``5xx``): it confirms a family that
  expects a 5xx status on its class and speaks against a 4xx family, like a 5xx log line;
- the same ratio **flat** is a ``status_flat`` observation of ``5xx``: the service did *not*
  answer 5xx in the window. It speaks against a family that expects a 5xx status, unless the
  incident shows that status elsewhere; the diagnosis' status rule reads it.

Every signal carries the series' id (``prom:<hash>``), so a cause claim can cite it.
``app.evidence.signals.observe_incident`` turns them into its ``Observation``s (source
``collected``); this module imports nothing from it, so that one can import this one.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, NamedTuple

#: ``app.evidence.signals.STATUS``: an HTTP status (here a class, ``5xx``).
STATUS = "status"
#: A status class the collected metrics show stayed flat (kind of an ``Observation``).
STATUS_FLAT = "status_flat"
#: The template whose series is the 5xx ratio, and the class it measures.
ERROR_RATIO_TEMPLATE = "error_ratio"
ERROR_RATIO_CLASS = "5xx"


class MetricSignal(NamedTuple):
    """One signal a collected series shows."""

    kind: str
    value: str
    evidence_id: str


def metric_signals(collected: Iterable[Mapping[str, Any]]) -> list[MetricSignal]:
    """The signals the collected metric series show, each tied to the series' id.

    Args:
        collected: Collected items (``CollectedItem.as_dict``); log records are skipped.

    Returns:
        ``status`` ``5xx`` for a rising 5xx ratio, ``status_flat`` ``5xx`` for a flat one.
    """
    found: list[MetricSignal] = []
    for item in collected:
        facts = item.get("facts") or {}
        if item.get("kind") != "metric" or facts.get("template") != ERROR_RATIO_TEMPLATE:
            continue
        evidence_id = str(item.get("id") or "")
        if not evidence_id:
            continue
        trend = str(facts.get("trend") or "")
        if trend == "rising":
            found.append(MetricSignal(STATUS, ERROR_RATIO_CLASS, evidence_id))
        elif trend == "flat":
            found.append(MetricSignal(STATUS_FLAT, ERROR_RATIO_CLASS, evidence_id))
    return found
