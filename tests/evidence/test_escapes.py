"""Evidence pasted JSON-escaped is read as the lines and words it escapes."""

from __future__ import annotations

from app.evidence.escapes import stack_trace_text, without_escapes
from app.evidence.signals import exception_types, observe_incident
from app.evidence.wording import words
from app.rag.query import incident_query
from app.rca.evidence import incident_evidence

ESCAPED = (
    'Traceback (most recent call last):\\n  File \\"/app/checkout_service.py\\", line 143, in '
    "apply_discount\\n    share = discount_total / qty_total\\nZeroDivisionError: division by zero"
)


def test_an_escaped_trace_gets_its_lines_back_for_every_reader() -> None:
    incident = {"message": "HTTP 500 from the shop", "stack_trace": ESCAPED}
    lines = stack_trace_text(incident).splitlines()
    assert lines[-1] == "ZeroDivisionError: division by zero"
    assert lines[1] == '  File "/app/checkout_service.py", line 143, in apply_discount'
    stack_ids = [e.id for e in incident_evidence(incident) if e.id.startswith("incident:stack:")]
    assert stack_ids == [f"incident:stack:{n}" for n in range(1, 5)]
    observed = observe_incident(incident)
    assert "ZeroDivisionError" in observed.values("exception")
    assert "\\n" not in incident_query(incident)


def test_a_real_trace_keeps_its_backslashes() -> None:
    real = 'Traceback (most recent call last):\n  File "C:\\new\\tools\\run.py", line 3\nOSError'
    assert stack_trace_text({"stack_trace": real}) == real
    one_escape = "ValueError: bad path C:\\new"
    assert stack_trace_text({"stack_trace": one_escape}) == one_escape


def test_an_escaped_trace_inside_a_log_line_is_read_word_by_word() -> None:
    line = '{"level":"error","exc_info":"Traceback\\n  File \\"x.py\\"\\nZeroDivisionError: x"}'
    assert "ZeroDivisionError" in exception_types(line)
    assert "zerodivisionerror" in words(line)
    assert without_escapes("a\\nb\\tc") == "a b c"
