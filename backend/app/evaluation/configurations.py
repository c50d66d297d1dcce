"""Named engine configurations for ``rca eval beir --modes``: the product's engine, varied.

A mode is a preset name optionally followed by ``:key=value`` overrides, e.g. ``shipped``,
``keyword``, ``shipped:fusion=zscore:dense_weight=0.7`` or ``shipped:windows=0``. Every mode
builds the product's own ``RetrievalEngine`` (``EngineConfig`` from the settings, then the
overrides); nothing here ranks. ``windows`` (model tokens per window, 0 = whole documents) and
``stride`` decide how the corpus is stored, the rest are ``EngineConfig`` fields; ``k1``, ``b``,
``method`` and ``title`` set the BM25 parameters.
"""

from __future__ import annotations

from dataclasses import dataclass, fields, replace
from typing import Any

from app.core.config import Settings
from app.core.errors import ConfigurationError
from app.rag.engine_config import EngineConfig

#: Presets on top of the shipped configuration.
PRESETS: dict[str, dict[str, str]] = {
    "shipped": {},
    "dense": {"legs": "dense"},
    "keyword": {"legs": "keyword"},
    "rrf": {"fusion": "rrf"},
    "zscore": {"fusion": "zscore"},
    "no-floor": {"score_floor": "0"},
    "no-windows": {"windows": "0"},
    "bm25-tuned": {"method": "atire", "k1": "1.2", "b": "0.9", "title": "3"},
    "bm25-lucene": {"method": "lucene", "k1": "1.2", "b": "0.75", "title": "0"},
}
#: What ``rca eval beir`` reports when ``--modes`` is not given: the product and its two legs.
DEFAULT_MODES = ("shipped", "dense", "keyword")

_BM25_KEYS = {"method": "method", "k1": "k1", "b": "b", "title": "title_repeats"}
_ENGINE_FIELDS = {f.name: f for f in fields(EngineConfig)}


@dataclass(frozen=True)
class Configuration:
    """One evaluated mode: how the corpus is stored and how the engine ranks it."""

    name: str
    engine: EngineConfig
    window_tokens: int
    window_stride: int
    sentences: bool = False

    def summary(self) -> dict[str, Any]:
        """The knobs that define this mode, as plain data for the report."""
        engine = self.engine
        return {
            "legs": engine.legs,
            "fusion": engine.fusion,
            "rrf_k": engine.rrf_k,
            "dense_weight": engine.dense_weight,
            "zscore_unranked": engine.zscore_unranked,
            "prf_docs": engine.prf_docs,
            "prf_weight": engine.prf_weight,
            "score_floor": engine.score_floor,
            "lead_floor": engine.lead_floor,
            "lead_margin": engine.lead_margin,
            "spelling_repair": engine.spelling_repair,
            "code_match_boost": engine.code_match_boost,
            "bm25": {
                "method": engine.bm25.method,
                "k1": engine.bm25.k1,
                "b": engine.bm25.b,
                "title_repeats": engine.bm25.title_repeats,
            },
            "window_tokens": self.window_tokens,
            "window_stride": self.window_stride,
            "sentence_chunks": self.sentences,
        }


def _value(kind: Any, raw: str) -> Any:
    if kind in (bool, "bool"):
        if raw.lower() not in ("true", "false", "1", "0", "on", "off"):
            raise ValueError(raw)
        return raw.lower() in ("true", "1", "on")
    if kind in (int, "int"):
        return int(raw)
    if kind in (float, "float"):
        return float(raw)
    return raw


def parse_mode(spec: str, settings: Settings) -> Configuration:
    """The configuration a mode spec names.

    Args:
        spec: ``preset[:key=value...]``.
        settings: The shipped settings the preset starts from.

    Returns:
        The configuration.

    Raises:
        ConfigurationError: An unknown preset or key, or a value of the wrong type.
    """
    preset, *extra = spec.split(":")
    if preset not in PRESETS:
        raise ConfigurationError(f"unknown mode {preset!r}; presets: {', '.join(PRESETS)}")
    overrides = dict(PRESETS[preset])
    for item in extra:
        key, sep, raw = item.partition("=")
        if not sep:
            raise ConfigurationError(f"mode {spec!r}: expected key=value, got {item!r}")
        overrides[key.strip()] = raw.strip()
    engine = EngineConfig.from_settings(settings)
    windows, stride = settings.window_tokens, settings.window_stride
    sentences = settings.sentence_chunks
    bm25: dict[str, Any] = {}
    changes: dict[str, Any] = {}
    try:
        for key, raw in overrides.items():
            if key == "windows":
                windows = int(raw)
            elif key == "stride":
                stride = int(raw)
            elif key == "sentences":
                sentences = _value(bool, raw)
            elif key in _BM25_KEYS:
                name = _BM25_KEYS[key]
                bm25[name] = (
                    raw if name == "method" else _value(type(getattr(engine.bm25, name)), raw)
                )
            elif key in _ENGINE_FIELDS and key not in ("budgets", "bm25"):
                changes[key] = _value(_ENGINE_FIELDS[key].type, raw)
            else:
                raise ConfigurationError(f"mode {spec!r}: unknown key {key!r}")
    except ValueError as exc:
        raise ConfigurationError(f"mode {spec!r}: bad value ({exc})") from exc
    if changes.get("fusion", "rrf") not in ("rrf", "zscore"):
        raise ConfigurationError(f"mode {spec!r}: fusion is rrf or zscore")
    if changes.get("legs", "hybrid") not in ("hybrid", "dense", "keyword"):
        raise ConfigurationError(f"mode {spec!r}: legs is hybrid, dense or keyword")
    if bm25:
        changes["bm25"] = replace(engine.bm25, **bm25)
    if windows and not 0 < stride <= windows:
        raise ConfigurationError(f"mode {spec!r}: need 0 < stride <= windows")
    return Configuration(spec, replace(engine, **changes), windows, stride, sentences)
