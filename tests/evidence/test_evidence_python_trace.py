"""Python tracebacks: chained causes, the deepest application frame, bare exceptions."""

from __future__ import annotations

from tests.evidence.helpers import PY_CHAINED_CAUSE, PY_DURING_HANDLING

from app.evidence.model import EvidenceFormat, Frame, Level
from app.evidence.parse import parse_stack_trace, parse_text
from app.evidence.python_trace import source_echo_lines

PY_LIBRARY_ONLY_ROOT = """\
Traceback (most recent call last):
  File "/app/.venv/lib/python3.11/site-packages/sqlalchemy/pool/impl.py", line 168, in _do_get
    raise exc.TimeoutError(
sqlalchemy.exc.TimeoutError: QueuePool limit of size 20 overflow 10 reached, timeout 30.00

The above exception was the direct cause of the following exception:

Traceback (most recent call last):
  File "/app/inventory/repository.py", line 23, in stock_for
    with self.engine.connect() as conn:
inventory.errors.StockUnavailable: stock lookup failed
"""


def test_python_chain_direct_cause_picks_the_first_exception_and_deepest_app_frame() -> None:
    parsed = parse_text(PY_CHAINED_CAUSE)
    assert parsed.format is EvidenceFormat.PYTHON_TRACEBACK
    assert parsed.exception_type == "TimeoutError"
    assert parsed.exception_message == "timed out"
    # requests (site-packages) and socket (stdlib) are skipped.
    assert parsed.frame == Frame("/srv/checkout/app/payments/client.py", 57, "authorize")
    assert str(parsed.frame) == "/srv/checkout/app/payments/client.py:57:authorize"
    assert parsed.causal_line == "TimeoutError: timed out"
    assert parsed.level is Level.ERROR


def test_python_chain_during_handling_picks_the_original_exception() -> None:
    parsed = parse_text(PY_DURING_HANDLING)
    assert parsed.exception_type == "ZeroDivisionError"
    assert parsed.frame == Frame("/app/checkout_service.py", 88, "apply_discount")


def test_python_root_without_app_frames_falls_back_to_the_handler_frame() -> None:
    parsed = parse_text(PY_LIBRARY_ONLY_ROOT)
    assert parsed.exception_type == "sqlalchemy.exc.TimeoutError"
    assert parsed.frame == Frame("/app/inventory/repository.py", 23, "stock_for")


def test_bare_exception_with_multi_line_message() -> None:
    text = (
        "pydantic_core._pydantic_core.ValidationError: 1 validation error for SaleLine\n"
        "quantity\n"
        "  Input should be greater than 0 [type=greater_than, input_value=0]\n"
        "-> pos-api responded 422 to POST /pos/v1/sales"
    )
    parsed = parse_stack_trace(text)
    assert parsed.exception_type == "pydantic_core._pydantic_core.ValidationError"
    assert parsed.exception_message is not None
    assert "quantity" in parsed.exception_message
    assert "greater than 0" in parsed.exception_message
    assert parsed.http_statuses == (422,)


def test_source_lines_under_frames_are_told_from_exception_lines() -> None:
    lines = [
        "Traceback (most recent call last):",
        '  File "/srv/pos_api/checkout.py", line 41, in complete_sale',
        "    per_item = total / item_count",
        '  File "/srv/pos_api/money.py", line 9, in split',
        "KeyError: 'sku'",
        "ZeroDivisionError: division by zero",
    ]
    assert source_echo_lines(lines) == {2}
    # Pasted without indentation, a code line is still told from the exception line.
    assert source_echo_lines([line.strip() for line in lines]) == {2}
