"""One discovery sweep of a large fleet: time, peak memory and SQL statements, in one run on
SQLite and (when it answers on 127.0.0.1:5432, user postgres) PostgreSQL.

    .venv/bin/python bench/discovery_sweep.py                     # 1,000 and 10,000 instances
    .venv/bin/python bench/discovery_sweep.py --sizes 2000,20000

The source is a real local server: Prometheus' http_sd answering N target groups, one address
each. Per database and size, four sweeps in a row, each timed from the listing to the commit:

- ``first``: every instance is new (N added);
- ``steady``: nothing changed (N kept: what the beat's sweep costs most of the time);
- ``churn``: a tenth changed their pool, a twentieth are gone (retire_after 1);
- ``again``: the same as the last (nothing changed).

Prints wall seconds, peak Python allocations (tracemalloc, MiB), and the
SQL statements executed (an executemany counts once): the statements stay flat with the fleet's
size where a sweep of one round trip per instance would grow by N. The larger size's time
against the smaller's closes each database's table. A benchmark that prints figures, not a
timed test. Not run by CI. The SQLite file lives in a temporary folder; the PostgreSQL database
``slamon_bench_discovery`` is dropped after each size.
"""

from __future__ import annotations

import argparse
import http.server
import json
import sys
import tempfile
import threading
import time
import tracemalloc
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import sqlalchemy as sa

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from monitor.config import parse_config
from monitor.db.engine import make_engine, make_sessionmaker
from monitor.db.migrate import upgrade
from monitor.fleet.sweep import sweep

PG_ADMIN = "postgresql+psycopg://postgres@127.0.0.1:5432/postgres"
PG_DB = "slamon_bench_discovery"


class GroupsServer:
    """http_sd on loopback: ``document`` is what GET /sd answers (the bench changes it)."""

    def __init__(self) -> None:
        self.document = b"[]"
        owner = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def log_message(self, *args: object) -> None:
                pass

            def do_GET(self) -> None:
                body = owner.document
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/sd"

    def publish(self, count: int, changed: int = 0, gone: int = 0) -> None:
        groups = []
        for n in range(gone, count):
            pool = "moved" if n < gone + changed else f"pool-{n % 20}"
            labels = {"pool": pool, "instance_type": "p5.48xlarge", "capacity": "spot"}
            address = f"10.{n // 65536}.{n // 256 % 256}.{n % 256}:9400"
            groups.append({"targets": [address], "labels": labels})
        self.document = json.dumps(groups).encode()

    def close(self) -> None:
        self.server.shutdown()


CONFIG = """
discovery:
  - name: bench
    kind: http_sd
    url: {url}
    retire_after: 1
    timeout: 120s
    template: {{kind: dcgm, url: "http://{{address}}/metrics", interval: 30s}}
"""


@contextmanager
def counted(engine: sa.Engine) -> Iterator[list[str]]:
    statements: list[str] = []

    def count(*args: Any) -> None:
        statements.append(args[2])

    sa.event.listen(engine, "before_cursor_execute", count)
    try:
        yield statements
    finally:
        sa.event.remove(engine, "before_cursor_execute", count)


def timed_sweep(engine: sa.Engine, config: Any) -> tuple[float, float, int, str]:
    sessions = make_sessionmaker(engine)
    source = config.discovery[0]
    tracemalloc.start()
    with counted(engine) as statements:
        started = time.perf_counter()
        outcome = sweep(sessions, config, source)
        elapsed = time.perf_counter() - started
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    assert outcome.ok, outcome.error
    counts = ", ".join(f"{n} {a}" for a, n in outcome.counts().items() if n)
    return elapsed, peak / 2**20, len(statements), counts


def run_size(make: Callable[[], sa.Engine], size: int, server: GroupsServer) -> dict[str, float]:
    engine = make()
    upgrade(engine)
    config = parse_config(CONFIG.format(url=server.url))
    phases = {
        "first": (0, 0),
        "steady": (0, 0),
        "churn": (size // 10, size // 20),
        "again": (size // 10, size // 20),
    }
    times = {}
    for phase, (changed, gone) in phases.items():
        server.publish(size, changed, gone)
        elapsed, peak, statements, counts = timed_sweep(engine, config)
        times[phase] = elapsed
        print(
            f"  {size:>6} {phase:<7} {elapsed:7.2f} s  peak {peak:7.1f} MiB  "
            f"{statements:>4} statements  ({counts})"
        )
    engine.dispose()
    return times


def sqlite_engine(folder: Path) -> Callable[[], sa.Engine]:
    def make() -> sa.Engine:
        path = folder / f"bench-{time.monotonic_ns()}.db"
        return make_engine(f"sqlite:///{path}")

    return make


def postgres_engine() -> Callable[[], sa.Engine] | None:
    admin = sa.create_engine(PG_ADMIN, isolation_level="AUTOCOMMIT")
    try:
        with admin.connect() as connection:
            connection.execute(sa.text("SELECT 1"))
    except sa.exc.OperationalError:
        return None

    def make() -> sa.Engine:
        with admin.connect() as connection:
            connection.execute(sa.text(f"DROP DATABASE IF EXISTS {PG_DB} WITH (FORCE)"))
            connection.execute(sa.text(f"CREATE DATABASE {PG_DB}"))
        return make_engine(PG_ADMIN.rsplit("/", 1)[0] + f"/{PG_DB}")

    return make


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="1000,10000")
    args = parser.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    server = GroupsServer()
    with tempfile.TemporaryDirectory() as folder:
        backends: dict[str, Callable[[], sa.Engine] | None] = {
            "sqlite": sqlite_engine(Path(folder)),
            "postgresql": postgres_engine(),
        }
        for name, make in backends.items():
            if make is None:
                print(f"{name}: not answering, skipped")
                continue
            print(f"{name}:")
            results = {size: run_size(make, size, server) for size in sizes}
            if len(sizes) > 1:
                small, large = results[sizes[0]], results[sizes[-1]]
                ratio = ", ".join(f"{p} {large[p] / small[p]:.1f}x" for p in large)
                scale = sizes[-1] / sizes[0]
                print(f"  {sizes[-1]} against {sizes[0]} instances ({scale:.0f}x): {ratio}")
    server.close()


if __name__ == "__main__":
    main()
