"""Time the month-to-date surfaces (`GET /`, a pool's page, a badge, `GET /api/v1/sla`,
`GET /metrics`) at two fleet sizes with a month of history, in one run: SQLite, and PostgreSQL
when it answers on 127.0.0.1:5432 (user postgres).

    .venv/bin/python bench/status_page.py                          # 100 and 1,000 targets
    .venv/bin/python bench/status_page.py --targets 100,3000 --requests 20 --minute-hours 2

Each database is seeded through SQLAlchemy Core (the same rows on both): N targets (http and
dcgm, 3 providers, pools of 8), the quorum's and two vantages' states, 30 days of observed
windows (with one 30-minute monitor gap) and outages (3 reachable and 3 usable per target, a
few still open, several in the last day), hour rollups for the 30 days, minute rollups for the
last ``--minute-hours`` hours, 3 providers with feeds in different health, open incidents,
firing alerts and two vantages. No raw probe rows: no surface reads them.

Prints, per database and size, for each endpoint through the real ASGI app in-process (no
network): the median of ``--requests`` requests in a row (nothing written between them: what a
status page, an API client or a scraper meets between two writes to what happened; the
answer is kept per ``monitor.history.generation``) and the median of requests each made right
after a write (the answer rebuilt); then what rebuilding GET / costs (the month-to-date report,
the page's own queries and shaping, rendering); and per database the larger size's medians
against the smaller's, with the goals (<= 100 ms at 1,000 targets, <= 3x the 100-target
figure). A benchmark that prints figures, not a timed test. Not run by CI.
The SQLite files are written under a fresh temporary folder and removed; the PostgreSQL
database ``slamon_bench_status`` is dropped after each size unless ``--keep``.
"""

from __future__ import annotations

import argparse
import functools
import statistics
import sys
import tempfile
import time
import warnings
from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import sqlalchemy as sa

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from monitor.db.engine import make_engine, make_sessionmaker
from monitor.db.migrate import upgrade
from monitor.db.models import (
    Alert,
    Feed,
    Incident,
    ObservedWindow,
    Outage,
    ProbeRollup,
    Provider,
    Target,
    TargetState,
    Vantage,
)

PG_DATABASE = "slamon_bench_status"
PROVIDERS = ("aws", "gcp", "coreweave")
VANTAGES = ("eu-west", "us-east")
BATCH = 20_000
SPLIT_RUNS = 4  # build_view + render timed apart: 1 warm-up, the median of the rest


def rows_in_batches(rows: Iterator[dict[str, Any]]) -> Iterator[list[dict[str, Any]]]:
    batch: list[dict[str, Any]] = []
    for row in rows:
        batch.append(row)
        if len(batch) >= BATCH:
            yield batch
            batch = []
    if batch:
        yield batch


def insert(engine: sa.Engine, model: type, rows: Iterator[dict[str, Any]]) -> int:
    """Insert ``rows`` into ``model``'s table in batches (one executemany each); rows inserted."""
    table = model.__table__  # type: ignore[attr-defined]
    began, count = time.perf_counter(), 0
    with engine.begin() as connection:
        for batch in rows_in_batches(rows):
            connection.execute(sa.insert(table), batch)
            count += len(batch)
    print(f"  {table.name:<16} {count:>10,} rows {time.perf_counter() - began:7.1f} s", flush=True)
    return count


