"""The investigation evaluation: alerts whose text is ambiguous, decided by what was collected.

Each scenario is a folder of ``data/eval/investigation/`` (see its README):

- ``incident.json``: ``{"incident": {…}, "expected_error_code": "PAY-408" | null}`` -- the alert
  as the intake writes it, without ``started_at`` (the runner sets it);
- ``series.om``: OpenMetrics samples whose timestamps are seconds relative to the incident time
  (``-900`` … ``240``);
- ``logs/*.log``: log files whose times are written ``{t-120}`` (seconds relative to it).

``run_investigation`` gives every scenario its own incident time, an hour apart, renders the
series and logs at those times, backfills ONE real Prometheus with all of them
(``app.evaluation.backfill``) and writes one sources file naming each service's rendered logs.
Then the product's own graph (``GraphAnalyzer``) runs every incident twice: with the collector
the settings build (``RCA_PROMETHEUS_URL`` + ``RCA_SOURCES_FILE``) and without any source. The
collector replays history: its window ends a few minutes after the incident time instead of
now, so a later scenario of the same service is never in an earlier one's window.
"""

from __future__ import annotations

import json
import re
import tempfile
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import yaml

from app.core.config import Settings
from app.core.errors import ConfigurationError
from app.evaluation.backfill import backfilled_prometheus, merge_openmetrics
from app.evaluation.cases import IncidentCase
from app.evaluation.product import graph_analyzer
from app.evaluation.scoring import CaseResult
from app.evidence.sources.base import CollectionRequest, iso, parse_time
from app.evidence.sources.collector import EvidenceCollector, build_collector

#: How long after the incident time a replayed collection looks.
SETTLE = timedelta(minutes=4)
#: Scenario incident times lie this far apart, so their windows never overlap.
SPACING = timedelta(hours=1)
COLLECTED_PREFIXES = ("prom:", "log:")
_LOG_TIME_RE = re.compile(r"\{t(?P<offset>[+-]\d+)?\}")
_OFFSET_RE = re.compile(r"^(?P<head>.*\s)(?P<offset>[+-]?\d+)$")


@dataclass(frozen=True)
class Scenario:
    """One scenario folder, read."""

    slug: str
    folder: Path
    incident: dict[str, Any]
    expected_error_code: str | None

    @property
    def service(self) -> str:
        """The incident's service (its logs are read for it)."""
        return str(self.incident.get("service") or "")


def load_scenarios(root: Path, only: Sequence[str] = ()) -> list[Scenario]:
    """The scenario folders under ``root`` (or just the slugs in ``only``), in name order.

    Raises:
        ConfigurationError: A folder lacks ``incident.json`` or it is malformed.
    """
    folders = sorted(p for p in root.iterdir() if (p / "incident.json").is_file())
    if only:
        folders = [p for p in folders if p.name in only]
    if not folders:
        raise ConfigurationError(f"no investigation scenarios under {root}")
    scenarios = []
    for folder in folders:
        try:
            data = json.loads((folder / "incident.json").read_text(encoding="utf-8"))
            scenarios.append(
                Scenario(folder.name, folder, dict(data["incident"]), data["expected_error_code"])
            )
        except (ValueError, KeyError, TypeError) as exc:
            raise ConfigurationError(f"{folder.name}/incident.json: {exc}") from exc
    return scenarios


def render_series(text: str, at: datetime) -> str:
    """``series.om`` with its relative timestamps made absolute around ``at``."""
    base = at.timestamp()
    lines = []
    for line in text.splitlines():
        match = _OFFSET_RE.match(line)
        if line.startswith("#") or match is None:
            lines.append(line)
        else:
            lines.append(f"{match.group('head')}{base + int(match.group('offset')):.0f}")
    return "\n".join(lines) + "\n"


def render_log(text: str, at: datetime) -> str:
    """A log file with its ``{t-120}`` times written as ISO 8601 UTC."""

    def stamp(match: re.Match[str]) -> str:
        moment = at + timedelta(seconds=int(match.group("offset") or 0))
        return moment.strftime("%Y-%m-%dT%H:%M:%SZ")

    return _LOG_TIME_RE.sub(stamp, text)


