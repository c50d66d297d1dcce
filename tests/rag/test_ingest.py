"""Ingestion: splitting, dedupe, stable ids, refusals and warnings."""

from __future__ import annotations

from pathlib import Path

import pytest
from tests.helpers import KNOWLEDGE_PATH

from app.core.errors import KnowledgeBaseError
from app.rag.embedding import MiniLmEmbedder
from app.rag.ingest import chunk_id, load_error_docs, parse_error_docs, split_entries

ENTRY_A = """Error: PAY-408 PAYMENT_TIMEOUT
Component: payments
Symptoms: slow
Cause: provider slow
Evidence: ReadTimeout
Solution: retry
Validation: p95 ok"""
ENTRY_B = """Error: POS-503-PLU PLU_LOOKUP_UNAVAILABLE
Component: plu
Symptoms: prices missing
and a continuation line
Cause: outage"""


def test_split_strips_drops_empty_and_keeps_line_numbers() -> None:
    text = f"\n{ENTRY_A}\n---\n\n---\n{ENTRY_B}\n"
    entries = split_entries(text)
    assert [e for _, e in entries] == [ENTRY_A, ENTRY_B]
    assert entries[0][0] == 2
    assert entries[1][0] == text.split("\n").index("Error: POS-503-PLU PLU_LOOKUP_UNAVAILABLE") + 1


def test_parse_dedupes_and_reads_fields() -> None:
    parsed = parse_error_docs(f"{ENTRY_A}\n---\n{ENTRY_B}\n---\n{ENTRY_A}\n")
    assert [c.metadata["error_code"] for c in parsed.chunks] == ["PAY-408", "POS-503-PLU"]
    second = parsed.chunks[1].metadata
    assert second["error_name"] == "PLU_LOOKUP_UNAVAILABLE"
    assert second["symptoms"] == "prices missing and a continuation line"
    assert second["cause"] == "outage"
    assert parsed.chunks[0].metadata["validation"] == "p95 ok"


def test_ids_are_content_hashes_stable_across_parses() -> None:
    first = parse_error_docs(f"{ENTRY_A}\n---\n{ENTRY_B}")
    again = parse_error_docs(f"\n\n{ENTRY_A}\n---\n{ENTRY_B}\n\n")
    assert [c.id for c in first.chunks] == [c.id for c in again.chunks]
    assert first.chunks[0].id == chunk_id(ENTRY_A)
    assert first.chunks[0].id.startswith("error-doc-") and len(first.chunks[0].id) == 26
    edited = parse_error_docs(ENTRY_A.replace("slow", "very slow"))
    assert edited.chunks[0].id != first.chunks[0].id


def test_empty_file_refuses(tmp_path: Path) -> None:
    path = tmp_path / "empty.txt"
    path.write_text("\n---\n   \n---\n")
    with pytest.raises(KnowledgeBaseError, match="no entries"):
        load_error_docs(path)


def test_missing_file_refuses(tmp_path: Path) -> None:
    with pytest.raises(KnowledgeBaseError, match="cannot read"):
        load_error_docs(tmp_path / "absent.txt")


def test_entry_without_error_line_names_entry_and_line() -> None:
    text = f"{ENTRY_A}\n---\nComponent: orphan\nCause: none"
    with pytest.raises(KnowledgeBaseError, match=r"entry 2 \(line 9\): missing 'Error:'"):
        parse_error_docs(text)


@pytest.mark.parametrize("line", ["Error: pay408 PAYMENT_TIMEOUT", "Error: PAY-408", "Error: 408"])
def test_unparseable_code_is_rejected(line: str) -> None:
    with pytest.raises(KnowledgeBaseError, match=r"entry 1 \(line 1\): cannot parse"):
        parse_error_docs(f"{line}\nCause: x")


def test_long_entry_warns_naming_it() -> None:
    long_entry = ENTRY_A + "\nEvidence: " + "timeout " * 300
    parsed = parse_error_docs(long_entry, count_tokens=lambda text: len(text.split()) + 2)
    assert len(parsed.chunks) == 1
    assert len(parsed.warnings) == 1
    assert "entry 1" in parsed.warnings[0] and "PAY-408" in parsed.warnings[0]
    assert "256" in parsed.warnings[0]


def test_project_knowledge_base_has_ten_families_within_window(embedder: MiniLmEmbedder) -> None:
    parsed = load_error_docs(KNOWLEDGE_PATH, count_tokens=embedder.count_tokens)
    codes = [c.metadata["error_code"] for c in parsed.chunks]
    assert codes == [
        "CO-500",
        "CH-502",
        "PAY-408",
        "INV-503",
        "POS-422-QTY",
        "POS-422-LINES",
        "POS-422-AMOUNT",
        "POS-503-PLU",
        "POS-500-CHECKOUT",
        "POS-502-CARD",
    ]
    assert parsed.warnings == []
    text = KNOWLEDGE_PATH.read_text()
    assert sum(1 for line in text.splitlines() if line.startswith("Error:")) == 10