def seed(engine: sa.Engine, targets: int, now: datetime, minute_hours: int) -> None:
    """A month of history for ``targets`` targets ending at ``now`` (see the module docstring)."""
    start = now - timedelta(days=30)
    hour = now.replace(minute=0, second=0, microsecond=0)
    insert(engine, Provider, _providers())
    with engine.connect() as c:
        provider_ids = dict(c.execute(sa.select(Provider.slug, Provider.id)).all())
    insert(engine, Feed, _feeds(provider_ids, now))
    insert(engine, Incident, _incidents(provider_ids, now))
    insert(engine, Target, _targets(targets, start))
    with engine.connect() as c:
        ids = list(c.execute(sa.select(Target.id).order_by(Target.id)).scalars())
    insert(engine, TargetState, _states(ids, now))
    insert(engine, ObservedWindow, _windows(ids, start, now))
    insert(engine, Outage, _outages(ids, start, now))
    insert(engine, ProbeRollup, _hour_rollups(ids, hour - timedelta(days=30), hour))
    insert(engine, ProbeRollup, _minute_rollups(ids, now - timedelta(hours=minute_hours), now))
    insert(engine, Alert, _alerts(now))
    insert(engine, Vantage, _vantages(now, targets))


def _providers() -> Iterator[dict[str, Any]]:
    for slug in PROVIDERS:
        yield {
            "slug": slug,
            "name": slug.upper(),
            "regions": [],
            "components": [],
            "source": "catalog",
            "created_at": datetime.now(UTC),
        }


def _feeds(providers: dict[str, int], now: datetime) -> Iterator[dict[str, Any]]:
    health = {
        "aws": (now - timedelta(minutes=1), now - timedelta(minutes=1), 0, None),
        "gcp": (now - timedelta(minutes=1), now - timedelta(hours=2), 60, "ConnectTimeout"),
        "coreweave": (None, None, 0, None),
    }
    for slug, (polled, success, failures, error) in health.items():
        yield {
            "provider_id": providers[slug],
            "kind": "statuspage",
            "url": f"https://status.{slug}.example/api/v2/summary.json",
            "enabled": True,
            "last_polled_at": polled,
            "last_success_at": success,
            "consecutive_failures": failures,
            "total_failures": failures,
            "last_error": error,
            "created_at": now - timedelta(days=60),
        }


def _incidents(providers: dict[str, int], now: datetime) -> Iterator[dict[str, Any]]:
    for i in range(5):
        yield {
            "provider_id": providers["aws"],
            "source_id": f"inc-{i}",
            "title": f"Elevated error rates {i}",
            "status": "investigating",
            "impact": "minor",
            "is_maintenance": False,
            "started_at": now - timedelta(hours=i + 1),
            "first_seen_at": now - timedelta(hours=i + 1),
            "last_seen_at": now,
            "url": f"https://status.aws.example/incidents/{i}",
            "components": [],
            "regions": [],
            "relevant": True,
            "content_hash": f"h{i}",
        }


def _targets(count: int, created: datetime) -> Iterator[dict[str, Any]]:
    for i in range(count):
        kind = "dcgm" if i % 2 else "http"
        yield {
            "name": f"gpu-{i:05d}",
            "kind": kind,
            "url": f"http://10.0.{i // 250}.{i % 250}:9400/metrics",
            "provider": PROVIDERS[i % 3],
            "region": f"r{i % 2}",
            "zone": f"z{i % 3}",
            "pool": f"pool-{i // 8}",
            "instance_type": "p5.48xlarge",
            "gpus": 8,
            "hourly_price": 98.32,
            "interval_s": 30.0,
            "timeout_s": 5.0,
            "confirmations": 2,
            "settings": {},
            "labels": {},
            "source": "config",
            "created_at": created - timedelta(days=30),
        }


def _states(ids: list[int], now: datetime) -> Iterator[dict[str, Any]]:
    for n, target_id in enumerate(ids):
        usable = "down" if n % 97 == 0 else "up"
        reachable = "down" if n % 89 == 0 else "up"
        for vantage in ("*", *VANTAGES):
            for series, state in (("reachable", reachable), ("usable", usable)):
                yield {
                    "target_id": target_id,
                    "vantage": vantage,
                    "series": series,
                    "state": state,
                    "since": now - timedelta(days=2),
                    "consecutive_failures": 0,
                    "consecutive_successes": 100,
                    "last_probe_at": now - timedelta(seconds=n % 30),
                    "detail": {},
                }


