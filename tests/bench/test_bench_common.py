"""What the in-process benches share: memory readings and the embedded settings they run on."""

from __future__ import annotations

from pathlib import Path

from tests.helpers import make_settings

from app.bench.common import embedded_settings, format_rss, peak_rss_mib, rss_mib


def test_memory_of_this_process() -> None:
    rss, peak = rss_mib(), peak_rss_mib()
    assert rss is not None and peak is not None
    assert peak >= rss > 0
    assert rss_mib(pid=2**22 + 1) is None  # above Linux's pid limit: no such process


def test_format_rss_names_every_reading() -> None:
    assert format_rss({"start": 100.4, "end": None}) == "process RSS (MiB): start 100, end -"


def test_embedded_settings_keep_everything_in_this_process(tmp_path: Path) -> None:
    base = make_settings(
        tmp_path,
        chroma_path=tmp_path / "chroma",
        llm="ollama:llama3",
        rerank_url="http://127.0.0.1:9/rerank",
        rrf_k=7,
    )
    settings = embedded_settings(base, state_dir=tmp_path / "bench")
    assert settings.chroma_path is None and settings.chroma_url is None
    assert settings.database_url is None and settings.rerank_url is None
    assert settings.llm == "extractive"
    assert settings.state_dir == tmp_path / "bench"
    assert settings.rrf_k == 7  # retrieval knobs stay as configured
    assert settings.collection_name != base.collection_name
    assert embedded_settings(base).collection_name != settings.collection_name
