"""Persistence across processes: a second ``rca ingest`` of an unchanged corpus embeds nothing."""

from __future__ import annotations

from pathlib import Path

from tests.helpers import unique_name
from tests.knowledge.helpers import (
    edit_first_entry,
    make_sources,
    run_cli,
    summary_counts,
)


def test_second_process_embeds_nothing_then_only_the_change(tmp_path: Path) -> None:
    folder = make_sources(tmp_path)
    env = {
        "RCA_CHROMA_PATH": str(tmp_path / "chroma"),
        "RCA_COLLECTION_NAME": unique_name("kb"),
        "RCA_KNOWLEDGE_DIR": str(folder),
        "RCA_WINDOW_TOKENS": "0",  # counts per entry; windows: test_knowledge_sync
    }
    env.pop("RCA_CHROMA_URL", None)
    first = run_cli(["ingest"], env)
    assert first.returncode == 0, first.stderr
    lines = first.stdout.splitlines()
    total = int(lines[0].split()[1])
    assert lines[0] == f"ingested {total} error-doc chunk(s)" and total > 10
    assert any(line.split()[:1] == ["PAY-408"] for line in lines[1:])
    assert summary_counts(first.stdout) == {
        "added": total,
        "unchanged": 0,
        "removed": 0,
        "embedded": total,
    }

    second = run_cli(["ingest"], env)
    assert second.returncode == 0, second.stderr
    assert second.stdout.splitlines()[0] == f"ingested {total} error-doc chunk(s)"
    assert summary_counts(second.stdout) == {
        "added": 0,
        "unchanged": total,
        "removed": 0,
        "embedded": 0,
    }

    edit_first_entry(folder)
    third = run_cli(["ingest"], env)
    assert summary_counts(third.stdout) == {
        "added": 1,
        "unchanged": total - 1,
        "removed": 1,
        "embedded": 1,
    }


def test_cli_reports_a_malformed_source(tmp_path: Path) -> None:
    folder = make_sources(tmp_path)
    (folder / "bad.txt").write_text("Cause: no error line\n")
    result = run_cli(["ingest", str(folder)], {"RCA_COLLECTION_NAME": unique_name("kb")})
    assert result.returncode == 2
    assert "error: bad.txt: entry 1" in result.stderr and result.stdout == ""