def _windows(ids: list[int], start: datetime, now: datetime) -> Iterator[dict[str, Any]]:
    gap = start + timedelta(days=11)
    for target_id in ids:
        yield {"target_id": target_id, "start": start, "end": gap, "source": "probe"}
        yield {
            "target_id": target_id,
            "start": gap + timedelta(minutes=30),
            "end": now,
            "source": "probe",
        }


def _outages(ids: list[int], start: datetime, now: datetime) -> Iterator[dict[str, Any]]:
    minutes = int((now - start).total_seconds() // 60)
    for n, target_id in enumerate(ids):
        for k in range(3):
            at = start + timedelta(minutes=(n * 7919 + k * 104729) % (minutes - 90))
            if k == 2 and n % 3 == 0:  # a third of the targets had one in the last day
                at = now - timedelta(minutes=60 + (n * 37) % 1300)
            for series in ("reachable", "usable"):
                still_open = series == "usable" and k == 2 and n % 97 == 0
                yield {
                    "target_id": target_id,
                    "series": series,
                    "start": at,
                    "end": None if still_open else at + timedelta(minutes=2 + (n + k) % 59),
                    "confirmed_at": at,
                    "source": "probe",
                    "detail": {},
                }


def _hour_rollups(ids: list[int], first: datetime, last: datetime) -> Iterator[dict[str, Any]]:
    hours = int((last - first).total_seconds() // 3600)
    for target_id in ids:
        for h in range(hours):
            yield _rollup(target_id, "hour", first + timedelta(hours=h), 120, 20 + h % 7)


def _minute_rollups(ids: list[int], first: datetime, now: datetime) -> Iterator[dict[str, Any]]:
    first = first.replace(second=0, microsecond=0)
    minutes = int((now - first).total_seconds() // 60)
    for target_id in ids:
        for m in range(minutes):
            yield _rollup(target_id, "minute", first + timedelta(minutes=m), 2, 20 + m % 5)


def _rollup(
    target_id: int, resolution: str, at: datetime, count: int, p50: float
) -> dict[str, Any]:
    return {
        "target_id": target_id,
        "resolution": resolution,
        "bucket_start": at,
        "count": count,
        "failures": 0,
        "unknown": 0,
        "latency_p50_ms": p50,
        "latency_p95_ms": p50 * 2,
        "latency_max_ms": p50 * 3,
    }


def _alerts(now: datetime) -> Iterator[dict[str, Any]]:
    for i in range(20):
        yield {
            "fingerprint": f"fp-{i}",
            "rule": "target_down",
            "severity": "critical",
            "labels": {},
            "summary": f"gpu-{i:05d} unreachable",
            "state": "firing",
            "started_at": now - timedelta(minutes=i),
            "suppressed": False,
        }


def _vantages(now: datetime, targets: int) -> Iterator[dict[str, Any]]:
    for name, blind in zip(VANTAGES, (False, True), strict=True):
        yield {
            "name": name,
            "last_probe_at": now,
            "targets": targets,
            "disagreeing": targets if blind else 0,
            "last_agreed_at": now - (timedelta(minutes=20) if blind else timedelta(0)),
            "disagreeing_since": now - timedelta(minutes=15) if blind else None,
            "blind_since": now - timedelta(minutes=12) if blind else None,
            "updated_at": now,
        }


# --------------------------------------------------------------------------- timing


def timed(action: Callable[[], Any]) -> tuple[Any, float]:
    began = time.perf_counter()
    result = action()
    return result, time.perf_counter() - began


# the status page, a pool's page and a provider's badge read one view, kept between writes
ENDPOINTS = (
    "/",
    "/pools/pool-0",
    "/badges/providers/aws/uptime-30d.svg",
    "/api/v1/sla",
    "/metrics",
)


def _touch(database_url: str) -> None:
    """A write to what happened, as a writer makes one (an alert's summary changes): every
    surface's kept answer is stale after it."""
    engine = make_engine(database_url)
    try:
        with engine.begin() as c:
            c.execute(
                sa.update(Alert)
                .where(Alert.id == sa.select(sa.func.min(Alert.id)).scalar_subquery())
                .values(summary=Alert.summary + ".")
            )
    finally:
        engine.dispose()


def measure(database_url: str, folder: Path, requests: int) -> dict[str, Any]:
    """Per endpoint: the median of ``requests`` requests in a row (nothing written between
    them: what a dashboard or a scraper meets between two writes) and the median of
    ``requests // 2`` each right after a write (the answer rebuilt); GET /'s split."""
    warnings.filterwarnings("ignore", message="Using `httpx` with")  # starlette's TestClient
    from fastapi.testclient import TestClient

    from monitor import tokens
    from monitor.api.app import create_app
    from monitor.api.status_page import render
    from monitor.config import Config
    from monitor.db.base import utcnow
    from monitor.reports import service
    from monitor.settings import Settings
    from monitor.status import view as status_view

    settings = Settings(  # type: ignore[call-arg]
        database_url=database_url, config=folder / "none.yaml", state_dir=folder / "state"
    )
    engine = make_engine(database_url)
    with make_sessionmaker(engine)() as session:
        token = tokens.create(session, f"bench-{time.monotonic_ns()}", "read")
        session.commit()
    headers = {"Authorization": f"Bearer {token}"}
    app = create_app(settings)
    figures: dict[str, Any] = {}
    with TestClient(app) as client:
        for path in ENDPOINTS:
            first = client.get(path, headers=headers)
            assert first.status_code == 200, first.text[:500]
            hot = [timed(lambda p=path: client.get(p, headers=headers))[1] for _ in range(requests)]
            cold = []
            for _ in range(max(1, requests // 2)):
                _touch(database_url)
                cold.append(timed(lambda p=path: client.get(p, headers=headers))[1])
            figures[path] = {
                "hot_median_s": statistics.median(hot),
                "hot_max_s": max(hot),
                "cold_median_s": statistics.median(cold),
                "bytes": len(first.content),
            }
    statements: list[str] = []
    sa.event.listen(engine, "before_cursor_execute", lambda *a: statements.append(a[2]))
    build_s, render_s, report_s, counted = [], [], [], []
    try:
        for _ in range(SPLIT_RUNS):  # the first warms this engine's pool and statement cache
            statements.clear()
            service.MONTH_TO_DATE.clear()
            with make_sessionmaker(engine)() as session:
                config = Config()
                month_to_date = functools.partial(service.month_to_date, session, config)
                report_s.append(timed(lambda: month_to_date(utcnow()))[1])  # noqa: B023
                build = functools.partial(status_view.build_view, session, config)
                view, elapsed = timed(lambda: build(utcnow()))  # noqa: B023
            build_s.append(elapsed)
            counted.append(len(statements))
            render_s.append(timed(functools.partial(render, view))[1])
    finally:
        engine.dispose()
    return {
        "endpoints": figures,
        "monthly_report_s": statistics.median(report_s[1:]),
        "build_view_s": statistics.median(build_s[1:]),
        "render_s": statistics.median(render_s[1:]),
        "statements": counted[-1],
        "targets_shown": len(view.fleet),
    }


def run(
    label: str, url: str, folder: Path, targets: int, args: argparse.Namespace
) -> dict[str, Any]:
    engine = make_engine(url)
    try:
        upgrade(engine)
        now = datetime.now(UTC)
        print(f"{label}: seeding {targets} targets, 30 days of history", flush=True)
        _, seed_s = timed(lambda: seed(engine, targets, now, args.minute_hours))
        print(f"  seeded in {seed_s:.1f} s", flush=True)
        if engine.dialect.name == "postgresql":
            with engine.connect().execution_options(isolation_level="AUTOCOMMIT") as c:
                c.execute(sa.text("VACUUM ANALYZE"))
        else:
            with engine.begin() as c:
                c.execute(sa.text("ANALYZE"))
    finally:
        engine.dispose()
    figures = measure(url, folder, args.requests)
    report(label, targets, args, figures)
    return figures


def report(label: str, targets: int, args: argparse.Namespace, f: dict[str, Any]) -> None:
    print(f"\n{label}: {f['targets_shown']} targets, {args.requests} requests in a row each")
    for path, e in f["endpoints"].items():
        print(
            f"  {path:<36} median {e['hot_median_s'] * 1000:8.1f} ms (max {e['hot_max_s'] * 1000:.1f})"
            f"   after a write {e['cold_median_s'] * 1000:8.1f} ms   {e['bytes'] / 1024:7.0f} KiB"
        )
    print(f"  rebuilding GET /: month-to-date report {f['monthly_report_s'] * 1000:.1f} ms,")
    print(
        f"    build_view {f['build_view_s'] * 1000:.1f} ms (report kept), render "
        f"{f['render_s'] * 1000:.1f} ms, {f['statements']} statements\n"
    )


def ratios(label: str, by_size: dict[int, dict[str, Any]]) -> None:
    """Each endpoint's median at the largest fleet against the smallest, and the goals."""
    small, large = min(by_size), max(by_size)
    print(f"{label}: {large} targets against {small}, medians of requests in a row")
    for path in ENDPOINTS:
        a = by_size[small]["endpoints"][path]["hot_median_s"]
        b = by_size[large]["endpoints"][path]["hot_median_s"]
        goal = "met" if b <= 0.100 and b <= 3 * a else "NOT met"
        print(
            f"  {path:<36} {a * 1000:7.1f} ms -> {b * 1000:7.1f} ms   {b / a:5.2f}x"
            f"   (goal: <= 100 ms and <= 3x: {goal})"
        )
    print()


def postgres_answers() -> bool:
    try:
        engine = sa.create_engine(
            "postgresql+psycopg://postgres@127.0.0.1:5432/postgres",
            connect_args={"connect_timeout": 2},
        )
        with engine.connect():
            pass
        engine.dispose()
        return True
    except sa.exc.OperationalError:
        return False


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawTextHelpFormatter
    )
    parser.add_argument("--targets", default="100,1000", help="fleet sizes, comma-separated")
    parser.add_argument("--requests", type=int, default=10)
    parser.add_argument("--minute-hours", type=int, default=24, help="minute rollups kept")
    parser.add_argument("--backends", default="sqlite,postgresql")
    parser.add_argument("--keep", action="store_true", help="keep the PostgreSQL database")
    args = parser.parse_args()
    backends = args.backends.split(",")
    sizes = sorted(int(n) for n in args.targets.split(","))
    print(f"commit {_commit()}, {datetime.now(UTC):%Y-%m-%d %H:%M} UTC", flush=True)
    with tempfile.TemporaryDirectory(prefix="slamon-bench-status-") as tmp:
        folder = Path(tmp)
        if "sqlite" in backends:
            found = {}
            for n in sizes:
                found[n] = run("SQLite", f"sqlite:///{folder / f'status-{n}.db'}", folder, n, args)
            ratios("SQLite", found)
        if "postgresql" in backends:
            if not postgres_answers():
                print("PostgreSQL does not answer on 127.0.0.1:5432: skipped")
                return
            from slamon_side import drop_postgres, fresh_postgres

            found = {}
            for n in sizes:
                try:
                    found[n] = run("PostgreSQL", fresh_postgres(PG_DATABASE), folder, n, args)
                finally:
                    if not args.keep:
                        drop_postgres(PG_DATABASE)
            ratios("PostgreSQL", found)


def _commit() -> str:
    import subprocess

    here = Path(__file__).resolve().parent
    done = subprocess.run(
        ["git", "rev-parse", "--short", "HEAD"], cwd=here, capture_output=True, text=True
    )
    return done.stdout.strip() or "unknown"


if __name__ == "__main__":
    main()