def incident_times(count: int, now: datetime) -> list[datetime]:
    """One incident time per scenario, an hour apart, the latest an hour ago."""
    latest = now.replace(minute=0, second=0, microsecond=0) - SPACING
    return [latest - SPACING * i for i in range(count)]


class ReplayCollector(EvidenceCollector):
    """The product's collector, replaying a past incident: the window ends soon after it."""

    def __init__(self, collector: EvidenceCollector, settle: timedelta = SETTLE) -> None:
        super().__init__(
            collector.sources,
            timeout_seconds=collector.timeout_seconds,
            budget_seconds=collector.budget_seconds,
            lookback=collector.lookback,
        )
        self.settle = settle

    def request_for(
        self, incident: Mapping[str, Any], reported_at: str | None, now: datetime
    ) -> CollectionRequest:
        """The product's request, as if collected ``settle`` after the incident time."""
        at = parse_time(incident.get("started_at")) or now
        return super().request_for(incident, reported_at, min(now, at + self.settle))


@dataclass(frozen=True)
class Stage:
    """What a run needs: the rendered incidents, the Prometheus URL and the sources file."""

    incidents: dict[str, dict[str, Any]]
    prometheus_url: str
    sources_file: Path


@contextmanager
def staged(scenarios: Sequence[Scenario], now: datetime | None = None) -> Iterator[Stage]:
    """Render every scenario at its time, backfill one real Prometheus, write the sources file."""
    times = incident_times(len(scenarios), now or datetime.now(UTC))
    with tempfile.TemporaryDirectory(prefix="rca-investigation-") as tmp:
        folder = Path(tmp)
        globs: dict[str, list[str]] = {}
        incidents: dict[str, dict[str, Any]] = {}
        series: list[str] = []
        for scenario, at in zip(scenarios, times, strict=True):
            incidents[scenario.slug] = {**scenario.incident, "started_at": iso(at)}
            om = scenario.folder / "series.om"
            if om.is_file():
                series.append(render_series(om.read_text(encoding="utf-8"), at))
            logs = sorted((scenario.folder / "logs").glob("*.log"))
            for log in logs:
                out = folder / scenario.slug / log.name
                out.parent.mkdir(parents=True, exist_ok=True)
                out.write_text(render_log(log.read_text(encoding="utf-8"), at), encoding="utf-8")
            if logs:
                globs.setdefault(scenario.service, []).append(f"{scenario.slug}/*.log")
        sources = folder / "sources.yaml"
        services = {name: {"logs": patterns} for name, patterns in globs.items()}
        sources.write_text(yaml.safe_dump({"services": services}), encoding="utf-8")
        with backfilled_prometheus(merge_openmetrics(series)) as url:
            yield Stage(incidents, url, sources)


def collected_citations(result: CaseResult) -> list[str]:
    """The collected items (``prom:`` / ``log:``) the first hypothesis cites."""
    hypotheses = result.analysis.rca.get("hypotheses") or []
    if not hypotheses:
        return []
    cited = [
        str(citation.get("id"))
        for claim in hypotheses[0].get("claims") or []
        for citation in claim.get("evidence") or []
    ]
    return list(dict.fromkeys(c for c in cited if c.startswith(COLLECTED_PREFIXES)))


def weighed_collected(result: CaseResult) -> dict[str, list[str]]:
    """The leading candidate's signals that collected items confirmed or contradicted.

    Returns:
        ``{"confirmed": ["status_class 5xx <- prom:…", …], "contradicted": […]}``.
    """
    candidates = (result.analysis.diagnosis or {}).get("candidates") or []
    out: dict[str, list[str]] = {"confirmed": [], "contradicted": []}
    if not candidates:
        return out
    for side in out:
        for hit in candidates[0].get(side) or []:
            ids = [i for i in hit.get("evidence_ids") or [] if i.startswith(COLLECTED_PREFIXES)]
            if ids:
                out[side].append(f"{hit['kind']} {hit['signal']} <- {', '.join(ids)}")
    return out


