"""The domain evaluation's inputs and outputs: incident cases and what an analyzer answers.

A case (one line of ``data/eval/incidents.jsonl``) is an incident, the error family a competent
engineer would name from it and the ten knowledge docs (``null`` when the right answer is to
abstain), a category naming the kind of difficulty, and optionally the evidence id that decides
it (``incident:log:3``, ``incident:stack:6``), which the first hypothesis is expected to cite.

An analyzer turns an incident into an ``Analysis``: the product's answer (the error codes of
the RCA's hypotheses, first one first, and its final abstain decision) next to what retrieval
alone ranked and decided, so the report can score both.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NamedTuple, Protocol

from app.core.errors import ConfigurationError

UNCATEGORISED = "uncategorised"
#: Evidence ids a case may name as decisive: a log line or a stack-trace line, 1-based.
DECISIVE_PREFIXES = ("incident:log:", "incident:stack:")


@dataclass(frozen=True)
class IncidentCase:
    """One line of the evaluation file."""

    id: str
    incident: dict[str, Any]
    expected_error_code: str | None
    category: str = UNCATEGORISED
    decisive_evidence: str | None = None


class Analysis(NamedTuple):
    """An analyzer's answer for one incident.

    ``answer`` holds the error codes of the RCA's hypotheses in order (the first is the answer);
    ``abstained`` is the final decision. ``retrieval`` ranks families by the retrieved docs and
    ``retrieval_abstained`` is the retrieval gate's decision alone. ``diagnosis`` is the graph
    state's diagnosis when the product recorded one.
    """

    answer: Sequence[str]
    abstained: bool
    rca: Mapping[str, Any]
    retrieval: Sequence[tuple[str, float]]
    retrieval_abstained: bool
    diagnosis: Mapping[str, Any] | None = None


class IncidentAnalyzer(Protocol):
    """Analyses one incident for evaluation (``GraphAnalyzer`` runs the product's graph)."""

    def __call__(self, incident: Mapping[str, Any]) -> Analysis:
        """The answer, the abstain decision, the RCA as plain data and the retrieval ranking."""
        ...


def ranked_families(docs: Sequence[Mapping[str, Any]]) -> list[tuple[str, float]]:
    """Error families in rank order, each at its best-ranked doc's similarity.

    Args:
        docs: Retrieved docs as the state holds them (``metadata.error_code``, ``similarity``).

    Returns:
        ``(error code, similarity)`` pairs, best first, one per family.
    """
    ranked: dict[str, float] = {}
    for doc in docs:
        code = str(doc.get("metadata", {}).get("error_code") or "")
        if code and code not in ranked:
            ranked[code] = float(doc.get("similarity", 0.0))
    return list(ranked.items())


def hypothesis_codes(rca: Mapping[str, Any]) -> list[str]:
    """The error codes of an RCA's hypotheses in order, each once, skipping uncoded ones."""
    codes: list[str] = []
    for hypothesis in rca.get("hypotheses") or []:
        code = hypothesis.get("error_code")
        if code and code not in codes:
            codes.append(str(code))
    return codes


def _decisive(row: Mapping[str, Any], where: str) -> str | None:
    value = row.get("decisive_evidence")
    if value is None:
        return None
    if not isinstance(value, str) or not value.startswith(DECISIVE_PREFIXES):
        raise ConfigurationError(
            f"{where}: 'decisive_evidence' must be an id like 'incident:log:3' or "
            "'incident:stack:5'"
        )
    kind, _, number = value.rpartition(":")
    if not number.isdigit() or int(number) < 1:
        raise ConfigurationError(f"{where}: 'decisive_evidence' {value!r} needs a 1-based number")
    incident = row.get("incident") or {}
    if kind == "incident:log":
        available = len(incident.get("logs") or [])
    else:
        available = len(str(incident.get("stack_trace") or "").splitlines())
    if int(number) > available:
        raise ConfigurationError(f"{where}: 'decisive_evidence' {value!r} is past the incident")
    return value


def _case(row: Any, where: str, seen: set[str]) -> IncidentCase:
    if not isinstance(row, dict):
        raise ConfigurationError(f"{where}: expected a JSON object")
    case_id, incident = row.get("id"), row.get("incident")
    expected, category = row.get("expected_error_code"), row.get("category", UNCATEGORISED)
    if not isinstance(case_id, str) or not case_id:
        raise ConfigurationError(f"{where}: 'id' must be a non-empty string")
    if case_id in seen:
        raise ConfigurationError(f"{where}: duplicate id {case_id!r}")
    if not isinstance(incident, dict) or not str(incident.get("message", "")).strip():
        raise ConfigurationError(f"{where}: 'incident' must be an object with a 'message'")
    if "expected_error_code" not in row or not (expected is None or isinstance(expected, str)):
        raise ConfigurationError(f"{where}: 'expected_error_code' must be a code or null")
    if not isinstance(category, str):
        raise ConfigurationError(f"{where}: 'category' must be a string")
    decisive = _decisive(row, where)
    return IncidentCase(case_id, incident, expected, category or UNCATEGORISED, decisive)


def load_cases(path: Path) -> list[IncidentCase]:
    """Read and check the evaluation cases, one JSON object per line.

    Args:
        path: The ``.jsonl`` file.

    Returns:
        The cases in file order.

    Raises:
        ConfigurationError: Naming the line of the first malformed case.
    """
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except OSError as exc:
        raise ConfigurationError(f"cannot read eval cases {path}: {exc.strerror}") from exc
    cases: list[IncidentCase] = []
    seen: set[str] = set()
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        where = f"{path}:{number}"
        try:
            row = json.loads(line)
        except json.JSONDecodeError as exc:
            raise ConfigurationError(f"{where}: not valid JSON ({exc.msg})") from exc
        case = _case(row, where, seen)
        seen.add(case.id)
        cases.append(case)
    if not cases:
        raise ConfigurationError(f"{path} has no cases")
    return cases
