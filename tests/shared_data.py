"""Access to the read-only public data beside the project (``../shared``) for tests.

A user's clone has no ``../shared``: tests that need it skip with a clear reason. On CI
(``CI=true``) the data must be there, so the same tests fail instead of silently skipping.
"""

from __future__ import annotations

from pathlib import Path

from tests.support import skip_or_fail

from app.core.config import PROJECT_ROOT

SHARED_DIR = PROJECT_ROOT.parent / "shared"
DATASETS_DIR = SHARED_DIR / "datasets"
SCIFACT_DIR = DATASETS_DIR / "scifact"
LOGHUB_DIR = DATASETS_DIR / "loghub_template_ir"
MODELS_DIR = SHARED_DIR / "models" / "all-MiniLM-L6-v2"


def require_shared(path: Path) -> Path:
    """Return ``path`` if it exists; otherwise skip the test, or fail it when ``CI=true``.

    Args:
        path: A file or folder under ``../shared``.

    Returns:
        The same path, for chaining.
    """
    if path.exists():
        return path
    skip_or_fail(
        f"shared data {path} is absent (public eval data lives in ../shared beside the "
        "project, never in the repo)"
    )
