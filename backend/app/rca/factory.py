"""Choose the RCA generator from settings (``RCA_LLM``)."""

from __future__ import annotations

from app.core.config import Settings
from app.core.errors import ConfigurationError
from app.rca.base import RcaGenerator
from app.rca.extractive import ExtractiveGenerator


def build_generator(settings: Settings) -> RcaGenerator:
    """``extractive`` (default) or an LLM provider."""
    if settings.llm == "extractive":
        return ExtractiveGenerator()
    raise ConfigurationError(f"unknown RCA_LLM value '{settings.llm}'")
