"""Series summaries: step, ramp, flat and spike read as such; resolution follows the data."""

from __future__ import annotations

import random
import re
from datetime import UTC, datetime

import pytest

from app.evidence.sources.promql import Unit
from app.evidence.sources.series import (
    MAX_CHART_POINTS,
    Resolution,
    SeriesSummary,
    Shape,
    Trend,
    choose_resolution,
    downsample,
    format_time,
    format_value,
    sample_interval,
    summarize,
)

T0 = datetime(2026, 11, 30, 8, 53, 20, tzinfo=UTC).timestamp()


def series(values: list[float], step: float = 1.0) -> list[tuple[float, float]]:
    return [(T0 + i * step, v) for i, v in enumerate(values)]


def jitter(seed: int, n: int, scale: float) -> list[float]:
    rng = random.Random(seed)
    return [rng.uniform(-scale, scale) for _ in range(n)]


def ratio(points: list[tuple[float, float]], resolution: float = 4) -> SeriesSummary:
    return summarize(
        points, title="5xx ratio", subject="checkout", unit=Unit.RATIO, resolution=resolution
    )


def test_step_states_baseline_level_and_change_time() -> None:
    noise = jitter(1, 240, 0.0005)
    values = [0.002 + noise[i] if i < 120 else 0.37 + noise[i] for i in range(240)]
    summary = ratio(series(values))
    assert summary.shape is Shape.STEP and summary.trend is Trend.RISING
    assert summary.change_at == T0 + 120
    assert summary.text == (
        f"5xx ratio of checkout rose from 0.2% to 37% at {format_time(T0 + 120, False)}"
    )


def test_ramp_starts_where_it_left_the_baseline() -> None:
    values = [0.002 if i < 100 else min(0.37, 0.002 + (i - 100) * 0.003) for i in range(240)]
    summary = ratio(series(values))
    assert summary.shape is Shape.RAMP and summary.trend is Trend.RISING
    assert summary.change_at is not None and T0 + 100 <= summary.change_at <= T0 + 103
    assert summary.text.startswith("5xx ratio of checkout rose steadily from 0.2% at ")
    assert summary.text.endswith(f"to 37% at {format_time(summary.peak_at, False)}")


def test_flat_is_reported_as_flat() -> None:
    noise = jitter(2, 240, 0.001)
    summary = ratio(series([0.002 + n for n in noise]))
    assert summary.shape is Shape.FLAT and summary.trend is Trend.FLAT
    assert summary.change_at is None
    assert re.search(
        r"stayed flat at 0\.2\d?% from \S+ to \S+, between 0\.1% and 0\.3%$", summary.text
    )


def test_a_constant_series_is_flat_without_a_spread() -> None:
    summary = summarize(
        series([1.0] * 50), title="up", subject="shop", unit=Unit.VALUE, resolution=4
    )
    assert summary.trend is Trend.FLAT
    start, end = format_time(T0, False), format_time(T0 + 49, False)
    assert summary.text == f"up of shop stayed flat at 1 from {start} to {end}"


def test_spike_goes_up_and_comes_back() -> None:
    values = [0.37 if 120 <= i < 130 else 0.002 for i in range(240)]
    summary = ratio(series(values))
    assert summary.shape is Shape.SPIKE and summary.trend is Trend.RISING
    assert summary.change_at == T0 + 120
    assert summary.text == (
        f"5xx ratio of checkout spiked from 0.2% to 37% at {format_time(T0 + 120, False)}, "
        f"back to 0.2% by {format_time(T0 + 130, False)}"
    )


def test_a_falling_series_fell() -> None:
    summary = summarize(
        series([1.0] * 100 + [0.0] * 100), title="up", subject="shop", unit=Unit.VALUE, resolution=4
    )
    assert summary.trend is Trend.FALLING and summary.shape is Shape.STEP
    assert summary.text == f"up of shop fell from 1 to 0 at {format_time(T0 + 100, False)}"


def test_a_series_that_starts_late_appeared() -> None:
    summary = summarize(
        series([0.4, 0.6, 0.75], step=1.0),
        title="alert HighErrors",
        subject="checkout",
        unit=Unit.VALUE,
        resolution=4,
        threshold=(">", 0.1),
        since=T0 - 120,
    )
    assert summary.shape is Shape.APPEARED and summary.trend is Trend.RISING
    assert summary.baseline is None and summary.change_at == T0
    assert summary.text == (
        f"alert HighErrors of checkout appeared at {format_time(T0, False)} (no samples before it "
        f"in the window), reaching 0.75 at {format_time(T0 + 2, False)} (alert threshold > 0.1)"
    )


