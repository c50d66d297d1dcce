"""Access to the read-only public data beside the project (``../shared``) for tests.

A user's clone has no ``../shared``: tests that need it skip with a clear reason. On CI
(``CI=true``) the data must be there, so the same tests fail instead of silently skipping.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from app.core.config import PROJECT_ROOT

SHARED_DIR = PROJECT_ROOT.parent / "shared"
DATASETS_DIR = SHARED_DIR / "datasets"
SCIFACT_DIR = DATASETS_DIR / "scifact"
LOGHUB_DIR = DATASETS_DIR / "loghub_template_ir"
MODELS_DIR = SHARED_DIR / "models" / "all-MiniLM-L6-v2"


def on_ci() -> bool:
    """True when the environment says this is a CI run (``CI=true``, any case)."""
    return os.environ.get("CI", "").strip().lower() == "true"


def require_shared(path: Path) -> Path:
    """Return ``path`` if it exists; otherwise skip the test, or fail it when ``CI=true``.

    Args:
        path: A file or folder under ``../shared``.

    Returns:
        The same path, for chaining.
    """
    if path.exists():
        return path
    reason = (
        f"shared data {path} is absent (public eval data lives in ../shared beside the "
        "project, never in the repo)"
    )
    if on_ci():
        pytest.fail(f"CI=true requires it: {reason}")
    pytest.skip(reason)
