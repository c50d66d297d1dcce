"""A real Prometheus serving backfilled series, for evaluations and benches of the collector.

``merge_openmetrics`` joins several OpenMetrics texts (the eval scenarios' ``series.om``) into
one that ``promtool tsdb create-blocks-from openmetrics`` accepts: every family once, each
series' samples in time order. ``backfilled_prometheus`` writes the blocks into a temporary
folder and runs Debian's ``prometheus`` on them on a free 127.0.0.1 port until the block ends.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import tempfile
import time
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx

from app.core.errors import ConfigurationError
from app.core.processes import free_port, stop_process

BINARIES = ("prometheus", "promtool")
_SAMPLE_RE = re.compile(
    r"^(?P<series>[A-Za-z_:][\w:]*(?:\{[^}]*\})?)\s+(?P<value>\S+)\s+(?P<ts>\S+)$"
)
_TYPE_RE = re.compile(r"^# TYPE (?P<name>\S+) (?P<type>\S+)$")


def missing_binaries() -> list[str]:
    """The Prometheus binaries not on ``PATH``."""
    return [name for name in BINARIES if shutil.which(name) is None]


def merge_openmetrics(texts: Iterable[str]) -> str:
    """One OpenMetrics text holding every sample of ``texts``, grouped and time-ordered.

    Args:
        texts: OpenMetrics texts with absolute timestamps (``# TYPE`` lines name the families).

    Returns:
        The merged text, ending in ``# EOF``.

    Raises:
        ConfigurationError: A line is neither a ``# TYPE``/``# EOF`` line nor a timed sample.
    """
    families: dict[str, str] = {}
    samples: dict[str, dict[str, list[tuple[float, str]]]] = {}
    for text in texts:
        family = ""
        for raw in text.splitlines():
            line = raw.strip()
            if not line or line == "# EOF" or line.startswith("# HELP"):
                continue
            typed = _TYPE_RE.match(line)
            if typed:
                family = typed.group("name")
                families.setdefault(family, typed.group("type"))
                continue
            sample = _SAMPLE_RE.match(line)
            if sample is None or not family:
                raise ConfigurationError(f"not a timed OpenMetrics sample: {line[:80]}")
            series = samples.setdefault(family, {}).setdefault(sample.group("series"), [])
            series.append((float(sample.group("ts")), sample.group("value")))
    out: list[str] = []
    for family, kind in families.items():
        out.append(f"# TYPE {family} {kind}")
        for name, points in samples.get(family, {}).items():
            out.extend(f"{name} {value} {ts:.3f}" for ts, value in sorted(points))
    out.append("# EOF")
    return "\n".join(out) + "\n"


def _wait_ready(process: subprocess.Popen[bytes], url: str, log: Path, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise ConfigurationError(f"prometheus exited: {log.read_text()[-400:]}")
        try:
            if httpx.get(f"{url}/-/ready", timeout=1.0).status_code == 200:
                return
        except httpx.HTTPError:
            pass
        time.sleep(0.2)
    raise ConfigurationError(f"prometheus not ready within {timeout:g}s")


@contextmanager
def backfilled_prometheus(openmetrics: str, timeout: float = 60.0) -> Iterator[str]:
    """A real Prometheus over ``openmetrics`` on a free loopback port; yields its base URL.

    Args:
        openmetrics: The series, absolute timestamps (``merge_openmetrics``).
        timeout: Seconds the backfill and the start-up may take each.

    Yields:
        ``http://127.0.0.1:<port>``.

    Raises:
        ConfigurationError: A binary is missing, the backfill failed or Prometheus did not start.
    """
    missing = missing_binaries()
    if missing:
        raise ConfigurationError(f"{', '.join(missing)} not installed (apt-get install prometheus)")
    with tempfile.TemporaryDirectory(prefix="rca-prometheus-") as tmp:
        folder = Path(tmp)
        data, tsdb = folder / "series.om", folder / "tsdb"
        data.write_text(openmetrics)
        done = subprocess.run(
            ["promtool", "tsdb", "create-blocks-from", "openmetrics", str(data), str(tsdb)],
            capture_output=True,
            timeout=timeout,
            check=False,
        )
        if done.returncode != 0:
            raise ConfigurationError(f"promtool backfill failed: {done.stderr.decode()[-400:]}")
        (folder / "prometheus.yml").write_text("global:\n  scrape_interval: 15s\n")
        port = free_port()
        log = folder / "prometheus.log"
        with log.open("wb") as out:
            process = subprocess.Popen(
                [
                    "prometheus",
                    f"--config.file={folder / 'prometheus.yml'}",
                    f"--storage.tsdb.path={tsdb}",
                    f"--web.listen-address=127.0.0.1:{port}",
                    "--storage.tsdb.retention.time=30d",
                ],
                stdout=out,
                stderr=subprocess.STDOUT,
            )
        url = f"http://127.0.0.1:{port}"
        try:
            _wait_ready(process, url, log, timeout)
            yield url
        finally:
            stop_process(process)
