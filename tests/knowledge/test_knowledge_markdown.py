"""Markdown runbooks: heading sections, splitting under the window, codes, ids."""

from __future__ import annotations

import re

from tests.knowledge.helpers import RUNBOOKS

from app.rag.embedding import MiniLmEmbedder
from app.rag.markdown import parse_runbook, single_code, split_sections


def words(text: str) -> list[str]:
    return re.findall(r"\S+", text)


def test_sections_follow_headings_but_not_inside_code_fences() -> None:
    text = "intro line\n# Title\nbody\n```\n# not a heading\n```\n## Sub\nmore\n"
    sections = split_sections(text, "file")
    assert [s.path for s in sections] == [["file"], ["Title"], ["Title", "Sub"]]
    assert "# not a heading" in sections[1].body
    assert sections[2].line == 7


def test_runbook_chunks_carry_source_heading_and_a_runbook_id(embedder: MiniLmEmbedder) -> None:
    text = (RUNBOOKS / "payments.md").read_text()
    parsed = parse_runbook(text, "runbooks/payments.md", embedder.count_tokens)
    headings = [c.metadata["heading"] for c in parsed.chunks]
    # The title section has a body; every section with text becomes at least one chunk.
    assert headings == [
        "Payments runbook",
        "Provider timeouts (PAY-408)",
        "Reconciliation after an outage",
    ]
    first = parsed.chunks[1]
    assert first.id.startswith("runbook-") and len(first.id) == len("runbook-") + 16
    assert first.text.startswith("Payments runbook > Provider timeouts (PAY-408)\n\n")
    assert first.metadata["source"] == "runbooks/payments.md"
    assert first.metadata["kind"] == "runbook"
    assert all(embedder.count_tokens(c.text) <= 256 for c in parsed.chunks)
    assert parsed.warnings == []


def test_error_code_only_when_exactly_one_is_named(embedder: MiniLmEmbedder) -> None:
    payments = parse_runbook((RUNBOOKS / "payments.md").read_text(), "p.md", embedder.count_tokens)
    network = parse_runbook(
        (RUNBOOKS / "store-network.md").read_text(), "n.md", embedder.count_tokens
    )
    codes = {c.metadata["heading"]: c.metadata.get("error_code") for c in payments.chunks}
    assert codes["Provider timeouts (PAY-408)"] == "PAY-408"
    assert codes["Reconciliation after an outage"] is None
    assert all("error_code" not in c.metadata for c in network.chunks)  # CH-502 and POS-502-CARD
    assert single_code("see POS-422-QTY, then POS-422-QTY again") == "POS-422-QTY"
    assert single_code("UTF-8 and X-Request-ID are not codes") is None


def test_long_section_splits_at_paragraphs_without_losing_text(embedder: MiniLmEmbedder) -> None:
    paragraph = " ".join(f"Check replica number {i} and its replication lag." for i in range(12))
    body = "\n\n".join(f"{paragraph} Paragraph {n}." for n in range(8))
    text = f"# Database failover\n\n{body}\n"
    parsed = parse_runbook(text, "db.md", embedder.count_tokens)
    assert len(parsed.chunks) > 1
    assert all(embedder.count_tokens(c.text) <= 256 for c in parsed.chunks)
    assert [c.metadata["part"] for c in parsed.chunks] == list(range(1, len(parsed.chunks) + 1))
    prefix = "Database failover\n\n"
    rejoined = " ".join(c.text.removeprefix(prefix) for c in parsed.chunks)
    assert words(rejoined) == words(body)
    # Paragraph boundaries are kept: no chunk starts in the middle of a paragraph.
    assert all(
        c.text.removeprefix(prefix).startswith("Check replica number 0") for c in parsed.chunks
    )
    assert parsed.warnings == []


def test_one_huge_paragraph_splits_at_sentences(embedder: MiniLmEmbedder) -> None:
    body = " ".join(f"Step {i}: restart worker {i} and wait for it." for i in range(80))
    parsed = parse_runbook(f"# Workers\n{body}\n", "w.md", embedder.count_tokens)
    assert len(parsed.chunks) > 2
    assert all(embedder.count_tokens(c.text) <= 256 for c in parsed.chunks)
    rejoined = " ".join(c.text.removeprefix("Workers\n\n") for c in parsed.chunks)
    assert words(rejoined) == words(body)


def test_an_unsplittable_run_is_kept_whole_with_a_warning(embedder: MiniLmEmbedder) -> None:
    blob = "x." * 400  # the tokenizer splits at dots; our splitter only at whitespace
    parsed = parse_runbook(f"# Blob\nbefore\n\n{blob}\n", "b.md", embedder.count_tokens)
    assert any(blob in c.text for c in parsed.chunks)
    assert len(parsed.warnings) == 1 and "b.md" in parsed.warnings[0]


def test_ids_are_stable_and_change_with_the_text(embedder: MiniLmEmbedder) -> None:
    text = (RUNBOOKS / "store-network.md").read_text()
    first = parse_runbook(text, "n.md", embedder.count_tokens)
    again = parse_runbook(text, "n.md", embedder.count_tokens)
    edited = parse_runbook(
        text.replace("five minutes", "ten minutes"), "n.md", embedder.count_tokens
    )
    assert [c.id for c in first.chunks] == [c.id for c in again.chunks]
    assert [c.id for c in first.chunks][0] == [c.id for c in edited.chunks][0]
    assert [c.id for c in first.chunks][1] != [c.id for c in edited.chunks][1]