def _summary(results: Sequence[CaseResult]) -> dict[str, Any]:
    in_domain = [r for r in results if r.in_domain]
    hits = sum(r.hit(1) for r in in_domain)
    return {
        "scenarios": len(results),
        "correct": round(sum(r.correct for r in results) / len(results), 4),
        "hit@1": round(hits / len(in_domain), 4) if in_domain else None,
        "abstained": sum(r.abstained for r in results),
        "citing_collected": sum(bool(collected_citations(r)) for r in results),
    }


def _row(result: CaseResult) -> dict[str, Any]:
    return {
        "got": result.got,
        "correct": result.correct,
        "abstained": result.abstained,
        "band": result.band,
        "cited_collected": collected_citations(result),
        "weighed_collected": weighed_collected(result),
    }


def run_investigation(
    scenarios: Sequence[Scenario], settings: Settings, now: datetime | None = None
) -> dict[str, Any]:
    """Score every scenario with and without collection through the product's graph.

    Args:
        scenarios: The scenarios (``load_scenarios``).
        settings: The service settings; the Prometheus URL and sources file are set here.
        now: The present (default: the clock); incident times lie before it.

    Returns:
        ``{"with": summary, "without": summary, "scenarios": {slug: {"expected", "with",
        "without"}}}``.
    """
    with staged(scenarios, now) as stage:
        configured = settings.model_copy(
            update={"prometheus_url": stage.prometheus_url, "sources_file": stage.sources_file}
        )
        collector = build_collector(configured)
        if collector is None:
            raise ConfigurationError("no evidence source configured")
        runs: dict[str, list[CaseResult]] = {}
        seconds: dict[str, float] = {}
        for mode, source in (("with", ReplayCollector(collector)), ("without", None)):
            with graph_analyzer(settings, collector=source) as analyzer:
                runs[mode] = [
                    CaseResult(
                        IncidentCase(s.slug, stage.incidents[s.slug], s.expected_error_code),
                        analyzer(stage.incidents[s.slug]),
                    )
                    for s in scenarios
                ]
                seconds[mode] = round(sum(analyzer.seconds) / len(analyzer.seconds), 4)
    rows = {
        s.slug: {
            "expected": s.expected_error_code,
            "with": _row(with_),
            "without": _row(without),
        }
        for s, with_, without in zip(scenarios, runs["with"], runs["without"], strict=True)
    }
    return {
        "with": {**_summary(runs["with"]), "mean_seconds_per_incident": seconds["with"]},
        "without": {**_summary(runs["without"]), "mean_seconds_per_incident": seconds["without"]},
        "scenarios": rows,
    }


def format_investigation(report: Mapping[str, Any]) -> str:
    """The with/without table, one row per scenario, then the totals."""
    header = f"{'scenario':<24}{'expected':<18}{'with':<20}{'cites':<28}{'without':<16}"
    lines = [header, "-" * len(header)]
    for slug, row in report["scenarios"].items():
        cited = ",".join(c.split(":", 1)[0] for c in row["with"]["cited_collected"]) or "-"
        mark = {True: "✓", False: "✗"}
        got_with = f"{row['with']['got']} {mark[row['with']['correct']]}"
        got_without = f"{row['without']['got']} {mark[row['without']['correct']]}"
        expected = row["expected"] or "abstain"
        lines.append(f"{slug:<24}{expected:<18}{got_with:<20}{cited:<28}{got_without:<16}")
    lines.append("")
    lines.append(f"{'':<24}{'correct':>9}{'hit@1':>8}{'abstained':>11}{'cite prom/log':>15}")
    for mode in ("with", "without"):
        s = report[mode]
        hit = "-" if s["hit@1"] is None else f"{s['hit@1']:.3f}"
        lines.append(
            f"{mode + ' collection':<24}{s['correct']:>9.3f}{hit:>8}{s['abstained']:>11}"
            f"{s['citing_collected']:>15}"
        )
    return "\n".join(lines)
