"""The postmortem of a decided incident, built from its record and its audit trail.

``build_postmortem`` is a pure function: the incident as the API returns it and the audit events
in, a ``Postmortem`` out, with every citation of the final RCA turned into a numbered footnote
that quotes the evidence. ``app.incidents.postmortem_markdown`` renders it as Markdown.

Impact comes from collected metric evidence (``collected_evidence`` items of kind ``metric``)
when the incident has any, else from what the report says. An incident opened by Alertmanager
has the alert's start in its first log line and its resolution in an ``alert_resolved`` event.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from typing import Any

from pydantic import BaseModel, Field

from app.core.errors import Conflict
from app.incidents.repository import AuditEvent
from app.rca.evidence import incident_evidence
from app.schemas import IncidentPublic, IncidentStatus

#: The first log line of an incident opened by Alertmanager (``app.intake.alertmanager``).
_ALERT_LINE = re.compile(r"^alertmanager .*\balert=(?P<name>\S+).*\bstartsAt=(?P<at>\S+)")
DECIDED = (IncidentStatus.APPROVED, IncidentStatus.REJECTED)
EVIDENCE_CHARS = 400


class TimelineEntry(BaseModel):
    """One moment of the incident."""

    at: str = Field(description="ISO 8601, UTC.")
    kind: str = Field(description="alert_fired, created, draft, decision, assignment, …")
    actor: str | None = None
    description: str
    comment: str | None = None


class Footnote(BaseModel):
    """One piece of cited evidence, quoted."""

    number: int
    evidence_id: str
    source: str = Field(description="What the evidence is: incident, knowledge doc, metric, …")
    quote: str = Field(description="The words the RCA relied on.")
    verbatim: bool = Field(description="The quote appears word for word in the evidence.")
    evidence: str = Field(
        description="What the evidence says where the quote is not verbatim (clipped), else empty."
    )


class CauseClaim(BaseModel):
    """A statement of the root cause and the footnotes it rests on."""

    text: str
    footnotes: list[int] = Field(default_factory=list)


class RootCause(BaseModel):
    """The leading hypothesis of the final RCA."""

    statement: str
    error_code: str | None = None
    confidence: str
    claims: list[CauseClaim] = Field(default_factory=list)


class Postmortem(BaseModel):
    """A postmortem draft for one decided incident."""

    incident_id: str
    title: str
    status: IncidentStatus
    decided_by: str | None = None
    decided_at: str | None = None
    summary: str
    impact: list[str]
    timeline: list[TimelineEntry]
    root_cause: RootCause | None = None
    ruled_out: list[str]
    remediation: list[str]
    validation: list[str]
    action_items: list[str]
    footnotes: list[Footnote]


def _clip(text: str, limit: int = EVIDENCE_CHARS) -> str:
    text = " ".join(str(text).split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _words(text: str) -> str:
    return " ".join(str(text).split()).casefold()


def parse_time(at: str | None) -> datetime | None:
    """An ISO 8601 time in UTC (naive times are taken as UTC), or None."""
    try:
        moment = datetime.fromisoformat(str(at).replace("Z", "+00:00"))
    except ValueError:
        return None
    return moment.astimezone(UTC) if moment.tzinfo else moment.replace(tzinfo=UTC)


def format_time(at: str | None) -> str:
    """``2026-11-29 10:00:01Z`` for an ISO 8601 time; the text as given when it is not one."""
    moment = parse_time(at) if at else None
    if moment is None:
        return at or "—"
    return moment.strftime("%Y-%m-%d %H:%M:%SZ")


def _sort_key(at: str) -> datetime:
    return parse_time(at) or datetime.max.replace(tzinfo=UTC)


def _title(incident: Mapping[str, Any]) -> str:
    what = incident.get("error_code") or incident.get("event") or "Incident"
    service = f" on {incident['service']}" if incident.get("service") else ""
    return f"{what}{service}"


def _collected(record: IncidentPublic) -> list[dict[str, Any]]:
    # ``collected_evidence`` exists once live collection is configured; older records lack it.
    items = record.model_dump(mode="json").get("collected_evidence") or []
    return [dict(item) for item in items if isinstance(item, Mapping)]


def alert_start(incident: Mapping[str, Any]) -> tuple[str, str] | None:
    """The alert name and start time of an incident Alertmanager opened, else None."""
    for line in incident.get("logs") or []:
        found = _ALERT_LINE.match(str(line))
        if found:
            return found["name"], found["at"]
    return None


class _Evidence:
    """Texts of everything an RCA may cite, and the footnotes handed out so far."""

    def __init__(self, record: IncidentPublic) -> None:
        self.texts: dict[str, tuple[str, str]] = {}
        for item in incident_evidence(record.incident):
            self.texts[item.id] = ("incident", item.text)
        for doc in record.similar_error_docs:
            name = " ".join(str(doc.metadata.get(k) or "") for k in ("error_code", "error_name"))
            self.texts[doc.id] = (f"knowledge doc {name}".strip(), doc.content)
        for collected in _collected(record):
            kind = collected.get("kind") or "evidence"
            label = f"collected {kind} ({collected.get('source', '?')})"
            self.texts[str(collected.get("id"))] = (label, str(collected.get("summary") or ""))
        self.footnotes: list[Footnote] = []
        self._numbers: dict[tuple[str, str], int] = {}

    def cite(self, citation: Mapping[str, Any]) -> int:
        """The footnote number of one citation (the same id and quote share one)."""
        evidence_id = str(citation.get("id"))
        quote = str(citation.get("quote") or "")
        key = (evidence_id, quote)
        if key not in self._numbers:
            source, text = self.texts.get(evidence_id, ("evidence", ""))
            verbatim = bool(quote.strip()) and _words(quote) in _words(text)
            said = "" if verbatim else str(citation.get("sentence") or text)
            number = len(self.footnotes) + 1
            self._numbers[key] = number
            self.footnotes.append(
                Footnote(
                    number=number,
                    evidence_id=evidence_id,
                    source=source,
                    quote=_clip(quote),
                    verbatim=verbatim,
                    evidence=_clip(said),
                )
            )
        return self._numbers[key]


def _root_cause(rca: Mapping[str, Any], evidence: _Evidence) -> RootCause | None:
    hypotheses = rca.get("hypotheses") or []
    if not hypotheses:
        return None
    lead = hypotheses[0]
    claims = [
        CauseClaim(
            text=str(claim.get("text", "")),
            footnotes=[evidence.cite(c) for c in claim.get("evidence") or []],
        )
        for claim in lead.get("claims") or []
    ]
    return RootCause(
        statement=str(lead.get("statement", "")),
        error_code=lead.get("error_code"),
        confidence=str(lead.get("confidence") or rca.get("confidence") or "unknown"),
        claims=claims,
    )


def _alert_window(alert: tuple[str, str], resolved: str | None) -> str:
    name, started = alert
    if not resolved:
        return f"Alert {name} fired from {format_time(started)}; not resolved when decided."
    start, end = parse_time(started), parse_time(resolved)
    minutes = f", {round((end - start).total_seconds() / 60)} min" if start and end else ""
    return f"Alert {name} fired from {format_time(started)} until {format_time(resolved)}{minutes}."


def _impact(
    record: IncidentPublic, alert: tuple[str, str] | None, resolved: str | None
) -> list[str]:
    data = record.incident
    impact = []
    if data.get("service"):
        impact.append(f"Service affected: {data['service']}.")
    metrics = [i for i in _collected(record) if i.get("kind") == "metric" and i.get("summary")]
    for item in metrics:
        where = f" (query `{item['query']}`)" if item.get("query") else ""
        impact.append(f"{str(item['summary']).rstrip('.')}{where}.")
    if not metrics:
        impact.append(f"As reported: {_clip(str(data.get('message', '')), 300)}")
        impact.append("No metrics were collected for this incident, so its size is not measured.")
    if alert:
        impact.append(_alert_window(alert, resolved))
    return impact


def _event_entry(
    event: AuditEvent, drafts_seen: int, alert: tuple[str, str] | None
) -> TimelineEntry:
    if event.type == "created":
        source = f" from alert {alert[0]}" if alert else ""
        return TimelineEntry(at=event.at, kind="created", description=f"Incident recorded{source}")
    if event.type == "draft":
        rca = event.data.get("rca") or {}
        number = f" #{drafts_seen}" if drafts_seen > 1 else ""
        return TimelineEntry(
            at=event.at,
            kind="draft",
            actor=event.actor,
            description=f"Draft RCA{number} written (confidence {rca.get('confidence', '?')})",
        )
    if event.type == "decision":
        verbs = {
            "approve": "Approved the RCA",
            "edit": "Edited and approved the RCA",
            "reject": "Rejected the RCA",
            "reanalyze": "Sent the RCA back for re-analysis",
        }
        return TimelineEntry(
            at=event.at,
            kind="decision",
            actor=event.actor,
            description=verbs.get(event.action or "", f"Decision: {event.action}"),
            comment=event.comment,
        )
    if event.type == "alert_resolved":
        name = event.data.get("alertname")
        return TimelineEntry(
            at=str(event.data.get("ends_at") or event.at),
            kind="alert_resolved",
            actor=event.actor,
            description=f"Alert {name} resolved" if name else "Alert resolved",
        )
    if event.type.startswith("assign"):
        assignee = event.data.get("assignee") or event.data.get("to")
        described = f"Assigned to {assignee}" if assignee else "Assignment changed"
        return TimelineEntry(
            at=event.at,
            kind="assignment",
            actor=event.actor,
            description=described,
            comment=event.comment,
        )
    return TimelineEntry(
        at=event.at,
        kind=event.type,
        actor=event.actor,
        description=event.type.replace("_", " ").capitalize(),
        comment=event.comment,
    )


def _timeline(events: Sequence[AuditEvent], alert: tuple[str, str] | None) -> list[TimelineEntry]:
    entries = []
    if alert:
        entries.append(
            TimelineEntry(
                at=alert[1],
                kind="alert_fired",
                actor="alertmanager",
                description=f"Alert {alert[0]} started firing",
            )
        )
    drafts = 0
    for event in events:
        drafts += event.type == "draft"
        entries.append(_event_entry(event, drafts, alert))
    return sorted(entries, key=lambda e: _sort_key(e.at))


def _ruled_out(record: IncidentPublic, events: Sequence[AuditEvent]) -> list[str]:
    rca = record.final_rca or {}
    ruled = [str(r) for r in rca.get("ruled_out") or []]
    for hypothesis in (rca.get("hypotheses") or [])[1:]:
        ruled.append(f"Considered, not chosen: {hypothesis.get('statement', '')}")
    sent_back = [e for e in events if e.type == "decision" and e.action == "reanalyze"]
    for draft, decision in zip(record.drafts, sent_back, strict=False):
        lead = (draft.get("hypotheses") or [{}])[0].get("statement") or draft.get("summary")
        ruled.append(f"Earlier draft sent back by {decision.actor}: {lead} ({decision.comment})")
    if record.status is IncidentStatus.REJECTED and record.rca:
        lead = (record.rca.get("hypotheses") or [{}])[0].get("statement") or record.rca.get(
            "summary"
        )
        comment = (record.decision or {}).get("comment")
        ruled.append(f"Rejected by the reviewer: {lead}" + (f" ({comment})" if comment else ""))
    return ruled


def _action_items(record: IncidentPublic, rca: Mapping[str, Any]) -> list[str]:
    items = []
    if record.status is IncidentStatus.REJECTED:
        comment = (record.decision or {}).get("comment")
        items.append(
            "Establish the root cause: the analysis was rejected"
            + (f" ({comment})" if comment else "")
        )
    items.extend(
        f"Make this evidence available next time: {m}" for m in rca.get("missing_evidence") or []
    )
    unavailable = record.model_dump(mode="json").get("sources_unavailable") or []
    for source in unavailable:
        if isinstance(source, Mapping):
            items.append(f"Restore access to {source.get('source')}: {source.get('reason')}")
    if record.low_confidence:
        code = record.incident.get("error_code") or "this error"
        items.append(f"Document {code} in the knowledge base: no close match was found")
    return items


def build_postmortem(record: IncidentPublic, events: Sequence[AuditEvent]) -> Postmortem:
    """The postmortem of a decided incident.

    Args:
        record: The incident as ``IncidentService.get`` returns it.
        events: Its audit trail, oldest first.

    Returns:
        The postmortem.

    Raises:
        Conflict: The incident is not decided (approved or rejected) yet.
    """
    if record.status not in DECIDED:
        raise Conflict(
            f"incident '{record.id}' is {record.status.value}: "
            "a postmortem needs an approved or rejected incident"
        )
    decision = record.decision or {}
    final = record.final_rca or {}
    alert = alert_start(record.incident)
    resolved = next(
        (str(e.data.get("ends_at") or e.at) for e in events if e.type == "alert_resolved"), None
    )
    evidence = _Evidence(record)
    if record.status is IncidentStatus.APPROVED:
        summary = str(final.get("summary") or "")
    else:
        comment = decision.get("comment")
        summary = (
            f"The draft analysis was rejected by {decision.get('reviewer') or 'the reviewer'}"
            + (f": {comment}" if comment else ".")
            + " The root cause is not established."
        )
    return Postmortem(
        incident_id=record.id,
        title=_title(record.incident),
        status=record.status,
        decided_by=decision.get("reviewer"),
        decided_at=decision.get("decided_at"),
        summary=summary,
        impact=_impact(record, alert, resolved),
        timeline=_timeline(events, alert),
        root_cause=_root_cause(final, evidence) if final else None,
        ruled_out=_ruled_out(record, events),
        remediation=[str(r) for r in final.get("remediation") or []],
        validation=[str(c) for c in final.get("next_checks") or []],
        action_items=_action_items(record, final or record.rca or {}),
        footnotes=evidence.footnotes,
    )
