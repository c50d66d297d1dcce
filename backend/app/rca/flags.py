"""Hold a written draft to the diagnosis: flag hypotheses the evidence does not back.

A model may write whatever it likes; the reviewer is told, per hypothesis (``flags``), when

- ``contradicted``: the diagnosis contradicts the hypothesis's family (another service,
  exception, status class or error code in the incident's evidence) or did not offer it;
- ``no_incident_evidence``: none of its claims cites the incident (or collected evidence);
- ``not_diagnosed``: its family is not among the diagnosed candidates at all.

The first hypothesis's band follows the diagnosis only when it names the family the diagnosis
leads with; otherwise it is at most ``low``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from app.rca.confidence import diagnosis_band
from app.rca.diagnosis import Candidate, Diagnosis
from app.rca.explain import cited_incident_ids, clip, for_and_against
from app.rca.schema import MAX_FLAG_CHARS, ConfidenceBand, Flag, Hypothesis

CONTRADICTED = "contradicted"
NO_INCIDENT_EVIDENCE = "no_incident_evidence"
NOT_DIAGNOSED = "not_diagnosed"
_ORDER = [
    ConfidenceBand.INSUFFICIENT,
    ConfidenceBand.LOW,
    ConfidenceBand.MEDIUM,
    ConfidenceBand.HIGH,
]


def _candidate(diagnosis: Diagnosis, code: str | None) -> Candidate | None:
    wanted = "".join(ch for ch in (code or "").upper() if ch.isalnum())
    if not wanted:
        return None
    for candidate in diagnosis.candidates:
        if "".join(ch for ch in candidate.key.upper() if ch.isalnum()) == wanted:
            return candidate
    return None


def hypothesis_flags(hypothesis: Hypothesis, diagnosis: Diagnosis) -> list[Flag]:
    """The flags one hypothesis earns against the diagnosis."""
    flags: list[Flag] = []
    candidate = _candidate(diagnosis, hypothesis.error_code)
    if hypothesis.error_code and candidate is None:
        flags.append(Flag(kind=NOT_DIAGNOSED, message=f"{hypothesis.error_code} was not diagnosed"))
    elif candidate is not None and (candidate.contradicted or not candidate.offered):
        # Long observed values (a field path, a list of files) must not fail the draft.
        message = clip(f"{candidate.key}: {for_and_against(candidate)}", MAX_FLAG_CHARS)
        flags.append(Flag(kind=CONTRADICTED, message=message))
    if not cited_incident_ids(hypothesis.claims):
        flags.append(
            Flag(kind=NO_INCIDENT_EVIDENCE, message="cites nothing from the incident's evidence")
        )
    return flags


def flag_hypotheses(
    hypotheses: Sequence[Hypothesis], diagnosis: Diagnosis, docs: list[dict[str, Any]]
) -> tuple[list[Hypothesis], ConfidenceBand]:
    """The hypotheses with their flags and bands, and the draft's band.

    Args:
        hypotheses: As written (first = the model's answer).
        diagnosis: The diagnosis of this run.
        docs: The retrieved docs (for a similarity-only band).

    Returns:
        Flagged hypotheses (the first banded by the diagnosis when it agrees with it, at most
        ``low`` otherwise; the rest ``low``) and the first hypothesis's band.
    """
    band = diagnosis_band(diagnosis, docs)
    if band is ConfidenceBand.INSUFFICIENT:
        rest = ConfidenceBand.INSUFFICIENT
    else:
        rest = ConfidenceBand.LOW
    out: list[Hypothesis] = []
    leading = diagnosis.leading
    for index, hypothesis in enumerate(hypotheses):
        flags = hypothesis_flags(hypothesis, diagnosis)
        own = rest
        if index == 0:
            agrees = leading is not None and _candidate(diagnosis, hypothesis.error_code) is leading
            own = band if agrees and not flags else min(band, rest, key=_ORDER.index)
            band = own
        out.append(hypothesis.model_copy(update={"confidence": own, "flags": flags}))
    return out, band
