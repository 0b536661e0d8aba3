"""Recording a probe round in process: ``record.record_round`` over shards of 250 successful
results for N targets, with and without the process's ``StateMemory``, alternating, on SQLite
(a file) or PostgreSQL. Prints CPU per result for each run and the ratio of the means.

    .venv/bin/python bench/record_round.py --targets 3000 --passes 10 --runs 3
    .venv/bin/python bench/record_round.py \\
        --database-url postgresql+psycopg://postgres@127.0.0.1/slamon_bench_record

A PostgreSQL database is emptied (its schema dropped) before each run. Not run by CI.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from sqlalchemy import select, text

from monitor.config.models import TargetConfig
from monitor.db.base import utcnow
from monitor.db.engine import make_engine, make_sessionmaker
from monitor.db.migrate import upgrade
from monitor.db.models import Target
from monitor.probes.model import ProbeResult
from monitor.probes.record import StateMemory, record_round
from monitor.targets import upsert_target

SHARD = 250  # probes.shard_size's default


def one_run(url: str | None, targets: int, passes: int, remember: bool) -> float:
    """CPU ms per recorded result over ``passes`` rounds of every shard (after one to warm)."""
    url = url or f"sqlite:///{tempfile.mkdtemp()}/record.db"
    engine = make_engine(url)
    if engine.dialect.name == "postgresql":
        with engine.begin() as connection:
            connection.execute(text("DROP SCHEMA public CASCADE; CREATE SCHEMA public"))
    upgrade(engine)
    sessions = make_sessionmaker(engine)
    with sessions() as session, session.begin():
        for i in range(targets):
            cfg = {"name": f"t{i}", "kind": "http", "url": f"http://127.0.0.1:{10000 + i}/"}
            upsert_target(session, TargetConfig.model_validate({**cfg, "interval": 1}), "bench")
    with sessions() as session:
        ids = list(session.scalars(select(Target.id).order_by(Target.id)))
    memory = StateMemory() if remember else None

    def every_shard() -> None:
        for start in range(0, len(ids), SHARD):
            now = utcnow()
            shard = ids[start : start + SHARD]
            results = [ProbeResult(t, f"t{t}", now, True, 1.0, 200) for t in shard]
            with sessions() as session, session.begin():
                record_round(session, "bench", results, now=now, memory=memory)

    every_shard()  # the first round creates the rows
    began = time.process_time()
    for _ in range(passes):
        every_shard()
    spent = time.process_time() - began
    engine.dispose()
    return spent / (passes * len(ids)) * 1000


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--targets", type=int, default=3000)
    parser.add_argument("--passes", type=int, default=10)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--database-url", default=None)
    args = parser.parse_args()
    found: dict[bool, list[float]] = {False: [], True: []}
    for n in range(args.runs):
        for remember in (False, True):
            ms = one_run(args.database_url, args.targets, args.passes, remember)
            found[remember].append(ms)
            label = "with memory" if remember else "without"
            print(f"run {n + 1} {label:>11}: {ms:.3f} ms CPU per result", flush=True)
    without, with_memory = (statistics.mean(found[k]) for k in (False, True))
    print(
        f"mean without {without:.3f} ms, with memory {with_memory:.3f} ms: "
        f"{with_memory / without:.2f}x"
    )


if __name__ == "__main__":
    main()
