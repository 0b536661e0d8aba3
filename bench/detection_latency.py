"""Detection latency, end to end: a local target flips to 503; how long until slamon's signed
webhook arrives? And the same for recovery. Runs the real product (`slamon run`: worker with
beat + API) at a 5 s probe interval with 2 confirmations (quick re-probe after 1 s).

    .venv/bin/python bench/detection_latency.py --repetitions 5
    SLAMON_DATABASE_URL=postgresql+psycopg://postgres@127.0.0.1/slamon_lat \\
    SLAMON_BROKER_URL=redis://127.0.0.1:6379/3 .venv/bin/python bench/detection_latency.py

Not run by CI. Prints each repetition and min/median/max.
"""

from __future__ import annotations

import argparse
import http.server
import json
import os
import random
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

VENV_BIN = Path(sys.executable).parent


class Flap(http.server.BaseHTTPRequestHandler):
    status = 200

    def log_message(self, *args: object) -> None:
        pass

    def do_GET(self) -> None:
        self.send_response(Flap.status)
        self.send_header("Content-Length", "0")
        self.end_headers()


EVENTS: list[tuple[float, str]] = []  # (arrival time, firing | resolved)


class Hook(http.server.BaseHTTPRequestHandler):
    def log_message(self, *args: object) -> None:
        pass

    def do_POST(self) -> None:
        body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
        EVENTS.append((time.time(), json.loads(body)["event"]))
        self.send_response(204)
        self.end_headers()


def serve(handler: type[http.server.BaseHTTPRequestHandler]) -> http.server.ThreadingHTTPServer:
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


def wait_event(kind: str, after: float, timeout: float = 60) -> float:
    deadline = time.time() + timeout
    while time.time() < deadline:
        for at, event in EVENTS:
            if event == kind and at >= after:
                return at
        time.sleep(0.02)
    raise TimeoutError(f"no {kind} webhook within {timeout} s")


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawTextHelpFormatter
    )
    parser.add_argument("--repetitions", type=int, default=5)
    parser.add_argument("--interval", type=float, default=5.0)
    args = parser.parse_args()
    flap, hook = serve(Flap), serve(Hook)
    workdir = Path(tempfile.mkdtemp(prefix="slamon-latency-"))
    flap_url = f"http://127.0.0.1:{flap.server_address[1]}/"
    (workdir / "slamon.yaml").write_text(f"""
probes: {{retry_interval: 1s}}
targets:
  - {{name: flap, kind: http, url: "{flap_url}", interval: {args.interval}, timeout: 2,
     confirmations: 2}}
channels:
  - {{name: bench, kind: webhook, url: "http://127.0.0.1:{hook.server_address[1]}/", secret: s}}
""")
    run = subprocess.Popen(
        [str(VENV_BIN / "slamon"), "run", "--port", "18944"],
        cwd=workdir,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        env=os.environ.copy(),
    )
    down_s, up_s = [], []
    try:
        time.sleep(12)  # migrate, start, first probes
        for n in range(args.repetitions):
            time.sleep(random.uniform(0, args.interval))  # fail at a random phase of the interval
            Flap.status, failed_at = 503, time.time()
            down_s.append(wait_event("firing", failed_at) - failed_at)
            time.sleep(random.uniform(0, args.interval))
            Flap.status, back_at = 200, time.time()
            up_s.append(wait_event("resolved", back_at) - back_at)
            print(
                f"repetition {n + 1}: down -> webhook {down_s[-1]:.2f} s, up -> webhook {up_s[-1]:.2f} s"
            )
    finally:
        run.send_signal(signal.SIGINT)
        run.wait(timeout=60)
    for name, values in (("detection", down_s), ("recovery", up_s)):
        print(
            f"{name:<10} min {min(values):.2f} s  median {statistics.median(values):.2f} s  "
            f"max {max(values):.2f} s  (interval {args.interval:g} s, 2 confirmations)"
        )


if __name__ == "__main__":
    main()
