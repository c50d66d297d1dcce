"""Writing the JSON reports of ``rca eval`` and ``rca bench`` (one format, one place)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any


def write_json_report(path: str | None, payload: dict[str, Any]) -> None:
    """Write ``payload`` as indented JSON to ``path``, creating parents; no path, no-op."""
    if not path:
        return
    out = Path(path)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(payload, indent=2) + "\n", encoding="utf-8")
    print(f"wrote {out}")
