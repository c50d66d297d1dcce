"""The confidence band, derived from evidence and never from a model's self-report.

The band of a diagnosed incident (``diagnosis_band``) follows the diagnosis
(``app.rca.diagnosis``): what the incident's own evidence confirms, what contradicts it, and
the margin to the runner-up.

- ``insufficient``: the diagnosis abstained;
- ``high``: nothing contradicts the leading family, its score leads the best other offered
  candidate by at least ``high_margin``, no other supported family rests on records the leading
  one does not cite (two failures in view), not every confirmation is the reporter's prose
  (message or notes), and either the error code from the ``error_code`` field, a stack line or
  collected evidence confirms it, or at least ``high_specific`` confirmations from non-routine
  evidence do: distinct kinds of specific signal (service, path, file, identifier, exception,
  phrase, a platform failure condition the doc names such as "out of memory"; a service
  another uncontradicted offered candidate also confirms does not count),
  the exact expected HTTP status counting as one more (never alone);
- ``medium``: at least one specific signal confirms it and nothing contradicts it (at most
  ``medium`` when the records overruled the ``error_code`` field); or it rests
  on similarity alone with similarity >= ``strong`` and a family margin >= ``margin``;
- ``low``: anything else (similarity only, or only generic signals such as a status class).
  An answer on similarity (the diagnosis's ``basis``: nothing in the records either way, at
  most the reporter's words agreeing) is ``medium`` only by the similarity rule, which a
  generic confirmation (the exact status in the reporter's words) does not lower.

The retrieval-only rule below (``confidence_band``) remains for drafts without a diagnosis.
Rule (inputs are what retrieval and the incident show):
- ``insufficient`` when retrieval is low-confidence or no doc was retrieved;
- ``high`` when the incident carries the top doc's exact error code and the top doc clears the
  dense floor, or when the top doc is both strong (similarity ≥ ``strong``) and clearly ahead of
  the best doc of another family (margin ≥ ``margin``) and the other retrieved docs do not
  point to a different family with nearly the same score;
- ``medium`` when the top doc is moderately strong (≥ ``moderate``) or clearly ahead;
- ``low`` otherwise.
Thresholds are tuned on the domain eval (``rca eval incidents``) and recorded in the docs.
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from app.evidence.signals import SERVICE, STATUS
from app.rca.candidates import SPECIFIC_KINDS, WHERE_KINDS, Candidate
from app.rca.schema import ConfidenceBand

if TYPE_CHECKING:
    from app.rca.diagnosis import Diagnosis


@dataclass(frozen=True)
class BandThresholds:
    """Tunable thresholds of the band rule."""

    strong: float = 0.6
    moderate: float = 0.45
    margin: float = 0.08
    #: Distinct specific signal kinds and score margin a ``high`` diagnosis needs.
    high_specific: int = 2
    high_margin: float = 0.2


def normalise_code(code: str | None) -> str:
    """Upper-case with separators removed, so ``pay 408`` equals ``PAY-408``."""
    return "".join(ch for ch in (code or "").upper() if ch.isalnum())


def family_margin(docs: list[dict[str, Any]]) -> float:
    """Top similarity minus the best similarity of a doc from another family."""
    if not docs:
        return 0.0
    top_code = docs[0].get("metadata", {}).get("error_code")
    others = [
        float(d.get("similarity", 0.0))
        for d in docs[1:]
        if d.get("metadata", {}).get("error_code") != top_code
    ]
    return float(docs[0].get("similarity", 0.0)) - (max(others) if others else 0.0)


def confidence_band(
    incident: dict[str, Any],
    docs: list[dict[str, Any]],
    low_confidence: bool,
    thresholds: BandThresholds = BandThresholds(),
) -> ConfidenceBand:
    """Apply the documented rule."""
    if low_confidence or not docs:
        return ConfidenceBand.INSUFFICIENT
    top = docs[0]
    similarity = float(top.get("similarity", 0.0))
    code_match = normalise_code(incident.get("error_code")) != "" and normalise_code(
        incident.get("error_code")
    ) == normalise_code(top.get("metadata", {}).get("error_code"))
    margin = family_margin(docs)
    if code_match and similarity >= thresholds.moderate:
        return ConfidenceBand.HIGH
    if similarity >= thresholds.strong and margin >= thresholds.margin:
        return ConfidenceBand.HIGH
    if similarity >= thresholds.moderate or margin >= thresholds.margin:
        return ConfidenceBand.MEDIUM
    return ConfidenceBand.LOW


def diagnosis_band(
    diagnosis: Diagnosis,
    docs: list[dict[str, Any]] | None = None,
    thresholds: BandThresholds = BandThresholds(),
) -> ConfidenceBand:
    """The band the diagnosis supports (rules in the module docstring).

    Args:
        diagnosis: The diagnosis of this run.
        docs: The retrieved docs (for the family margin of a similarity-only answer).
        thresholds: The band thresholds.

    Returns:
        The band.
    """
    leading = diagnosis.leading
    if leading is None:
        return ConfidenceBand.INSUFFICIENT
    runner = diagnosis.runner_up()
    margin = leading.score - runner.score if runner is not None else leading.score
    if leading.contradicted:
        return ConfidenceBand.LOW
    if diagnosis.overruled_code:
        # The records outweighed the code whoever filed the incident gave: a reviewer decides.
        return ConfidenceBand.MEDIUM
    # A service another candidate still in the running also confirms says nothing about which
    # one; a candidate the evidence contradicts (a 422 family beside a logged 500) is out.
    shared = {
        h.signal
        for c in diagnosis.candidates
        if c is not leading and c.offered and not c.contradicted
        for h in c.confirmed
        if h.kind == SERVICE
    }
    telling = [
        h
        for h in leading.confirmed
        if h.kind in SPECIFIC_KINDS
        and not h.weak
        and not (h.kind == SERVICE and h.signal in shared)
    ]
    specific = {h.kind for h in telling}
    exact_status = [h for h in leading.confirmed if h.kind == "status" and not h.weak]
    prose_only = all(is_prose(i) for h in [*telling, *exact_status] for i in h.evidence_ids)
    code_in_record = any(
        h.kind == "code"
        and not h.weak
        and any(not i.startswith("incident:log:") for i in h.evidence_ids)
        for h in telling
    )
    # The exact expected status counts as a second, independent confirmation of a specific one.
    confirmations = len(specific) + int(bool(exact_status))
    # Where it runs (a service, an endpoint) twice over is not which failure it is.
    what_failed = bool(exact_status) or any(h.kind not in WHERE_KINDS for h in telling)
    if (
        what_failed
        and margin >= thresholds.high_margin
        and not prose_only
        and not _rival_in_other_records(diagnosis)
        and (code_in_record or (specific and confirmations >= thresholds.high_specific))
    ):
        return ConfidenceBand.HIGH
    if (specific or leading.specific()) and diagnosis.basis != "similarity":
        return ConfidenceBand.MEDIUM
    if leading.similarity >= thresholds.strong and family_margin(docs or []) >= thresholds.margin:
        return ConfidenceBand.MEDIUM
    return ConfidenceBand.LOW


def _rival_in_other_records(diagnosis: Diagnosis) -> bool:
    """Whether another supported family shows its own failure in records the leader does not cite.

    That is its exact expected status and a specific signal, both from records the leading
    family does not cite: the incident then shows two failures (an amount-mismatch 422 on one
    line, a PLU 503 on another) and the leader may be the wrong one, so it is not ``high``.
    """
    leading = diagnosis.leading
    if leading is None:
        return False
    cited = {i for h in leading.confirmed for i in h.evidence_ids}

    def own(kinds: Collection[str], rival: Candidate) -> bool:
        return any(
            h.kind in kinds and not h.weak and not is_prose(i) and i not in cited
            for h in rival.confirmed
            for i in h.evidence_ids
        )

    return any(
        own({STATUS}, c) and own(SPECIFIC_KINDS, c)
        for c in diagnosis.candidates
        if c is not leading and c.supported
    )


def is_prose(evidence_id: str) -> bool:
    """Whether an evidence id is the reporter's own words (message or a reviewer's note)."""
    return evidence_id == "incident:message" or evidence_id.startswith("incident:note:")


_ORDER = [
    ConfidenceBand.INSUFFICIENT,
    ConfidenceBand.LOW,
    ConfidenceBand.MEDIUM,
    ConfidenceBand.HIGH,
]


def grounded_band(band: str, leading_claims: list[dict[str, Any]]) -> str:
    """Lower the retrieval band when the leading hypothesis is poorly grounded.

    ``insufficient`` stays; with no supported claim the band drops to ``low``; with fewer than
    half of the claims supported it drops one step.
    """
    current = ConfidenceBand(band)
    if current is ConfidenceBand.INSUFFICIENT or not leading_claims:
        return current.value
    supported = sum(1 for c in leading_claims if c.get("supported"))
    if supported == 0:
        return min(current, ConfidenceBand.LOW, key=_ORDER.index).value
    if supported / len(leading_claims) < 0.5:
        return _ORDER[max(1, _ORDER.index(current) - 1)].value
    return current.value
