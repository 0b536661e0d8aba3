"""Detection latency, end to end: a local target flips to 503; how long until the webhook
arrives? And the same for recovery. Same target, same interval, two confirmations, on both:

- slamon: the real product (`slamon run`), 5 s probe interval, ``confirmations: 2`` (quick
  re-probe after 1 s), its signed webhook; recovery either confirmed by a second good probe
  (the default) or on the first (``recovery_confirmations: 1``, the peer's rule);
- the peer: Prometheus scraping blackbox_exporter every 5 s, rule ``probe_success == 0``
  ``for: 5s`` evaluated every 1 s, Alertmanager (group_wait 0 s, group_interval 1 s) with a
  webhook receiver (send_resolved). An alert resolves at the first evaluation after one good
  scrape: one recovery confirmation.

    .venv/bin/python bench/detection_latency.py --repetitions 5            # both
    .venv/bin/python bench/detection_latency.py --side slamon --backend postgres
    .venv/bin/python bench/detection_latency.py --side slamon --recovery-confirmations 1

Not run by CI. Prints each repetition and min/median/max.
"""

from __future__ import annotations

import argparse
import http.server
import json
import random
import statistics
import threading
import time
from collections.abc import Callable
from contextlib import AbstractContextManager
from typing import Any

import peer
import slamon_side

SETTLE_S = 12.0  # start-up, first probes


class Flap(http.server.BaseHTTPRequestHandler):
    status = 200

    def log_message(self, *args: object) -> None:
        pass

    def do_GET(self) -> None:
        ANSWERS.append((time.time(), Flap.status))
        self.send_response(Flap.status)
        self.send_header("Content-Length", "0")
        self.end_headers()


EVENTS: list[tuple[float, str]] = []  # (arrival time, firing | resolved)
ANSWERS: list[tuple[float, int]] = []  # (time, status) of each probe the target answered


def first_probe(status: int, after: float) -> float:
    """When the target first answered ``status`` at or after ``after``: the probe that saw the
    change. What comes before it is the wait for a probe (a random phase of the interval, the
    same on both sides); what comes after is the monitor's own latency."""
    return min(at for at, answered in ANSWERS if answered == status and at >= after)


def event_of(body: dict[str, Any]) -> str:
    """Slamon's webhook says ``event``; Alertmanager's says ``status``. Both firing|resolved."""
    return str(body.get("event") or body.get("status"))


class Hook(http.server.BaseHTTPRequestHandler):
    def log_message(self, *args: object) -> None:
        pass

    def do_POST(self) -> None:
        body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
        EVENTS.append((time.time(), event_of(json.loads(body))))
        self.send_response(204)
        self.end_headers()


def serve(handler: type[http.server.BaseHTTPRequestHandler]) -> http.server.ThreadingHTTPServer:
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


def wait_event(kind: str, after: float, timeout: float = 120) -> float:
    deadline = time.time() + timeout
    while time.time() < deadline:
        for at, event in EVENTS:
            if event == kind and at >= after:
                return at
        time.sleep(0.02)
    raise TimeoutError(f"no {kind} webhook within {timeout} s")


Starter = Callable[[str, str], AbstractContextManager[Any]]  # (target url, webhook url) -> running


