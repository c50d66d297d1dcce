"""The investigation evaluation: rendering and merging, then three scenarios on a real Prometheus.

The real run backfills Debian's Prometheus with three scenarios whose alert text alone is
ambiguous and runs the product's graph with and without collection: with it, the collected
5xx ratio and log records decide and the first hypothesis cites them; without, it is wrong.
"""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest
from tests.helpers import make_settings, skip_or_fail

from app.core.config import PROJECT_ROOT
from app.core.errors import ConfigurationError
from app.evaluation.backfill import merge_openmetrics, missing_binaries
from app.evaluation.investigation import (
    format_investigation,
    incident_times,
    load_scenarios,
    render_log,
    render_series,
    run_investigation,
)

SCENARIOS = PROJECT_ROOT / "data/eval/investigation"
AT = datetime(2026, 11, 29, 10, 0, 0, tzinfo=UTC)


def test_series_timestamps_are_rendered_relative_to_the_incident_time() -> None:
    text = '# TYPE up gauge\nup{service="a"} 1 -900\nup{service="a"} 0 +30\n# EOF\n'
    rendered = render_series(text, AT).splitlines()
    assert rendered[1] == f'up{{service="a"}} 1 {AT.timestamp() - 900:.0f}'
    assert rendered[2] == f'up{{service="a"}} 0 {AT.timestamp() + 30:.0f}'
    assert rendered[0] == "# TYPE up gauge"


def test_log_times_are_rendered_as_iso_utc() -> None:
    assert render_log("{t-120} ERROR boom\n{t} INFO ok", AT) == (
        "2026-11-29T09:58:00Z ERROR boom\n2026-11-29T10:00:00Z INFO ok"
    )


def test_merging_groups_families_and_orders_each_series_by_time() -> None:
    first = '# TYPE up gauge\nup{s="a"} 1 200\n# EOF\n'
    second = '# TYPE up gauge\nup{s="a"} 0 100\nup{s="b"} 1 100\n# TYPE x counter\nx_total 3 5\n'
    merged = merge_openmetrics([first, second]).splitlines()
    assert merged == [
        "# TYPE up gauge",
        'up{s="a"} 0 100.000',
        'up{s="a"} 1 200.000',
        'up{s="b"} 1 100.000',
        "# TYPE x counter",
        "x_total 3 5.000",
        "# EOF",
    ]
    with pytest.raises(ConfigurationError, match="not a timed"):
        merge_openmetrics(['# TYPE up gauge\nup{s="a"} 1\n'])


def test_incident_times_are_an_hour_apart_and_in_the_past() -> None:
    times = incident_times(3, AT.replace(minute=17))
    assert times == [AT.replace(hour=9), AT.replace(hour=8), AT.replace(hour=7)]


def test_the_shipped_scenarios_are_at_least_ten_with_neutral_slugs() -> None:
    scenarios = load_scenarios(SCENARIOS)
    assert len(scenarios) >= 10
    codes = {s.expected_error_code for s in scenarios}
    for scenario in scenarios:
        assert not any(str(c).lower() in scenario.slug for c in codes if c)
        assert (scenario.folder / "series.om").is_file()
        assert "started_at" not in scenario.incident


def test_collection_decides_where_the_alert_text_alone_does_not(tmp_path: Path) -> None:
    missing = missing_binaries()
    if missing:
        skip_or_fail(f"{', '.join(missing)} not installed (apt-get install prometheus)")
    # Two pairs of scenarios whose alerts read the same, each pair with two different causes:
    # the alert text alone gives one answer per pair, so it is wrong for one of the two at
    # least, while what the collector finds tells them apart.
    pairs = (
        ("01_checkout_errors", "02_checkout_errors"),
        ("03_pos_slo_burn", "04_pos_slo_burn"),
    )
    slugs = tuple(slug for pair in pairs for slug in pair)
    scenarios = load_scenarios(SCENARIOS, only=slugs)
    assert [s.slug for s in scenarios] == list(slugs)
    for first, second in pairs:
        one, other = (next(s for s in scenarios if s.slug == slug) for slug in (first, second))
        assert one.incident == other.incident
        assert one.expected_error_code != other.expected_error_code

    report = run_investigation(scenarios, make_settings(tmp_path))

    for slug in slugs:
        row = report["scenarios"][slug]
        assert row["with"]["correct"], (slug, row)
        assert row["with"]["got"] == row["expected"]
        cited = row["with"]["cited_collected"]
        assert any(c.startswith("log:") for c in cited), (slug, cited)
        assert any(c.startswith("prom:") for c in cited), (slug, cited)
        assert row["without"]["cited_collected"] == []
    for first, second in pairs:
        without = [report["scenarios"][slug]["without"] for slug in (first, second)]
        assert without[0]["got"] == without[1]["got"], without
        assert not all(w["correct"] for w in without), without
    assert report["with"]["hit@1"] == 1.0
    assert report["without"]["hit@1"] <= 0.5
    table = format_investigation(report)
    assert "with collection" in table
    assert "without collection" in table


def test_a_flat_error_ratio_behind_the_alert_is_an_abstention(tmp_path: Path) -> None:
    missing = missing_binaries()
    if missing:
        skip_or_fail(f"{', '.join(missing)} not installed (apt-get install prometheus)")
    scenarios = load_scenarios(SCENARIOS, only=("09_checkout_errors",))
    row = run_investigation(scenarios, make_settings(tmp_path))["scenarios"]["09_checkout_errors"]
    assert row["expected"] is None
    # The measured 5xx ratio stayed flat: nothing to explain, so the RCA abstains ...
    assert row["with"]["abstained"] and row["with"]["correct"], row
    # ... while the alert text alone still names a family.
    assert not row["without"]["abstained"], row
