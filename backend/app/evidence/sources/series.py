"""Reading a time series: resolution from the data, a one-line summary, points for a chart.

Resolution. The sample interval is measured on the data (median gap between raw samples); the
query step is that interval or the span divided by ``MAX_QUERY_POINTS``, whichever is larger,
and the rate window is ``max(4 × interval, step + interval)`` -- Grafana's ``$__rate_interval``
rule with the measured interval. Five minutes of 1-second samples get a 2-second step and a
4-second window; a day of 30-second samples a 6-minute step and a 6.5-minute window: both give
about as many points, so both read the same way.

Summary. The baseline is the median of the first quarter of the points; the noise is their
median absolute deviation. A series whose largest departure from the baseline stays within a
tolerance -- the unit's floor (half a percentage point for ratios, 1 ms, half a restart), four
times the noise, or a quarter of the values' magnitude, whichever is largest -- is **flat**.
Otherwise the change began where the excursion that reached 90% of the peak left the noise
band; it is a **spike** when it came back at least halfway, a **step** when it reached 90% of its
peak within two resolutions (read at the level it settled at), else a **ramp**. The summary
says all of it in one line: "5xx ratio of checkout rose from 0.2% to 37% at 10:02:11Z".
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from enum import StrEnum

from app.evidence.sources.promql import Unit

#: Points asked of the query; the chart gets at most ``MAX_CHART_POINTS`` of them.
MAX_QUERY_POINTS = 240
MAX_CHART_POINTS = 120
#: Smallest change that is not flat, per unit (ratios are fractions: 0.005 is 0.5 points).
FLAT_FLOORS = {Unit.RATIO: 0.005, Unit.SECONDS: 0.001, Unit.COUNT: 0.5, Unit.VALUE: 1e-9}
NOISE_FACTOR = 4.0
RELATIVE_TOLERANCE = 0.25
MIN_POINTS = 3

Point = tuple[float, float]


class Trend(StrEnum):
    """Which way a series went relative to its baseline."""

    RISING = "rising"
    FALLING = "falling"
    FLAT = "flat"
    UNKNOWN = "unknown"


class Shape(StrEnum):
    """How it went there."""

    STEP = "step"
    RAMP = "ramp"
    SPIKE = "spike"
    FLAT = "flat"
    APPEARED = "appeared"


@dataclass(frozen=True)
class Resolution:
    """Query step and rate window, in whole seconds."""

    step: int
    window: int

    @property
    def window_text(self) -> str:
        """The rate window as PromQL writes it: ``4s``."""
        return f"{self.window}s"


@dataclass(frozen=True)
class SeriesSummary:
    """What a series did, in a line and in fields.

    Attributes:
        text: The one-line summary.
        trend: Rising, falling, flat (or unknown with too few points).
        shape: Step, ramp, spike or flat.
        baseline: The median of the first quarter; None for a series that appeared.
        peak: The value furthest from the baseline.
        last: The value at the end (median of the last few points).
        change_at: When it left the baseline (unix seconds); None when flat.
        peak_at: When it reached the peak.
    """

    text: str
    trend: Trend
    shape: Shape
    baseline: float | None
    peak: float
    last: float
    change_at: float | None
    peak_at: float


def sample_interval(timestamps: Sequence[Sequence[float]]) -> float | None:
    """The median gap between consecutive raw samples over several series.

    Args:
        timestamps: Each series' sample times in seconds, ascending.

    Returns:
        The interval in seconds, or None with fewer than two samples in every series.
    """
    gaps = [b - a for series in timestamps for a, b in zip(series, series[1:], strict=False)]
    gaps = [g for g in gaps if g > 0]
    return statistics.median(gaps) if gaps else None


def choose_resolution(span_seconds: float, interval: float) -> Resolution:
    """Step and rate window for a range of ``span_seconds`` sampled every ``interval``.

    Args:
        span_seconds: Length of the queried range.
        interval: Sample interval in seconds.

    Returns:
        The resolution.
    """
    interval = max(interval, 1.0)
    step = math.ceil(max(interval, span_seconds / MAX_QUERY_POINTS))
    window = math.ceil(max(4 * interval, step + interval))
    return Resolution(step=step, window=window)


def format_value(value: float, unit: Unit) -> str:
    """A value as a reviewer reads it: ``37%``, ``120 ms``, ``1.5 s``, ``3``."""
    if unit is Unit.RATIO:
        percent = value * 100
        if percent == 0:
            return "0%"
        return f"{_significant(percent, 2)}%"
    if unit is Unit.SECONDS:
        if abs(value) < 1:
            return f"{_significant(value * 1000, 3)} ms"
        return f"{_significant(value, 3)} s"
    return _significant(value, 3)


def _significant(value: float, digits: int) -> str:
    if value == int(value) and abs(value) < 1e15:
        return f"{int(value):,}" if abs(value) >= 10_000 else str(int(value))
    if abs(value) >= 10 ** (digits - 1):
        return f"{value:,.0f}"
    return f"{value:.{digits}g}"


def format_time(seconds: float, with_date: bool) -> str:
    """``10:02:11Z``, or ``2026-11-29T10:02:11Z`` when the range spans more than one day."""
    moment = datetime.fromtimestamp(seconds, UTC)
    return moment.strftime("%Y-%m-%dT%H:%M:%SZ" if with_date else "%H:%M:%SZ")


def summarize(
    points: Sequence[Point],
    *,
    title: str,
    subject: str,
    unit: Unit,
    resolution: float,
    flat_below: float | None = None,
    threshold: tuple[str, float] | None = None,
    since: float | None = None,
) -> SeriesSummary:
    """Describe a series in one line: baseline, peak and when it changed.

    A series whose first sample comes well after ``since`` **appeared** (an alert expression
    that only matches while failing, a status code never answered before): it is rising, with
    no baseline.

    Args:
        points: ``(unix seconds, value)`` in time order, finite values only; at least one.
        title: What the series is ("5xx ratio").
        subject: Whose it is ("checkout-service").
        unit: How values are written.
        resolution: The query's smoothing in seconds (its step or rate window).
        flat_below: A change smaller than this is flat (default: the unit's floor).
        threshold: The alert's comparison, ``(">", 0.05)``, mentioned at the end.
        since: Start of the queried range (unix seconds), to tell a series that appeared.

    Returns:
        The summary.
    """
    times = [t for t, _ in points]
    values = [v for _, v in points]
    with_date = times[-1] - times[0] >= 86_400 or _day(times[0]) != _day(times[-1])
    at = [format_time(t, with_date) for t in times]
    name = f"{title} of {subject}" if subject else title
    suffix = (
        f" (alert threshold {threshold[0]} {format_value(threshold[1], unit)})" if threshold else ""
    )
    peak_index = max(range(len(values)), key=lambda i: values[i])
    late = times[0] - since if since is not None else 0.0
    if late > max(3 * resolution, 0.1 * (times[-1] - times[0] + late)):
        return SeriesSummary(
            text=f"{name} appeared at {at[0]} (no samples before it in the window), reaching "
            f"{format_value(values[peak_index], unit)} at {at[peak_index]}{suffix}",
            trend=Trend.RISING,
            shape=Shape.APPEARED,
            baseline=None,
            peak=values[peak_index],
            last=values[-1],
            change_at=times[0],
            peak_at=times[peak_index],
        )
    if len(values) < MIN_POINTS:
        return SeriesSummary(
            text=f"{name} was {format_value(values[-1], unit)} at {at[-1]} "
            f"(too few samples to see a trend){suffix}",
            trend=Trend.UNKNOWN,
            shape=Shape.FLAT,
            baseline=values[0],
            peak=values[-1],
            last=values[-1],
            change_at=None,
            peak_at=times[-1],
        )
    head = values[: max(MIN_POINTS, len(values) // 4)]
    baseline = statistics.median(head)
    noise = statistics.median(abs(v - baseline) for v in head)
    peak_index = max(range(len(values)), key=lambda i: abs(values[i] - baseline))
    peak = values[peak_index]
    change = peak - baseline
    tolerance = max(
        FLAT_FLOORS[unit] if flat_below is None else flat_below,
        NOISE_FACTOR * noise,
        RELATIVE_TOLERANCE * max(abs(baseline), abs(peak)),
    )
    tail = values[-max(1, min(3, len(values) // 10)) :]
    last = statistics.median(tail)
    if abs(change) <= tolerance:
        low, high = min(values), max(values)
        spread = (
            ""
            if low == high
            else f", between {format_value(low, unit)} and {format_value(high, unit)}"
        )
        return SeriesSummary(
            text=f"{name} stayed flat at {format_value(baseline, unit)} from {at[0]} to "
            f"{at[-1]}{spread}{suffix}",
            trend=Trend.FLAT,
            shape=Shape.FLAT,
            baseline=baseline,
            peak=peak,
            last=last,
            change_at=None,
            peak_at=times[peak_index],
        )
    sign = 1 if change > 0 else -1
    reached = next(i for i, v in enumerate(values) if sign * (v - baseline) >= 0.9 * abs(change))
    # The change began where the excursion leading to that point left the noise band.
    onset = max(FLAT_FLOORS[unit] if flat_below is None else flat_below, NOISE_FACTOR * noise)
    start = reached
    while start > 0 and sign * (values[start - 1] - baseline) > onset:
        start -= 1
    rising = change > 0
    base_text, peak_text = format_value(baseline, unit), format_value(peak, unit)
    # A step is read at the level it settled at, not at its noisiest sample.
    level_text = format_value(statistics.median(values[reached:]), unit)
    back = next(
        (i for i in range(peak_index, len(values)) if abs(values[i] - baseline) < abs(change) / 2),
        None,
    )
    if back is not None and abs(last - baseline) < abs(change) / 2:
        shape = Shape.SPIKE
        verb = "spiked" if rising else "dipped"
        text = (
            f"{name} {verb} from {base_text} to {peak_text} at {at[start]}, back to "
            f"{format_value(last, unit)} by {at[back]}"
        )
    elif times[reached] - times[start] <= 2 * resolution or reached - start <= 1:
        shape = Shape.STEP
        text = (
            f"{name} {'rose' if rising else 'fell'} from {base_text} to {level_text} at {at[start]}"
        )
    else:
        shape = Shape.RAMP
        text = (
            f"{name} {'rose' if rising else 'fell'} steadily from {base_text} at {at[start]} to "
            f"{peak_text} at {at[peak_index]}"
        )
    return SeriesSummary(
        text=text + suffix,
        trend=Trend.RISING if rising else Trend.FALLING,
        shape=shape,
        baseline=baseline,
        peak=peak,
        last=last,
        change_at=times[start],
        peak_at=times[peak_index],
    )


def _day(seconds: float) -> str:
    return datetime.fromtimestamp(seconds, UTC).strftime("%Y-%m-%d")


def downsample(points: Sequence[Point], limit: int = MAX_CHART_POINTS) -> list[list[float]]:
    """At most ``limit`` points for a chart, keeping the shape (largest-triangle-three-buckets).

    Spikes survive: in each bucket the point forming the largest triangle with its neighbours is
    kept, so a one-sample peak is not averaged away.

    Args:
        points: ``(unix seconds, value)`` in time order.
        limit: The most points to return (at least 3).

    Returns:
        ``[[seconds, value], …]``, first and last point always kept.
    """
    rounded = [[t, _round(v)] for t, v in points]
    if len(points) <= limit or limit < 3:
        return rounded
    kept = [rounded[0]]
    size = (len(points) - 2) / (limit - 2)
    previous = 0
    for bucket in range(limit - 2):
        lo = int(bucket * size) + 1
        hi = int((bucket + 1) * size) + 1
        nxt_lo, nxt_hi = hi, min(int((bucket + 2) * size) + 1, len(points))
        following = points[nxt_lo:nxt_hi] or [points[-1]]
        avg_t = sum(t for t, _ in following) / len(following)
        avg_v = sum(v for _, v in following) / len(following)
        pt, pv = points[previous]
        best, best_area = lo, -1.0
        for i in range(lo, hi):
            ti, vi = points[i]
            area = abs((pt - avg_t) * (vi - pv) - (pt - ti) * (avg_v - pv))
            if area > best_area:
                best, best_area = i, area
        kept.append(rounded[best])
        previous = best
    kept.append(rounded[-1])
    return kept


def _round(value: float) -> float:
    return float(f"{value:.6g}")