def measure(start: Starter, repetitions: int, interval_s: float, label: str) -> dict[str, Any]:
    """Flip the target ``repetitions`` times at random phases; seconds to each webhook."""
    flap, hook = serve(Flap), serve(Hook)
    Flap.status = 200
    EVENTS.clear()
    ANSWERS.clear()
    flap_url = f"http://127.0.0.1:{flap.server_address[1]}/"
    hook_url = f"http://127.0.0.1:{hook.server_address[1]}/"
    down_s: list[float] = []
    up_s: list[float] = []
    down_after_probe_s: list[float] = []
    up_after_probe_s: list[float] = []
    try:
        with start(flap_url, hook_url):
            time.sleep(SETTLE_S)
            for n in range(repetitions):
                time.sleep(random.uniform(0, interval_s))  # fail at a random phase
                Flap.status, failed_at = 503, time.time()
                fired = wait_event("firing", failed_at)
                down_s.append(fired - failed_at)
                down_after_probe_s.append(fired - first_probe(503, failed_at))
                time.sleep(random.uniform(0, interval_s))
                Flap.status, back_at = 200, time.time()
                resolved = wait_event("resolved", back_at)
                up_s.append(resolved - back_at)
                up_after_probe_s.append(resolved - first_probe(200, back_at))
                print(
                    f"  {label} repetition {n + 1}: down -> webhook {down_s[-1]:.2f} s "
                    f"({down_after_probe_s[-1]:.2f} s after the first failing probe), "
                    f"up -> webhook {up_s[-1]:.2f} s "
                    f"({up_after_probe_s[-1]:.2f} s after the first good probe)",
                    flush=True,
                )
    finally:
        flap.shutdown()
        hook.shutdown()
    return {
        "detection_s": summary(down_s),
        "recovery_s": summary(up_s),
        "detection_after_probe_s": summary(down_after_probe_s),
        "recovery_after_probe_s": summary(up_after_probe_s),
    }


def summary(values: list[float]) -> dict[str, Any]:
    return {
        "min": round(min(values), 2),
        "median": round(statistics.median(values), 2),
        "max": round(max(values), 2),
        "each": [round(v, 2) for v in values],
    }


def slamon_starter(interval_s: float, backend: str, recovery: int | None) -> Starter:
    def start(target: str, webhook: str) -> AbstractContextManager[Any]:
        config = slamon_side.config_text(
            [target], interval_s, 2.0, webhook_url=webhook, recovery_confirmations=recovery
        )
        database = "slamon_bench_h3_detect"
        return slamon_side.SlamonRun(config, slamon_side.Backend(backend, database))

    return start


def peer_starter(interval_s: float) -> Starter:
    def start(target: str, webhook: str) -> AbstractContextManager[Any]:
        return peer.Peer([target], interval_s, webhook_url=webhook, for_s=5.0)

    return start


def run(
    side: str,
    repetitions: int,
    interval_s: float,
    backend: str = "sqlite",
    recovery_confirmations: int | None = None,
) -> dict[str, Any]:
    """Detection and recovery latency of ``side`` (slamon | peer); ``recovery_confirmations``
    is slamon's (None: its default, as many as the 2 down confirmations)."""
    if side == "slamon":
        starter = slamon_starter(interval_s, backend, recovery_confirmations)
        result = measure(starter, repetitions, interval_s, side)
        if backend == "postgres":
            slamon_side.drop_postgres("slamon_bench_h3_detect")
        return result
    peer.ensure_installed()
    return measure(peer_starter(interval_s), repetitions, interval_s, side)


def print_summary(side: str, result: dict[str, Any], interval_s: float, recovery: int) -> None:
    for name in ("detection_s", "recovery_s"):
        s = result[name]
        confirmations = 2 if name == "detection_s" else recovery
        print(
            f"{side:<7} {name[:-2]:<10} min {s['min']:.2f} s  median {s['median']:.2f} s  "
            f"max {s['max']:.2f} s  (interval {interval_s:g} s, {confirmations} confirmations)"
        )


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawTextHelpFormatter
    )
    parser.add_argument("--repetitions", type=int, default=5)
    parser.add_argument("--interval", type=float, default=5.0)
    parser.add_argument("--side", choices=["slamon", "peer", "both"], default="both")
    parser.add_argument("--backend", choices=["sqlite", "postgres"], default="sqlite")
    parser.add_argument(
        "--recovery-confirmations",
        type=int,
        default=None,
        help="slamon's recovery_confirmations (default: as many as its 2 down confirmations)",
    )
    args = parser.parse_args()
    sides = ["slamon", "peer"] if args.side == "both" else [args.side]
    recovery = args.recovery_confirmations
    for side in sides:
        result = run(side, args.repetitions, args.interval, args.backend, recovery)
        shown = 1 if side == "peer" else recovery or 2
        print_summary(side, result, args.interval, shown)


if __name__ == "__main__":
    main()
