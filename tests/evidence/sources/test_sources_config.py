"""The sources file: per-service templates and log globs, the defaults, and clear errors."""

from __future__ import annotations

from pathlib import Path

import pytest

from app.core.errors import ConfigurationError
from app.evidence.sources.config import SourcesConfig, load_sources_config
from app.evidence.sources.promql import RED_TEMPLATES, Unit

RED = [t.name for t in RED_TEMPLATES]


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "sources.yml"
    path.write_text(text)
    return path


def test_no_file_means_the_red_defaults_and_no_logs() -> None:
    config = load_sources_config(None)
    assert [t.name for t in config.templates_for("checkout")] == RED
    assert config.log_globs_for("checkout") == [] and not config.reads_logs


def test_a_service_adds_templates_and_globs_to_the_defaults(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        """
defaults:
  queries:
    - {name: saturation, query: 'max(cpu{service="$service"})', unit: ratio}
  logs: [/var/log/$service/*.log]
services:
  checkout:
    queries:
      - name: up
        title: scrape health
        query: 'min(up{job="shop"})'
      - name: queue_depth
        query: 'max(queue_depth{service="$service"})'
        unit: count
        flat_below: 2
    logs: [logs/checkout*.log]
  batch:
    red: false
""",
    )
    config = load_sources_config(path)
    checkout = {t.name: t for t in config.templates_for("checkout")}
    assert list(checkout) == [*RED, "saturation", "queue_depth"]
    assert checkout["up"].title == "scrape health" and checkout["up"].query == 'min(up{job="shop"})'
    assert checkout["queue_depth"].title == "queue depth"
    assert checkout["queue_depth"].unit is Unit.COUNT and checkout["queue_depth"].flat_below == 2
    assert [t.name for t in config.templates_for("batch")] == ["saturation"]
    assert [t.name for t in config.templates_for("unknown")] == [*RED, "saturation"]
    assert config.log_globs_for("checkout") == [
        "/var/log/checkout/*.log",
        str(tmp_path.resolve() / "logs" / "checkout*.log"),
    ]
    assert config.log_globs_for(None) == [] and config.reads_logs


def test_red_can_be_turned_off_for_every_service() -> None:
    config = SourcesConfig({"defaults": {"red": False}, "services": {"a": {"red": True}}})
    assert config.templates_for("b") == []
    assert [t.name for t in config.templates_for("a")] == RED


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("services:\n  a:\n    querys: []\n", "sources file: services.a.querys: Extra inputs"),
        (
            "defaults:\n  queries:\n    - {name: q}\n",
            "sources file: defaults.queries.0.query: Field required",
        ),
        (
            "defaults:\n  queries:\n    - {name: q, query: up, unit: furlongs}\n",
            "defaults.queries.0.unit",
        ),
        ("defaults: [1, 2\n", "is not valid YAML"),
        ("- a\n- b\n", "must hold a mapping"),
    ],
)
def test_a_malformed_file_says_where(tmp_path: Path, text: str, message: str) -> None:
    with pytest.raises(ConfigurationError) as raised:
        load_sources_config(write(tmp_path, text))
    assert message in raised.value.message


def test_a_missing_file_is_a_configuration_error(tmp_path: Path) -> None:
    with pytest.raises(ConfigurationError, match="cannot read the sources file nowhere.yml"):
        load_sources_config(tmp_path / "nowhere.yml")


def test_an_empty_file_is_the_defaults(tmp_path: Path) -> None:
    assert [t.name for t in load_sources_config(write(tmp_path, "")).templates_for("a")] == RED
