"""The confidence band, derived from evidence and never from a model's self-report.

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

from dataclasses import dataclass
from typing import Any

from app.rca.schema import ConfidenceBand


@dataclass(frozen=True)
class BandThresholds:
    """Tunable thresholds of the band rule."""

    strong: float = 0.6
    moderate: float = 0.45
    margin: float = 0.08


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
