"""Knowledge-lifecycle test helpers: sample sources, a counting embedder, a Chroma server."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

from tests.fakes import HashEmbedder
from tests.helpers import KNOWLEDGE_PATH, free_port, stop_process, wait_until_serving

from app.core.config import PROJECT_ROOT
from app.rag.embedding import Vectors

RUNBOOKS = Path(__file__).parent / "runbooks"


def make_sources(root: Path) -> Path:
    """A sources folder holding the real error docs and the sample runbooks."""
    folder = root / "knowledge"
    folder.mkdir(parents=True, exist_ok=True)
    shutil.copy(KNOWLEDGE_PATH, folder / "error_docs.txt")
    shutil.copytree(RUNBOOKS, folder / "runbooks", dirs_exist_ok=True)
    return folder


def edit_first_entry(folder: Path) -> None:
    """Change one word of the first error-docs entry (its id changes, the others stay)."""
    path = folder / "error_docs.txt"
    text = path.read_text(encoding="utf-8")
    path.write_text(text.replace("for some baskets", "for a few baskets", 1), encoding="utf-8")


class CountingEmbedder(HashEmbedder):
    """The deterministic fake embedder, counting the documents it embeds."""

    def __init__(self, model_id: str = HashEmbedder.model_id) -> None:
        super().__init__()
        self.model_id = model_id
        self.embedded = 0

    def embed_documents(self, texts: Sequence[str]) -> Vectors:
        """Embed and count."""
        self.embedded += len(texts)
        return super().embed_documents(texts)


def chroma_executable() -> str | None:
    """The ``chroma`` CLI of this virtualenv, else the one on PATH."""
    beside = Path(sys.executable).parent / "chroma"
    return str(beside) if beside.exists() else shutil.which("chroma")


class ChromaServer:
    """A real ``chroma run`` on 127.0.0.1 with its data in a temporary folder."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.process: subprocess.Popen[bytes] | None = None
        self.log_path = path.parent / f"chroma-{self.port}.log"

    def start(self, timeout: float = 120.0) -> ChromaServer:
        """Start the server and wait for its heartbeat; ``RuntimeError`` when it cannot start."""
        executable = chroma_executable()
        if executable is None:
            raise RuntimeError("the chroma CLI is not installed")
        command = [executable, "run", "--host", "127.0.0.1", "--port", str(self.port)]
        command += ["--path", str(self.path)]
        with self.log_path.open("ab") as log:
            self.process = subprocess.Popen(
                command, stdout=log, stderr=subprocess.STDOUT, cwd=self.path.parent
            )
        try:
            wait_until_serving(
                self.process, f"{self.url}/api/v2/heartbeat", timeout, self.log, "chroma"
            )
        except RuntimeError:
            self.stop()
            raise
        return self

    def log(self) -> str:
        """What the server wrote so far."""
        return self.log_path.read_text(errors="replace")[-4000:] if self.log_path.exists() else ""

    def stop(self) -> None:
        """Terminate the server (kill it if it does not stop)."""
        stop_process(self.process)


def run_cli(args: Sequence[str], env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    """Run ``rca`` in a fresh process (a restart) with ``env`` added to the environment."""
    return subprocess.run(
        [sys.executable, "-m", "app.cli", *args],
        cwd=PROJECT_ROOT,
        env={**os.environ, "PYTHONPATH": str(PROJECT_ROOT / "backend"), **env},
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )


def summary_counts(output: str) -> dict[str, int]:
    """``added``/``unchanged``/``removed``/``embedded`` from the ``ingest:`` summary line."""
    lines = [line for line in output.splitlines() if line.startswith("ingest: added=")]
    assert len(lines) == 1, output
    return {key: int(value) for key, value in (p.split("=") for p in lines[0].split()[1:])}
