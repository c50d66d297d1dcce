"""The retrieval engine's knobs, each with exactly one default: the ``Settings`` field's.

``EngineConfig`` mirrors the retrieval settings of ``app.core.config.Settings`` (documented in
``.env.example``); ``EngineConfig.from_settings`` builds the shipped configuration, and the
evaluation varies it field by field (``app.evaluation.configurations``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

from app.core.config import Settings
from app.rag.bm25 import Bm25Params
from app.rag.packing import Budgets

Fusion = Literal["rrf", "zscore"]
Legs = Literal["hybrid", "dense", "keyword"]
Unranked = Literal["lowest", "scored"]


def _default(name: str) -> Any:
    """The ``Settings`` default of a field: each knob has exactly one default, there."""
    return Settings.model_fields[name].default


@dataclass(frozen=True)
class EngineConfig:
    """The engine's knobs: ``Settings`` fields of the same meaning and default (``.env.example``).

    ``legs`` is not a setting: the product always runs both; the evaluation reports each leg.
    """

    rrf_k: int = _default("rrf_k")
    candidates: int = _default("retrieve_candidates")
    score_floor: float = _default("score_floor")
    lead_floor: float = _default("lead_floor")
    lead_margin: float = _default("lead_margin")
    code_match_boost: float = _default("code_match_boost")
    confidence_threshold: float = _default("confidence_threshold")
    budgets: Budgets = field(default_factory=Budgets)
    query_max_chars: int = _default("query_max_chars")
    default_limit: int = _default("retrieve_default_limit")
    spelling_repair: bool = _default("spelling_repair")
    fusion: Fusion = _default("fusion")
    dense_weight: float = _default("dense_weight")
    zscore_unranked: Unranked = _default("zscore_unranked")
    prf_docs: int = _default("prf_docs")
    prf_weight: float = _default("prf_weight")
    bm25: Bm25Params = field(
        default_factory=lambda: Bm25Params(
            method=_default("bm25_method"),
            k1=_default("bm25_k1"),
            b=_default("bm25_b"),
            title_repeats=_default("bm25_title_repeats"),
        )
    )
    legs: Legs = "hybrid"

    @classmethod
    def from_settings(cls, settings: Settings) -> EngineConfig:
        """The configuration the settings describe."""
        return cls(
            rrf_k=settings.rrf_k,
            candidates=settings.retrieve_candidates,
            score_floor=settings.score_floor,
            lead_floor=settings.lead_floor,
            lead_margin=settings.lead_margin,
            code_match_boost=settings.code_match_boost,
            confidence_threshold=settings.confidence_threshold,
            budgets=Budgets(
                simple=settings.budget_simple,
                medium=settings.budget_medium,
                complex=settings.budget_complex,
            ),
            query_max_chars=settings.query_max_chars,
            default_limit=settings.retrieve_default_limit,
            spelling_repair=settings.spelling_repair,
            fusion=settings.fusion,
            dense_weight=settings.dense_weight,
            zscore_unranked=settings.zscore_unranked,
            prf_docs=settings.prf_docs,
            prf_weight=settings.prf_weight,
            bm25=Bm25Params(
                method=settings.bm25_method,
                k1=settings.bm25_k1,
                b=settings.bm25_b,
                title_repeats=settings.bm25_title_repeats,
            ),
        )
