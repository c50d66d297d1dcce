"""Watch the whole loop: ``make live``.

Starts the sample shop, Prometheus, Alertmanager and the RCA service on loopback (configuration
and data generated under ``var/live``), waits for a healthy baseline, drives the shop into its
failure, waits for the alert to arrive as an incident and prints its URL. Everything keeps
running -- open the URL, look at the collected series and log lines, approve or reject -- until
Ctrl-C stops it all.
"""

from __future__ import annotations

import argparse
import shutil
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from livestack import PROJECT_ROOT, LiveStack, missing_binaries  # noqa: E402

BASELINE_SCRAPES = 15


def main() -> int:
    """Run the loop until Ctrl-C; 1 when something could not start."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dir", type=Path, default=PROJECT_ROOT / "var" / "live")
    parser.add_argument("--port", type=int, default=0, help="service port (default: a free one)")
    args = parser.parse_args()
    missing = missing_binaries()
    if missing:
        print(f"missing: {', '.join(missing)} (apt-get install prometheus prometheus-alertmanager)")
        return 1
    shutil.rmtree(args.dir, ignore_errors=True)
    stack = LiveStack(args.dir, service_port=args.port)
    try:
        print(f"starting the shop, Prometheus, Alertmanager and the service in {args.dir} …")
        stack.start()
        stack.wait_ready()
        print(f"service:    {stack.service_url}")
        print(f"prometheus: {stack.prometheus_url}")
        print(f"shop:       {stack.shop_url}  (log: {stack.log_file})")
        print(f"waiting for {BASELINE_SCRAPES} healthy scrapes …")
        stack.wait_for_baseline(BASELINE_SCRAPES)
        print("driving the shop into its failure (free samples with a promotion code) …")
        stack.trigger_failure()
        incident = stack.wait_for_incident()
        print(f"\nincident: {stack.incident_url(incident['id'])}")
        for item in incident.get("collected_evidence", []):
            print(f"  {item['id']}: {item['summary']}")
        for unavailable in incident.get("sources_unavailable", []):
            print(f"  unavailable: {unavailable['source']}: {unavailable['reason']}")
        print("\nrunning; Ctrl-C stops everything")
        while all(p.popen.poll() is None for p in stack.processes):
            time.sleep(1)
        print("a process exited; stopping")
        return 1
    except KeyboardInterrupt:
        return 0
    except RuntimeError as exc:
        print(exc)
        return 1
    finally:
        stack.stop()


if __name__ == "__main__":
    sys.exit(main())
