"""Run the sample failure scenarios in-process and turn what they log into incidents.

Each scenario is a small module in ``data/sample_app/`` (a payment call that times out, an
inventory dependency answering 503, a POS sale with an impossible quantity). Its
``simulate(log)`` does a little realistic work, logs INFO/WARN noise and one causal ERROR with
its traceback, and needs no network. The runner captures the log output exactly as a service
would write it and builds the incident from it with ``incident_from_text``, the same path as
``rca analyze --log FILE``.
"""

from __future__ import annotations

import importlib.util
import io
import logging
import sys
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

from app.core.config import PROJECT_ROOT
from app.intake.logfile import incident_from_text

SAMPLE_DIR = PROJECT_ROOT / "data" / "sample_app"
LOG_FORMAT = "%(asctime)s.%(msecs)03d %(levelname)-5s %(name)s %(message)s"
DATE_FORMAT = "%Y-%m-%d %H:%M:%S"


@dataclass(frozen=True)
class Scenario:
    """One sample failure: the module that produces it and the logger it writes to."""

    module: str
    logger: str


SCENARIOS: dict[str, Scenario] = {
    "payment": Scenario("payment_client.py", "checkout.payment-client"),
    "inventory": Scenario("inventory_client.py", "storefront.inventory-client"),
    "pos_sale": Scenario("pos_sale.py", "pos-api.sales"),
}


def load_scenario_module(name: str, sample_dir: Path = SAMPLE_DIR) -> ModuleType:
    """Import a scenario's module from its file (it is data, not part of the package).

    Args:
        name: A key of ``SCENARIOS``.
        sample_dir: Where the sample modules live.

    Returns:
        The module.

    Raises:
        KeyError: No scenario has that name.
    """
    scenario = SCENARIOS[name]
    path = sample_dir / scenario.module
    module_name = f"sample_{path.stem}"
    spec = importlib.util.spec_from_file_location(module_name, path)
    if spec is None or spec.loader is None:
        raise RuntimeError(f"cannot load scenario module {path.name}")
    module = importlib.util.module_from_spec(spec)
    # dataclasses and pydantic look their module up in sys.modules while classes are built.
    sys.modules[module_name] = module
    spec.loader.exec_module(module)
    return module


def _capture(name: str, sample_dir: Path) -> tuple[ModuleType, str]:
    """Run a scenario's ``simulate`` with its logger captured; returns (module, log text)."""
    scenario = SCENARIOS[name]
    module = load_scenario_module(name, sample_dir)
    root = logging.getLogger(scenario.logger.split(".", 1)[0])
    buffer = io.StringIO()
    handler = logging.StreamHandler(buffer)
    handler.setFormatter(logging.Formatter(LOG_FORMAT, DATE_FORMAT))
    previous = (root.level, root.propagate)
    root.addHandler(handler)
    root.setLevel(logging.INFO)
    root.propagate = False  # keep the scenario's deliberate errors out of the caller's logs
    try:
        module.simulate(logging.getLogger(scenario.logger))
    finally:
        root.removeHandler(handler)
        root.setLevel(previous[0])
        root.propagate = previous[1]
    return module, buffer.getvalue()


def scenario_log(name: str, sample_dir: Path = SAMPLE_DIR) -> str:
    """Run a scenario and return everything it logged, formatted like a service log.

    Args:
        name: A key of ``SCENARIOS``.
        sample_dir: Where the sample modules live.

    Returns:
        The log text (timestamps vary from run to run).

    Raises:
        KeyError: No scenario has that name.
    """
    return _capture(name, sample_dir)[1]


def run_scenario(name: str, sample_dir: Path = SAMPLE_DIR) -> dict[str, Any]:
    """Run a scenario and return the incident its log produces.

    Args:
        name: A key of ``SCENARIOS`` (``payment``, ``inventory``, ``pos_sale``).
        sample_dir: Where the sample modules live.

    Returns:
        An ``IncidentCreate``-shaped dict; ``service`` is the scenario's service.

    Raises:
        KeyError: No scenario has that name.
    """
    module, text = _capture(name, sample_dir)
    incident = incident_from_text(text)
    incident["service"] = str(module.SERVICE)
    return incident
