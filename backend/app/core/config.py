"""Application settings: the one place configuration is read (env prefix ``RCA_``, ``.env``)."""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

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
    knowledge_dir: Path | None = None
    top_k: int = Field(default=5, ge=1, le=50)
    collection_name: str = "error_docs"
    chroma_url: str | None = None
    chroma_path: Path | None = None

    # Durable state.
    state_dir: Path = Path("var")

    # RCA generation.
    llm: str = "extractive"
    llm_base_url: str | None = None
    llm_api_key: SecretStr | None = None
    llm_timeout_seconds: float = Field(default=30.0, gt=0)
    llm_temperature: float = 0.0

    # HTTP server.
    host: str = "127.0.0.1"
    port: int = Field(default=8000, ge=1, le=65535)
    log_level: str = "INFO"
    debug: bool = False

    @property
    def checkpoint_db_path(self) -> Path:
        """SQLite file holding graph checkpoints and the incident index."""
        return self.state_dir / "rca.sqlite"


@lru_cache
def get_settings() -> Settings:
    """The process-wide settings, read once."""
    return Settings()
