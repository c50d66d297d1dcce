"""Run the sample checkout app until it crashes, and turn the crash into an incident."""

from __future__ import annotations

import importlib.util
import sys
import traceback
from pathlib import Path
from types import ModuleType
from typing import Any

from app.core.config import PROJECT_ROOT

SAMPLE_APP_PATH = PROJECT_ROOT / "data" / "sample_app" / "checkout_service.py"


def load_sample_module(path: Path = SAMPLE_APP_PATH) -> ModuleType:
    """Import the sample app from its file (it is data, not part of the package)."""
    spec = importlib.util.spec_from_file_location("sample_checkout_service", path)
    if spec is None or spec.loader is None:
        raise RuntimeError(f"cannot load sample app from {path}")
    module = importlib.util.module_from_spec(spec)
    # dataclasses look their module up in sys.modules while the class is built.
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def crash_checkout(path: Path = SAMPLE_APP_PATH) -> dict[str, Any]:
    """Execute the checkout with the crashing basket and return the incident it produces."""
    module = load_sample_module(path)
    items, promotion = module.crashing_basket()
    try:
        module.checkout_total(items, promotion)
    except ZeroDivisionError as exc:
        return {
            "error_code": "CO-500",
            "event": "CHECKOUT_SERVICE_CRASH",
            "message": f"ZeroDivisionError while calculating checkout discount: {exc}",
            "stack_trace": "".join(traceback.format_exception(exc)),
            "service": "checkout-service",
        }
    raise RuntimeError("the sample checkout did not crash; the smoke run expects it to")
