"""Application settings: the one place configuration is read (env prefix ``RCA_``, ``.env``)."""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path
from typing import Literal

from pydantic import Field, SecretStr
from pydantic_settings import BaseSettings, SettingsConfigDict

#: The project root when running from a checkout (``backend/app/core`` is three levels down).
PROJECT_ROOT = Path(__file__).resolve().parents[3]


class Settings(BaseSettings):
    """Every setting of the service; each is documented in ``.env.example``."""

    model_config = SettingsConfigDict(
        env_prefix="RCA_", env_file=".env", env_file_encoding="utf-8", extra="ignore"
    )

    # Knowledge base and retrieval.
    knowledge_path: Path = PROJECT_ROOT / "data" / "knowledge" / "error_docs.txt"
    knowledge_dir: Path = PROJECT_ROOT / "data" / "knowledge"
    top_k: int = Field(default=5, ge=1, le=50)
    collection_name: str = "error_docs"
    history_collection_name: str | None = None
    history_top_k: int = Field(default=3, ge=0, le=20)
    chroma_url: str | None = None
    chroma_path: Path | None = None

    # Durable state.
    state_dir: Path = Path("var")
    database_url: SecretStr | None = None
    sqlite_synchronous: Literal["normal", "full"] = "normal"
    database_timeout_seconds: float = Field(default=5.0, gt=0)

    # RCA generation.
    llm: str = "extractive"
    llm_base_url: str | None = None
    llm_api_key: SecretStr | None = None
    llm_timeout_seconds: float = Field(default=30.0, gt=0)
    llm_temperature: float = 0.0

    # Intake and notifications.
    notify_webhook_url: SecretStr | None = None
    notify_timeout_seconds: float = Field(default=5.0, gt=0)
    notify_retries: int = Field(default=2, ge=0, le=5)
    notify_reminder_after_minutes: float = Field(default=60.0, gt=0)
    ui_base_url: str = "http://127.0.0.1:8000"
    error_code_patterns: list[str] | None = None
    parse_evidence: bool = True

    # Investigation: live evidence collected before the analysis (see .env.example).
    prometheus_url: str | None = None
    sources_file: Path | None = None
    collect_timeout_seconds: float = Field(default=5.0, gt=0)
    collect_budget_seconds: float = Field(default=10.0, gt=0)
    collect_lookback_minutes: float = Field(default=15.0, gt=0, le=7 * 24 * 60)

    # HTTP server.
    host: str = "127.0.0.1"
    port: int = Field(default=8000, ge=1, le=65535)
    log_level: str = "INFO"
    log_format: Literal["auto", "json", "console"] = "auto"
    debug: bool = False

    # Security and limits.
    api_keys: SecretStr | None = None
    auth: Literal["on", "off"] = "on"
    rate_limit_per_minute: int = Field(default=120, ge=0)
    redis_url: str | None = None
    max_body_bytes: int = Field(default=1_000_000, ge=1024)
    idempotency_key_ttl_hours: float = Field(default=24.0, gt=0)
    recovery_interval_seconds: float = Field(default=30.0, ge=0)
    cors_origins: str = ""
    redaction_patterns: dict[str, str] = Field(default_factory=dict)

    # Retrieval engine (B) -- hybrid BM25 + dense, RRF, gates, rerank, budgets; see .env.example.
    rrf_k: int = Field(default=60, ge=0)
    retrieve_candidates: int = Field(default=50, ge=1, le=1000)
    score_floor: float = Field(default=0.40, ge=0.0, le=1.0)
    lead_floor: float = Field(default=0.30, ge=0.0, le=1.0)
    lead_margin: float = Field(default=0.14, ge=0.0, le=1.0)
    code_match_boost: float = Field(default=1.0, ge=0.0)
    rerank_url: str | None = None
    rerank_kind: Literal["tei", "cohere"] = "tei"
    rerank_model: str | None = None
    rerank_api_key: SecretStr | None = None
    rerank_max_docs: int = Field(default=40, ge=1, le=1000)
    rerank_max_chars: int = Field(default=1000, ge=1)
    rerank_timeout_seconds: float = Field(default=10.0, gt=0)
    confidence_threshold: float = 0.5
    budget_simple: int = Field(default=512, ge=1)
    budget_medium: int = Field(default=1024, ge=1)
    budget_complex: int = Field(default=2048, ge=1)
    rewrite_timeout_seconds: float = Field(default=5.0, gt=0)
    rewrite_max_variants: int = Field(default=3, ge=0, le=3)
    retrieve_default_limit: int = Field(default=15, ge=1, le=50)
    query_max_chars: int = Field(default=2000, ge=1, le=2000)
    spelling_repair: bool = True
    fusion: Literal["rrf", "zscore"] = "zscore"
    dense_weight: float = Field(default=0.5, ge=0.0, le=1.0)
    zscore_unranked: Literal["lowest", "scored"] = "scored"
    prf_docs: int = Field(default=0, ge=0, le=20)
    prf_weight: float = Field(default=0.5, ge=0.0, le=4.0)
    bm25_method: Literal["lucene", "robertson", "atire", "bm25l", "bm25+"] = "lucene"
    bm25_k1: float = Field(default=1.2, gt=0.0)
    bm25_b: float = Field(default=0.75, ge=0.0, le=1.0)
    bm25_title_repeats: int = Field(default=0, ge=0, le=10)
    window_tokens: int = Field(default=96, ge=0, le=256)
    window_stride: int = Field(default=48, ge=1, le=256)
    sentence_chunks: bool = False
    # End of retrieval engine (B).

    # Knowledge lifecycle (B2) -- sources, backends, incremental ingest; see .env.example.
    # ``knowledge_dir`` (above) is the sources folder; an explicitly set ``knowledge_path``
    # overrides it with a single file (see ``app.rag.sources.configured_source``).
    ingest_batch_size: int = Field(default=64, ge=1, le=5000)
    # End of knowledge lifecycle (B2).

    @property
    def history_collection(self) -> str:
        """The collection of approved RCAs.

        ``incident_history`` beside the default ``error_docs``; ``<collection>-history`` when the
        error-docs collection is renamed, so deployments sharing one Chroma server stay apart.
        """
        if self.history_collection_name:
            return self.history_collection_name
        if self.collection_name == "error_docs":
            return "incident_history"
        return f"{self.collection_name}-history"

    @property
    def checkpoint_db_path(self) -> Path:
        """SQLite file holding graph checkpoints and the incident index."""
        return self.state_dir / "rca.sqlite"


@lru_cache
def get_settings() -> Settings:
    """The process-wide settings, read once."""
    return Settings()
