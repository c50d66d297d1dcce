"""The whole loop on loopback: sample shop, Prometheus, Alertmanager and the RCA service.

Used by ``scripts/live.py`` (``make live``) and by the end-to-end test. Everything is generated
into one folder: the Prometheus configuration (1-second scrapes of the shop, an alert rule on its
5xx ratio with a 1-second ``for``), the Alertmanager configuration (1-second ``group_wait``,
a webhook to the service's ``/api/intake/alertmanager``), the sources file (the shop's log file)
and each process's data folder and output. Debian's ``prometheus`` and
``prometheus-alertmanager`` binaries are used; every port is a free one on 127.0.0.1.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
import urllib.error
import urllib.parse
import urllib.request
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from app.core.processes import free_port

PROJECT_ROOT = Path(__file__).resolve().parents[1]
SHOP_SCRIPT = PROJECT_ROOT / "data" / "sample_app" / "shop_server.py"
SERVICE_NAME = "checkout-service"
ALERT_NAME = "CheckoutErrorRatioHigh"
BINARIES = {"prometheus": "prometheus", "alertmanager": "prometheus-alertmanager"}

#: The alert keeps the ``service`` label (``sum by``) so the incident names its service.
ALERT_EXPR = (
    f'sum by (service) (rate(http_requests_total{{service="{SERVICE_NAME}",code=~"5.."}}[5s]))'
    f' / sum by (service) (rate(http_requests_total{{service="{SERVICE_NAME}"}}[5s])) > 0.1'
)


def missing_binaries() -> list[str]:
    """The Debian binaries this stack needs that are not installed."""
    return [name for name in BINARIES.values() if shutil.which(name) is None]


def _get(url: str, timeout: float = 2.0) -> tuple[int, bytes]:
    try:
        with urllib.request.urlopen(url, timeout=timeout) as response:
            return response.status, response.read()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read()
    except OSError:
        return 0, b""


def _post(url: str, body: Any = None, timeout: float = 5.0) -> tuple[int, bytes]:
    data = json.dumps(body).encode() if body is not None else b""
    request = urllib.request.Request(url, data=data, method="POST")
    request.add_header("Content-Type", "application/json")
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:
            return response.status, response.read()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read()


@dataclass
class Process:
    """One started process and where its output goes."""

    name: str
    popen: subprocess.Popen[bytes]
    log_path: Path
    ready_url: str

    def output(self) -> str:
        """What the process wrote so far (its last 4,000 characters)."""
        return self.log_path.read_text(errors="replace")[-4000:] if self.log_path.exists() else ""


@dataclass
class LiveStack:
    """Generated configuration and the four processes of the loop.

    Attributes:
        workdir: The folder everything is generated into.
        service_port: Port of the RCA service (a free one when 0).
        service_env: Extra environment for the service (``RCA_*`` settings).
    """

    workdir: Path
    service_port: int = 0
    service_env: dict[str, str] = field(default_factory=dict)
    shop_port: int = field(default_factory=free_port)
    prometheus_port: int = field(default_factory=free_port)
    alertmanager_port: int = field(default_factory=free_port)
    processes: list[Process] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.workdir = self.workdir.resolve()
        self.service_port = self.service_port or free_port()

    @property
    def service_url(self) -> str:
        """``http://127.0.0.1:<service port>``."""
        return f"http://127.0.0.1:{self.service_port}"

    @property
    def prometheus_url(self) -> str:
        """``http://127.0.0.1:<prometheus port>``."""
        return f"http://127.0.0.1:{self.prometheus_port}"

    @property
    def shop_url(self) -> str:
        """``http://127.0.0.1:<shop port>``."""
        return f"http://127.0.0.1:{self.shop_port}"

    @property
    def log_file(self) -> Path:
        """The shop's log file."""
        return self.workdir / "logs" / f"{SERVICE_NAME}.log"

    def write_configs(self) -> None:
        """Generate the Prometheus, Alertmanager and sources files."""
        self.workdir.mkdir(parents=True, exist_ok=True)
        (self.workdir / "prometheus.yml").write_text(
            "global:\n  scrape_interval: 1s\n  evaluation_interval: 1s\n"
            "rule_files: [rules.yml]\n"
            "alerting:\n  alertmanagers:\n"
            f"    - static_configs: [{{targets: ['127.0.0.1:{self.alertmanager_port}']}}]\n"
            "scrape_configs:\n  - job_name: shop\n    static_configs:\n"
            f"      - targets: ['127.0.0.1:{self.shop_port}']\n"
            f"        labels: {{service: {SERVICE_NAME}}}\n"
        )
        (self.workdir / "rules.yml").write_text(
            "groups:\n  - name: shop\n    rules:\n"
            f"      - alert: {ALERT_NAME}\n"
            f"        expr: {json.dumps(ALERT_EXPR)}\n"
            "        for: 1s\n"
            "        labels: {severity: page}\n"
            "        annotations:\n"
            f"          summary: {SERVICE_NAME} answers HTTP 500 to more than 10% of checkouts\n"
            "          description: The checkout endpoint fails while pricing baskets.\n"
        )
        (self.workdir / "alertmanager.yml").write_text(
            "route:\n  receiver: rca\n  group_by: [alertname, service]\n"
            "  group_wait: 1s\n  group_interval: 1s\n  repeat_interval: 1h\n"
            "receivers:\n  - name: rca\n    webhook_configs:\n"
            f"      - url: {self.service_url}/api/intake/alertmanager\n"
            "        send_resolved: false\n"
        )
        (self.workdir / "sources.yml").write_text(
            f"services:\n  {SERVICE_NAME}:\n    logs: [logs/*.log]\n"
        )

    def _spawn(self, name: str, argv: list[str], ready_url: str, env: dict[str, str]) -> None:
        log_path = self.workdir / f"{name}.out"
        with log_path.open("ab") as log:
            popen = subprocess.Popen(
                argv,
                cwd=self.workdir,
                env={**os.environ, **env},
                stdout=log,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
            )
        self.processes.append(Process(name, popen, log_path, ready_url))

    def start(self) -> None:
        """Start the four processes (not waiting for them: see ``wait_ready``)."""
        self.write_configs()
        python = sys.executable
        self._spawn(
            "shop",
            [
                python,
                str(SHOP_SCRIPT),
                "--port",
                str(self.shop_port),
                "--log-file",
                str(self.log_file),
            ],
            f"{self.shop_url}/health",
            {},
        )
        self._spawn(
            "prometheus",
            [
                BINARIES["prometheus"],
                "--config.file=prometheus.yml",
                f"--storage.tsdb.path={self.workdir / 'prometheus-data'}",
                f"--web.listen-address=127.0.0.1:{self.prometheus_port}",
            ],
            f"{self.prometheus_url}/-/ready",
            {},
        )
        self._spawn(
            "alertmanager",
            [
                BINARIES["alertmanager"],
                "--config.file=alertmanager.yml",
                f"--storage.path={self.workdir / 'alertmanager-data'}",
                f"--web.listen-address=127.0.0.1:{self.alertmanager_port}",
                "--cluster.listen-address=",
            ],
            f"http://127.0.0.1:{self.alertmanager_port}/-/ready",
            {},
        )
        self._spawn(
            "service",
            [
                python,
                "-m",
                "uvicorn",
                "--factory",
                "app.main:create_app",
                "--host",
                "127.0.0.1",
                "--port",
                str(self.service_port),
                "--log-level",
                "warning",
            ],
            f"{self.service_url}/health",
            {
                "PYTHONPATH": str(PROJECT_ROOT / "backend"),
                "RCA_AUTH": "off",
                "RCA_STATE_DIR": str(self.workdir / "state"),
                "RCA_COLLECTION_NAME": f"live-{uuid.uuid4().hex[:8]}",
                "RCA_PROMETHEUS_URL": self.prometheus_url,
                "RCA_SOURCES_FILE": str(self.workdir / "sources.yml"),
                "RCA_UI_BASE_URL": self.service_url,
                **self.service_env,
            },
        )

    def wait_ready(self, timeout: float = 180.0) -> None:
        """Block until every process answers its ready URL.

        Raises:
            RuntimeError: A process exited, or did not become ready in time.
        """
        deadline = time.monotonic() + timeout
        for process in self.processes:
            while True:
                if process.popen.poll() is not None:
                    raise RuntimeError(f"{process.name} exited early:\n{process.output()}")
                if _get(process.ready_url)[0] == 200:
                    break
                if time.monotonic() > deadline:
                    raise RuntimeError(f"{process.name} did not become ready:\n{process.output()}")
                time.sleep(0.2)

    def scraped_samples(self) -> int:
        """How many scrapes of the shop Prometheus holds (its ``up`` samples so far)."""
        query = urllib.parse.quote(f'count_over_time(up{{service="{SERVICE_NAME}"}}[1h])')
        status, body = _get(f"{self.prometheus_url}/api/v1/query?query={query}")
        if status != 200:
            return 0
        result = json.loads(body)["data"]["result"]
        return int(float(result[0]["value"][1])) if result else 0

    def wait_for_baseline(self, samples: int, timeout: float = 60.0) -> None:
        """Block until Prometheus has scraped the healthy shop ``samples`` times."""
        deadline = time.monotonic() + timeout
        while self.scraped_samples() < samples:
            if time.monotonic() > deadline:
                raise RuntimeError("Prometheus did not scrape the shop in time")
            time.sleep(0.5)

    def trigger_failure(self) -> None:
        """Make the shop's shopper send the basket that triggers the bug."""
        status, _ = _post(f"{self.shop_url}/admin/fail")
        if status != 200:
            raise RuntimeError(f"the shop did not switch to failing (HTTP {status})")

    def incidents(self) -> list[dict[str, Any]]:
        """The service's incidents, newest first."""
        status, body = _get(f"{self.service_url}/api/incidents")
        return list(json.loads(body)["items"]) if status == 200 else []

    def wait_for_incident(self, timeout: float = 90.0) -> dict[str, Any]:
        """The first incident the alert opened, in full, once it awaits review.

        Raises:
            RuntimeError: None arrived in time.
        """
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            ready = [i for i in self.incidents() if i["status"] == "awaiting_review"]
            if ready:
                status, body = _get(f"{self.service_url}/api/incidents/{ready[-1]['id']}")
                if status == 200:
                    incident: dict[str, Any] = json.loads(body)
                    return incident
            time.sleep(0.5)
        logs = "\n".join(f"--- {p.name}\n{p.output()}" for p in self.processes)
        raise RuntimeError(f"no incident arrived within {timeout:g}s\n{logs}")

    def incident_url(self, incident_id: str) -> str:
        """The reviewer UI's page of an incident."""
        return f"{self.service_url}/#/incidents/{incident_id}"

    def stop(self) -> None:
        """Terminate every process (kill those that do not stop)."""
        for process in reversed(self.processes):
            if process.popen.poll() is None:
                process.popen.terminate()
        for process in self.processes:
            try:
                process.popen.wait(timeout=15)
            except subprocess.TimeoutExpired:
                process.popen.kill()
                process.popen.wait(timeout=15)
