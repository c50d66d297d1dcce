"""Log files: records in the window, errors and warnings kept, parsed like pasted logs."""

from __future__ import annotations

import asyncio
import json
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from app.evidence.sources.base import CollectionRequest
from app.evidence.sources.config import SourcesConfig
from app.evidence.sources.logfiles import LogFileSource, line_time, read_tail

AT = datetime(2026, 11, 29, 10, 0, tzinfo=UTC)
LATER = datetime(2026, 11, 29, 16, 0, tzinfo=UTC)

CHECKOUT_LOG = """\
2026-11-29T09:30:00.000Z ERROR checkout-service long before the window: disk full
2026-11-29T09:58:00.100Z INFO checkout-service POST /checkout status=200 total_cents=2000
2026-11-29T09:58:30.200Z WARNING checkout-service promotion service slow: 812ms
2026-11-29T09:59:01.300Z ERROR checkout-service POST /checkout status=500 checkout failed
Traceback (most recent call last):
  File "/srv/shop/checkout_service.py", line 33, in calculate_discount
    per_unit = promotion.basket_discount_cents // qualifying_units(items)
ZeroDivisionError: integer division or modulo by zero
2026-11-29T09:59:02.300Z INFO checkout-service POST /checkout status=200 total_cents=1500
2026-11-29T09:59:03.400Z ERROR checkout-service POST /checkout status=500 checkout failed
Traceback (most recent call last):
  File "/srv/shop/checkout_service.py", line 33, in calculate_discount
    per_unit = promotion.basket_discount_cents // qualifying_units(items)
ZeroDivisionError: integer division or modulo by zero
2026-11-29T10:20:00.000Z ERROR checkout-service after the window: shutdown
"""


def request(service: str = "checkout-service", **kwargs: object) -> CollectionRequest:
    values: dict[str, object] = {
        "service": service,
        "labels": {},
        "expression": None,
        "at": AT,
        "start": AT - timedelta(minutes=15),
        "end": AT + timedelta(minutes=5),
        **kwargs,
    }
    return CollectionRequest(**values)  # type: ignore[arg-type]


def source_for(tmp_path: Path, files: dict[str, str], globs: list[str]) -> LogFileSource:
    for name, text in files.items():
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    config = SourcesConfig({"services": {"checkout-service": {"logs": globs}}}, base_dir=tmp_path)
    return LogFileSource(config)


def test_errors_and_warnings_in_the_window_become_items(tmp_path: Path) -> None:
    source = source_for(tmp_path, {"logs/checkout.log": CHECKOUT_LOG}, ["logs/*.log"])
    report = asyncio.run(source.collect(request()))
    assert report.problems == []
    warning, error = (item.as_dict() for item in report.items)
    assert warning["id"] == "log:checkout.log:3"
    assert (
        warning["summary"] == "checkout.log:3 WARN checkout-service promotion service slow: 812ms"
    )
    assert warning["facts"]["level"] == "warn"
    assert error["id"] == "log:checkout.log:4"
    assert error["source"] == "logs" and error["kind"] == "log"
    assert error["summary"] == (
        "checkout.log:4 ERROR checkout-service POST /checkout status=500 checkout failed — "
        "ZeroDivisionError: integer division or modulo by zero "
        "(×2 in the window, last at 2026-11-29T09:59:03Z)"
    )
    assert [line["number"] for line in error["lines"]] == [4, 5, 6, 7, 8]
    assert error["lines"][-1]["text"].startswith("ZeroDivisionError")
    assert error["facts"]["exception_type"] == "ZeroDivisionError"
    assert error["facts"]["http_statuses"] == [500]
    assert error["facts"]["frame"] == "/srv/shop/checkout_service.py:33:calculate_discount"
    assert error["facts"]["count"] == 2
    assert error["file"] == str(tmp_path / "logs" / "checkout.log") and error["line"] == 4
    assert error["query"] == str(tmp_path.resolve() / "logs" / "*.log")
    assert error["range"] == {
        "start": "2026-11-29T09:45:00Z",
        "end": "2026-11-29T10:05:00Z",
        "at": "2026-11-29T10:00:00Z",
    }


def test_a_window_that_misses_the_lines_collects_nothing(tmp_path: Path) -> None:
    source = source_for(tmp_path, {"logs/checkout.log": CHECKOUT_LOG}, ["logs/*.log"])
    later = request(start=AT + timedelta(hours=1), end=AT + timedelta(hours=2))
    assert asyncio.run(source.collect(later)).items == []


