"""CPU cost of one HTTP probe through different clients, against N local targets.

    .venv/bin/python bench/probe_clients.py --targets 500 --rounds 6
    .venv/bin/python bench/probe_clients.py --only wire   # e.g. under pyinstrument or py-spy

Each client probes every target once per round (``--concurrency`` in flight, like a shard),
after one unmeasured warm-up round. CPU is this process's user+system time from
``resource.getrusage`` over the measured rounds, divided by the probes done; nothing is
subtracted (the event loop's own cost is part of a probe's). The targets are served by
bench/targets_server.py in another process, so its CPU is not counted here. Compare clients
within one run: the box is shared and absolute figures are noisy. Not run by CI.

Clients:
  httpx-shared  one httpx.AsyncClient with keep-alive (what slamon probed with before issue 8)
  streams       bare asyncio streams, a fresh connection per probe, a fixed request (the floor)
  wire          monitor.probes.wire.get: a fresh connection per probe, parsed head
  probe         monitor.probes.kinds.http.probe: wire plus the ProbeResult and its judgement
  runner        monitor.probes.runner.probe_many: probe plus the runner's deadline and gate
"""

from __future__ import annotations

import argparse
import asyncio
import resource
import sys
import time
from collections.abc import Awaitable, Callable
from pathlib import Path

import httpx

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

import targets_server

from monitor.probes.kinds.http import probe as http_probe
from monitor.probes.model import ProbeTarget
from monitor.probes.runner import probe_client, probe_many
from monitor.probes.wire import get

Probe = Callable[[str], Awaitable[bool]]


def cpu_seconds() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def httpx_shared(concurrency: int) -> tuple[Probe, Callable[[], Awaitable[None]]]:
    limits = httpx.Limits(max_connections=concurrency, max_keepalive_connections=concurrency)
    client = httpx.AsyncClient(limits=limits, follow_redirects=False)

    async def one(url: str) -> bool:
        async with client.stream("GET", url, timeout=2) as reply:
            return reply.status_code == 200

    return one, client.aclose


def streams() -> Probe:
    async def one(url: str) -> bool:
        port = int(url.rsplit(":", 1)[1].split("/", 1)[0])
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        writer.write(b"GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        head = await reader.readuntil(b"\r\n\r\n")
        writer.close()
        return head.startswith(b"HTTP/1.1 200")

    return one


def wire() -> Probe:
    client = probe_client()

    async def one(url: str) -> bool:
        return (await get(client, url, 2.0)).status == 200

    return one


def probe() -> Probe:
    client = probe_client()

    async def one(url: str) -> bool:
        target = ProbeTarget(1, "t", "http", url, 2.0)
        return bool((await http_probe(target, client)).ok)

    return one


async def measure(name: str, one: Probe, urls: list[str], rounds: int, concurrency: int) -> None:
    gate = asyncio.Semaphore(concurrency)

    async def gated(url: str) -> bool:
        async with gate:
            return await one(url)

    await asyncio.gather(*(gated(u) for u in urls))  # warm-up: imports, caches, pools
    wall, cpu, ok = time.monotonic(), cpu_seconds(), 0
    for _ in range(rounds):
        ok += sum(await asyncio.gather(*(gated(u) for u in urls)))
    report(name, len(urls) * rounds, ok, cpu_seconds() - cpu, time.monotonic() - wall)


async def measure_runner(urls: list[str], rounds: int, concurrency: int) -> None:
    client = probe_client()
    targets = [ProbeTarget(i, f"t{i}", "http", u, 2.0) for i, u in enumerate(urls)]
    await probe_many(targets, client, concurrency)
    wall, cpu, ok = time.monotonic(), cpu_seconds(), 0
    for _ in range(rounds):
        ok += sum(bool(r.ok) for r in await probe_many(targets, client, concurrency))
    report("runner", len(urls) * rounds, ok, cpu_seconds() - cpu, time.monotonic() - wall)


def report(name: str, done: int, ok: int, cpu: float, wall: float) -> None:
    print(
        f"{name:<13} {done:>6} probes {ok:>6} ok  {cpu * 1000 / done:7.3f} CPU-ms/probe"
        f"  {done / wall:8.0f} probes/s",
        flush=True,
    )


async def run(args: argparse.Namespace) -> None:
    urls = [f"http://127.0.0.1:{args.base_port + i}/healthz" for i in range(args.targets)]
    chosen = args.only or ["httpx-shared", "streams", "wire", "probe", "runner"]
    for name in chosen:
        if name == "httpx-shared":
            one, close = httpx_shared(args.concurrency)
            await measure(name, one, urls, args.rounds, args.concurrency)
            await close()
        elif name == "runner":
            await measure_runner(urls, args.rounds, args.concurrency)
        else:
            factory = {"streams": streams, "wire": wire, "probe": probe}[name]
            await measure(name, factory(), urls, args.rounds, args.concurrency)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawTextHelpFormatter
    )
    parser.add_argument("--targets", type=int, default=500)
    parser.add_argument("--rounds", type=int, default=6)
    parser.add_argument("--concurrency", type=int, default=200)
    parser.add_argument("--base-port", type=int, default=21000)
    parser.add_argument(
        "--loop", choices=["asyncio", "uvloop"], default="asyncio", help="event loop to run on"
    )
    parser.add_argument(
        "--only",
        action="append",
        choices=["httpx-shared", "streams", "wire", "probe", "runner"],
        help="measure only this client (repeatable)",
    )
    args = parser.parse_args()
    server = targets_server.start(args.base_port, args.targets)
    try:
        if args.loop == "uvloop":
            import uvloop  # not a slamon dependency: measured here to see what it would buy

            uvloop.run(run(args))
        else:
            asyncio.run(run(args))
    finally:
        server.terminate()
        server.wait()


if __name__ == "__main__":
    main()
