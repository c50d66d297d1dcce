"""Real Prometheus (and Alertmanager) for the live-evidence tests, or a skip with the reason."""

from __future__ import annotations

import shutil

import pytest
from tests.helpers import skip_or_fail


@pytest.fixture(scope="session")
def prometheus_binaries() -> None:
    """Debian's prometheus and promtool, or skip (fail on CI)."""
    missing = [b for b in ("prometheus", "promtool") if shutil.which(b) is None]
    if missing:
        skip_or_fail(f"{', '.join(missing)} not installed (apt-get install prometheus)")


@pytest.fixture(scope="session")
def alertmanager_binary() -> None:
    """Debian's prometheus-alertmanager, or skip (fail on CI)."""
    if shutil.which("prometheus-alertmanager") is None:
        skip_or_fail(
            "prometheus-alertmanager not installed (apt-get install prometheus-alertmanager)"
        )
