"""``rca serve`` with a dead ``RCA_CHROMA_URL``: one line naming the setting, exit non-zero."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from tests.helpers import free_port

from app.core.config import PROJECT_ROOT


def test_a_dead_chroma_url_is_one_line_and_a_non_zero_exit(tmp_path: Path) -> None:
    env = {
        **os.environ,
        "PYTHONPATH": str(PROJECT_ROOT / "backend"),
        "RCA_CHROMA_URL": f"http://127.0.0.1:{free_port()}",
        "RCA_STATE_DIR": str(tmp_path),
        "RCA_AUTH": "off",
    }
    done = subprocess.run(
        [sys.executable, "-m", "app.cli", "serve", "--port", str(free_port())],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode != 0
    lines = [line for line in done.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and "RCA_CHROMA_URL" in lines[0], done.stderr
    assert "Traceback" not in done.stderr
