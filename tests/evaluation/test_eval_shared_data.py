"""The skip-unless-CI helper for tests that use ../shared."""

from __future__ import annotations

from pathlib import Path

import pytest
from tests.helpers import require_shared


def test_existing_path_is_returned(tmp_path: Path) -> None:
    assert require_shared(tmp_path) == tmp_path


def test_missing_path_skips_outside_ci(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("CI", raising=False)
    with pytest.raises(pytest.skip.Exception, match="absent"):
        require_shared(tmp_path / "missing")


@pytest.mark.parametrize("value", ["true", "TRUE", "True"])
def test_missing_path_fails_on_ci(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, value: str
) -> None:
    monkeypatch.setenv("CI", value)
    with pytest.raises(pytest.fail.Exception, match="CI=true"):
        require_shared(tmp_path / "missing")


def test_ci_false_still_skips(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CI", "false")
    with pytest.raises(pytest.skip.Exception):
        require_shared(tmp_path / "missing")
