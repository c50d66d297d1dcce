"""A warm parent that forks real uvicorn servers, so a restart costs no imports.

Importing the service (ONNX runtime, Chroma, LangGraph) takes most of a cold start; the crash
harness restarts the server dozens of times. This process imports everything once and then,
per ``start <port>`` line on stdin, forks a child that runs uvicorn serving
``app.main:create_app`` on 127.0.0.1 (settings from the environment, read in the child) and
answers ``<pid>``. ``wait <pid>`` reaps a child the harness has SIGKILLed and answers ``ok``.
Nothing is built before the fork: the child opens every store and model itself, exactly as
a freshly started process does.
"""

from __future__ import annotations

import os
import sys

import uvicorn

import app.main  # noqa: F401  (the import is the point: children start warm)


def serve(port: int) -> None:
    """The child: a real uvicorn server, until it is killed; its output goes to a log file."""
    log = os.open(
        os.path.join(os.environ["RCA_STATE_DIR"], "server.log"),
        os.O_WRONLY | os.O_CREAT | os.O_APPEND,
    )
    os.dup2(log, 1)
    os.dup2(log, 2)
    print(f"server {os.getpid()} starting on port {port}", file=sys.stderr, flush=True)
    uvicorn.run(
        "app.main:create_app",
        factory=True,
        host="127.0.0.1",
        port=port,
        log_level="warning",
    )
    os._exit(0)


def main() -> None:
    """Answer ``start <port>`` and ``wait <pid>`` lines until stdin closes."""
    for line in sys.stdin:
        command, argument = line.split()
        if command == "start":
            pid = os.fork()
            if pid == 0:
                serve(int(argument))
            print(pid, flush=True)
        elif command == "wait":
            os.waitpid(int(argument), 0)
            print("ok", flush=True)


if __name__ == "__main__":
    main()
