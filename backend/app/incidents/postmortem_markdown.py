"""A ``Postmortem`` rendered as Markdown: sections, a timeline table, citations as footnotes."""

from __future__ import annotations

from app.incidents.postmortem import Footnote, Postmortem, TimelineEntry, format_time


def _one_line(text: str) -> str:
    return " ".join(text.split())


def _cell(text: str | None) -> str:
    return _one_line(text or "").replace("|", "\\|") or "—"


def _bullets(items: list[str], empty: str, marker: str = "-") -> list[str]:
    return [f"{marker} {_one_line(i)}" for i in items] if items else [f"_{empty}_"]


def _timeline_row(entry: TimelineEntry) -> str:
    what = entry.description + (f" — “{_one_line(entry.comment)}”" if entry.comment else "")
    return f"| {format_time(entry.at)} | {_cell(what)} | {_cell(entry.actor)} |"


def _footnote(note: Footnote) -> str:
    line = f"[^{note.number}]: `{note.evidence_id}` ({note.source})"
    if note.quote:
        line += f": “{note.quote}”" + (" (verbatim)" if note.verbatim else "")
    if note.evidence:
        line += f" — the evidence reads: “{note.evidence}”"
    return line


def render_markdown(postmortem: Postmortem) -> str:
    """The postmortem as one Markdown document.

    Args:
        postmortem: What ``build_postmortem`` returned.

    Returns:
        Markdown text ending in a newline.
    """
    decided = (
        f"{postmortem.status.value} by {postmortem.decided_by or 'unknown'} "
        f"at {format_time(postmortem.decided_at)}"
    )
    lines = [
        f"# Postmortem: {_one_line(postmortem.title)}",
        "",
        f"- **Incident:** `{postmortem.incident_id}`",
        f"- **Decision:** {decided}",
        "",
        "## Summary",
        "",
        _one_line(postmortem.summary),
        "",
        "## Impact",
        "",
        *_bullets(postmortem.impact, "No impact was recorded."),
        "",
        "## Timeline",
        "",
        "| Time (UTC) | What happened | Who |",
        "| --- | --- | --- |",
        *[_timeline_row(e) for e in postmortem.timeline],
        "",
        "## Root cause",
        "",
    ]
    cause = postmortem.root_cause
    if cause is None:
        lines.append("_Not established._")
    else:
        family = f"{cause.error_code}, " if cause.error_code else ""
        lines += [f"**{_one_line(cause.statement)}** ({family}confidence {cause.confidence})", ""]
        for claim in cause.claims:
            marks = "".join(f"[^{n}]" for n in claim.footnotes)
            lines.append(f"- {_one_line(claim.text)}{marks}")
    lines += [
        "",
        "## What was ruled out",
        "",
        *_bullets(postmortem.ruled_out, "Nothing was ruled out explicitly."),
        "",
        "## Remediation",
        "",
        *_bullets(postmortem.remediation, "No remediation was recorded.", "1."),
        "",
        "## Validation",
        "",
        *_bullets(postmortem.validation, "No validation step was recorded."),
        "",
        "## Action items",
        "",
        *_bullets(
            postmortem.action_items, "None recorded; add the team's follow-ups here.", "- [ ]"
        ),
    ]
    if postmortem.footnotes:
        lines += ["", *[_footnote(n) for n in postmortem.footnotes]]
    return "\n".join(lines) + "\n"