def test_two_samples_are_too_few_for_a_trend() -> None:
    summary = ratio(series([0.1, 0.2]))
    assert summary.trend is Trend.UNKNOWN
    assert "too few samples" in summary.text


def test_noise_alone_is_not_a_change_but_a_real_rise_of_latency_is() -> None:
    noise = jitter(3, 200, 0.01)
    flat = summarize(
        series([0.1 + n for n in noise]), title="p95", subject="s", unit=Unit.SECONDS, resolution=4
    )
    assert flat.trend is Trend.FLAT
    risen = summarize(
        series([0.1 + n if i < 100 else 0.9 + n for i, n in enumerate(noise)]),
        title="p95",
        subject="s",
        unit=Unit.SECONDS,
        resolution=4,
    )
    assert risen.trend is Trend.RISING
    assert re.fullmatch(r"p95 of s rose from 10\d ms to (89\d|90\d) ms at \S+Z", risen.text)


def test_a_day_of_30_second_samples_reads_like_minutes_of_1_second_ones() -> None:
    minutes = [0.002 if i < 150 else 0.37 for i in range(300)]
    day = [0.002 if i < 1440 else 0.37 for i in range(2880)]
    short = choose_resolution(300, 1.0)
    long = choose_resolution(86_400, 30.0)
    # Queried at their resolution, as the source does: both get well over a hundred points.
    short_points = series(minutes[:: short.step], step=short.step)
    long_points = series(day[:: long.step // 30], step=long.step)
    assert len(short_points) >= 100 and len(long_points) >= 100
    for points, resolution in ((short_points, short), (long_points, long)):
        summary = ratio(points, resolution=resolution.window)
        assert summary.shape is Shape.STEP
        assert summary.text.startswith("5xx ratio of checkout rose from 0.2% to 37% at ")


@pytest.mark.parametrize(
    ("span", "interval", "expected"),
    [
        (300, 1.0, Resolution(step=2, window=4)),
        (86_400, 30.0, Resolution(step=360, window=390)),
        (900, 15.0, Resolution(step=15, window=60)),
        (60, 0.2, Resolution(step=1, window=4)),
    ],
)
def test_resolution_follows_the_sample_interval(
    span: float, interval: float, expected: Resolution
) -> None:
    assert choose_resolution(span, interval) == expected
    assert expected.window_text == f"{expected.window}s"


def test_sample_interval_is_the_median_gap() -> None:
    assert sample_interval([[0, 1, 2, 3, 10], [5, 6]]) == 1
    assert sample_interval([[0, 30, 60, 90]]) == 30
    assert sample_interval([[5], []]) is None


@pytest.mark.parametrize(
    ("value", "unit", "text"),
    [
        (0.002, Unit.RATIO, "0.2%"),
        (0.3712, Unit.RATIO, "37%"),
        (0.0, Unit.RATIO, "0%"),
        (1.0, Unit.RATIO, "100%"),
        (0.12, Unit.SECONDS, "120 ms"),
        (0.0015, Unit.SECONDS, "1.5 ms"),
        (2.5, Unit.SECONDS, "2.5 s"),
        (3.0, Unit.COUNT, "3"),
        (12_345.0, Unit.VALUE, "12,345"),
        (0.5512, Unit.VALUE, "0.551"),
    ],
)
def test_values_are_written_for_a_reader(value: float, unit: Unit, text: str) -> None:
    assert format_value(value, unit) == text


def test_times_carry_the_date_only_when_the_range_crosses_a_day() -> None:
    assert format_time(T0, False) == "08:53:20Z"
    assert format_time(T0, True) == "2026-11-30T08:53:20Z"
    across = summarize(
        series([1.0] * 10, step=10_000), title="up", subject="s", unit=Unit.VALUE, resolution=4
    )
    assert "2026-11-30T08:53:20Z" in across.text


def test_downsampling_keeps_the_spike_and_the_ends() -> None:
    values = [0.0] * 1000
    values[537] = 5.0
    points = series(values)
    kept = downsample(points)
    assert len(kept) == MAX_CHART_POINTS
    assert kept[0] == [T0, 0.0] and kept[-1] == [T0 + 999, 0.0]
    assert [T0 + 537, 5.0] in kept
    assert downsample(points[:10]) == [[t, v] for t, v in points[:10]]