def test_other_services_read_nothing_and_a_glob_matching_nothing_is_reported(
    tmp_path: Path,
) -> None:
    source = source_for(tmp_path, {}, ["logs/*.log"])
    assert asyncio.run(source.collect(request(service="inventory"))).items == []
    report = asyncio.run(source.collect(request()))
    assert report.items == []
    assert report.problems == [f"no log file matches {tmp_path.resolve() / 'logs' / '*.log'}"]


def test_json_lines_syslog_and_common_log_format_are_placed_in_time(tmp_path: Path) -> None:
    lines = [
        json.dumps(
            {
                "ts": "2026-11-29T09:59:00Z",
                "level": "error",
                "msg": "pool exhausted",
                "code": "DB-503",
            }
        ),
        json.dumps({"time": int(LATER.timestamp()), "level": "error", "msg": "epoch seconds"}),
        "Nov 29 09:58:00 shop checkout[12]: ERROR payment provider timeout",
        '10.0.0.1 - - [29/Nov/2026:09:57:00 +0000] "POST /checkout HTTP/1.1" 502 0 ERROR upstream',
    ]
    source = source_for(tmp_path, {"app/x.log": "\n".join(lines) + "\n"}, ["app/x.log"])
    items = [i.as_dict() for i in asyncio.run(source.collect(request())).items]
    assert [i["id"] for i in items] == ["log:x.log:4", "log:x.log:3", "log:x.log:1"]
    assert items[2]["facts"]["error_codes"] == ["DB-503"]
    # Epoch seconds are read too; that line is outside the window, so not kept.
    assert line_time(lines[1], AT) == LATER


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        ("2026-11-29 09:59:01,123 ERROR x", datetime(2026, 11, 29, 9, 59, 1, 123000, tzinfo=UTC)),
        ("2026-11-29T11:59:01+02:00 ERROR x", datetime(2026, 11, 29, 9, 59, 1, tzinfo=UTC)),
        ("[2026-11-29T09:59:01Z] ERROR x", datetime(2026, 11, 29, 9, 59, 1, tzinfo=UTC)),
        ("09:59:01 ERROR x", datetime(2026, 11, 29, 9, 59, 1, tzinfo=UTC)),
        ("Traceback (most recent call last):", None),
    ],
)
def test_line_times(line: str, expected: datetime | None) -> None:
    assert line_time(line, AT) == expected


def test_a_large_file_is_read_from_its_end_with_true_line_numbers(tmp_path: Path) -> None:
    path = tmp_path / "big.log"
    old = "".join(f"2026-11-29T08:00:00Z INFO filler line {i}\n" for i in range(5000))
    path.write_text(old + "2026-11-29T09:59:00Z ERROR checkout failed\n")
    first, lines = read_tail(path, max_bytes=2000)
    assert lines[-1] == "2026-11-29T09:59:00Z ERROR checkout failed"
    assert first + len(lines) - 1 == 5001
    source = source_for(tmp_path, {}, ["big.log"])
    [item] = asyncio.run(source.collect(request())).items
    assert item.id == "log:big.log:5001"


def test_items_are_capped_errors_first(tmp_path: Path) -> None:
    text = "".join(
        f"2026-11-29T09:50:{i:02d}Z WARNING distinct warning {chr(97 + i)}\n" for i in range(20)
    )
    text += "".join(
        f"2026-11-29T09:55:{i:02d}Z ERROR distinct error {chr(97 + i)}\n" for i in range(20)
    )
    config = SourcesConfig(
        {"services": {"checkout-service": {"logs": ["a.log"]}}}, base_dir=tmp_path
    )
    (tmp_path / "a.log").write_text(text)
    items = asyncio.run(LogFileSource(config, max_items=25).collect(request())).items
    levels = [i.facts["level"] for i in items]
    assert levels.count("error") == 20 and levels.count("warn") == 5


def test_a_plain_line_whose_body_is_json_keeps_its_level_and_words(tmp_path: Path) -> None:
    body = '{"error": "total 12.00 does not equal sum of lines 11.99"}'
    log = (
        "2026-11-29T09:58:00.000Z INFO  GET /healthz 200 2ms\n"
        f"2026-11-29T09:59:00.000Z WARN  POST /pos/v1/sales 422 {body}\n"
    )
    source = source_for(tmp_path, {"logs/checkout.log": log}, ["logs/*.log"])
    items = asyncio.run(source.collect(request())).items
    assert [i.facts["level"] for i in items] == ["warn"]
    assert "does not equal sum of lines" in items[0].summary and "422" in items[0].summary
