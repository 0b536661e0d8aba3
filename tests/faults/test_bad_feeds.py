"""Feeds that hang, flood or answer HTML: one `slamon feeds poll` over all of them finishes in
bounded time and memory, records a clear error on each bad feed, and stores the good one."""

from __future__ import annotations

import json
import os
import subprocess
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest
from sqlalchemy import select

from monitor.db.engine import make_engine
from monitor.db.models import Feed, Incident, Provider
from monitor.errors import FeedUnavailable
from monitor.feeds.fetch import MAX_FEED_BYTES, fetch
from tests.faults.loopback import BlackHole, Streamer
from tests.faults.servers import write_config
from tests.support import FIXTURES, FeedServer, slamon_command

pytestmark = [pytest.mark.fault, pytest.mark.slow]

GOOD = FIXTURES / "feeds" / "statuspage" / "ai-status-cloudflare-summary-trimmed.json"
READ_TIMEOUT_S = 10.0  # workers.runtime.HTTP_TIMEOUT: what a hung feed costs at most
MIB = 1024 * 1024


@dataclass(frozen=True)
class Polled:
    returncode: int
    stdout: str
    stderr: str


@pytest.fixture
def hung() -> Iterator[BlackHole]:
    server = BlackHole()
    yield server
    server.close()


@pytest.fixture
def flood() -> Iterator[Streamer]:
    """Garbage without a Content-Length, far more than the limit if nobody stops reading."""
    server = Streamer(size=256 * MIB, chunk=os.urandom(64 * 1024))
    yield server
    server.close()


def poll_all(tmp_path: Path, database_url: str, *args: str) -> tuple[Polled, float, int]:
    """`slamon feeds poll --json` as a subprocess: what it printed, wall time, peak RSS (bytes)."""
    env = {
        **os.environ,
        "SLAMON_DATABASE_URL": database_url,
        "SLAMON_CONFIG": str(tmp_path / "slamon.yaml"),
        "SLAMON_STATE_DIR": str(tmp_path / "state"),
    }
    out, err = tmp_path / "poll.out", tmp_path / "poll.err"
    started = time.monotonic()
    with out.open("wb") as stdout, err.open("wb") as stderr:
        process = subprocess.Popen(
            [*slamon_command(), "feeds", "poll", "--json", *args],
            env=env,
            cwd=tmp_path,
            stdout=stdout,
            stderr=stderr,
        )
        _, status, usage = os.wait4(process.pid, 0)  # reaps it, with its own resource usage
    elapsed = time.monotonic() - started
    process.returncode = os.waitstatus_to_exitcode(status)
    polled = Polled(process.returncode, out.read_text(), err.read_text())
    return polled, elapsed, usage.ru_maxrss * 1024


def test_hung_flooding_and_html_feeds_fail_clearly_and_the_good_one_is_stored(
    tmp_path: Path,
    database_url: str,
    http_server: FeedServer,
    hung: BlackHole,
    flood: Streamer,
) -> None:
    http_server.routes["/good.json"] = (200, GOOD.read_bytes())
    http_server.routes["/html.json"] = (200, b"<!DOCTYPE html><html><body>Oops</body></html>")
    http_server.routes["/garbage.json"] = (200, os.urandom(10 * MIB))
    feeds = {
        "hung": f"{hung.url}/api/v2/incidents.json",
        "flood": f"{flood.url}/api/v2/incidents.json",
        "garbage": f"{http_server.url}/garbage.json",
        "html": f"{http_server.url}/html.json",
        "good": f"{http_server.url}/good.json",
    }
    write_config(
        tmp_path / "slamon.yaml",
        "",
        "".join(
            f"  - {{slug: {slug}, feeds: [{{kind: statuspage, url: '{url}'}}]}}\n"
            for slug, url in feeds.items()
        ),
    )
    baseline, _, baseline_rss = poll_all(tmp_path, database_url, "--provider", "good")
    assert baseline.returncode == 0, baseline.stderr
    result, elapsed, peak_rss = poll_all(tmp_path, database_url)

    assert result.returncode == 1, result.stderr  # some feeds failed
    assert "Traceback" not in result.stderr
    assert elapsed < READ_TIMEOUT_S + 15, elapsed
    lines = {json.loads(line)["provider"]: json.loads(line) for line in result.stdout.splitlines()}
    assert set(lines) == set(feeds)
    assert json.loads(baseline.stdout)["result"] == "stored"
    assert lines["good"]["result"] == "unchanged"  # the bad feeds did not get in its way
    assert "timed out" in lines["hung"]["error"]
    assert f"over the {MAX_FEED_BYTES}-byte limit" in lines["flood"]["error"]
    assert f"over the {MAX_FEED_BYTES}-byte limit" in lines["garbage"]["error"]
    assert "got HTML or XML where JSON was expected" in lines["html"]["error"]
    assert flood.sent < 2 * MAX_FEED_BYTES  # it stopped reading near the limit
    # what the bad feeds cost in memory: about one limit's worth of buffered body, never 256 MiB
    assert peak_rss - baseline_rss < 3 * MAX_FEED_BYTES, (baseline_rss, peak_rss)

    engine = make_engine(database_url)
    with engine.connect() as connection:
        health = {
            slug: (failures, error)
            for slug, failures, error in connection.execute(
                select(Provider.slug, Feed.consecutive_failures, Feed.last_error).join(Feed)
            )
        }
        stored = connection.scalars(
            select(Provider.slug).join(Incident, Incident.provider_id == Provider.id).distinct()
        ).all()
    engine.dispose()
    for slug in ("hung", "flood", "garbage", "html"):
        failures, error = health[slug]
        assert failures == 1
        assert error == lines[slug]["error"]
    assert health["good"] == (0, None)
    assert stored == ["good"]


def test_a_feed_that_drips_forever_is_cut_off_at_the_fetch_deadline() -> None:
    drip = Streamer(size=10 * MIB, chunk=b" ", pause_s=0.2)  # never idle long enough to time out
    try:
        started = time.monotonic()
        with (
            httpx.Client(timeout=httpx.Timeout(5.0)) as client,
            pytest.raises(FeedUnavailable) as e,
        ):
            fetch(client, drip.url, deadline_s=2.0)
        assert time.monotonic() - started < 5.0
        assert "2 s" in str(e.value)
    finally:
        drip.close()
