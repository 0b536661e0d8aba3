"""The shard runner: slots, the gate, and the one deadline over a shard, with a probe kind that
misbehaves (registered the way a new kind plugs in) beside real probes of a local server."""

from __future__ import annotations

import asyncio
import time
from datetime import timedelta

import pytest

from monitor.db.base import utcnow
from monitor.probes.kind import ProbeKind
from monitor.probes.kinds import KINDS
from monitor.probes.model import ProbeResult, ProbeTarget
from monitor.probes.runner import probe_client, probe_many
from monitor.probes.wire import ProbeClient
from tests.support import FeedServer


async def stuck(target: ProbeTarget, client: ProbeClient) -> ProbeResult:
    """A buggy kind that ignores its timeout."""
    await asyncio.sleep(3600)
    raise AssertionError("unreachable")


async def broken(target: ProbeTarget, client: ProbeClient) -> ProbeResult:
    raise KeyError("gpu")


@pytest.fixture
def kinds(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(KINDS, "stuck", ProbeKind("stuck", None, probe=stuck))
    monkeypatch.setitem(KINDS, "broken", ProbeKind("broken", None, probe=broken))


def target(i: int, kind: str, url: str | None = None, timeout: float = 0.3) -> ProbeTarget:
    return ProbeTarget(i, f"t{i}", kind, url, timeout_s=timeout)


@pytest.mark.usefixtures("kinds")
def test_a_probe_past_the_shard_deadline_is_a_timeout_and_the_rest_stand(
    server: FeedServer,
) -> None:
    targets = [
        target(1, "http", f"{server.url}/healthz"),
        target(2, "stuck"),
        target(3, "broken"),
        target(4, "http", f"{server.url}/healthz"),
    ]
    started = time.monotonic()
    results = asyncio.run(probe_many(targets, probe_client()))
    took = time.monotonic() - started
    assert [r.target_id for r in results] == [1, 2, 3, 4]
    assert [r.ok for r in results] == [True, False, False, True]
    assert results[1].error_kind == "timeout"
    assert results[1].error == "no answer within 0.3 s"
    assert results[2].error_kind == "internal"
    assert results[2].error == "KeyError: 'gpu'"
    assert took < 0.3 + 0.5 + 1.0  # its timeout, the slack, and room for a slow machine


@pytest.mark.usefixtures("kinds")
def test_the_deadline_counts_from_each_probes_slot() -> None:
    """A stuck probe due 0.5 s from now is stopped its timeout + slack after its slot, and its
    result is dated to the slot."""
    slot = utcnow() + timedelta(seconds=0.5)
    started = time.monotonic()
    [result] = asyncio.run(probe_many([target(9, "stuck")], probe_client(), start_at={9: slot}))
    assert time.monotonic() - started >= 0.5 + 0.3 + 0.5 - 0.05
    assert result.error_kind == "timeout"
    assert abs((result.at - slot).total_seconds()) < 0.05


@pytest.mark.parametrize(("concurrency", "turns"), [(2, 3), (6, 1)])
def test_the_gate_bounds_probes_in_flight(server: FeedServer, concurrency: int, turns: int) -> None:
    """A threaded server that answers in 0.3 s: six probes take three turns two at a time,
    one turn six at a time."""
    server.delays["/healthz"] = 0.3
    targets = [target(i, "http", f"{server.url}/healthz", timeout=2) for i in range(6)]
    started = time.monotonic()
    results = asyncio.run(probe_many(targets, probe_client(), concurrency=concurrency))
    took = time.monotonic() - started
    assert all(r.ok for r in results)
    assert turns * 0.3 - 0.05 <= took < turns * 0.3 + 0.25


# --- a vantage that cannot keep time judges nothing (issue 14: a cold, starved probe worker
# --- reported every target down) ------------------------------------------------------------


async def hog(target: ProbeTarget, client: ProbeClient) -> ProbeResult:
    """Holds the event loop, as a cold process importing or a starved CPU does."""
    time.sleep(1.5)
    return ProbeResult(target.id, target.name, utcnow(), True)


def test_a_probe_that_never_got_the_gate_is_unknown_not_a_timeout(
    server: FeedServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(KINDS, "stuck", ProbeKind("stuck", None, probe=stuck))
    targets = [target(1, "stuck"), target(2, "http", f"{server.url}/healthz")]
    stuck_result, healthy = asyncio.run(probe_many(targets, probe_client(), concurrency=1))
    assert (stuck_result.ok, stuck_result.error_kind) == (False, "timeout")
    # the healthy target queued behind the stuck probe until the deadline: nothing is known
    assert (healthy.ok, healthy.error_kind) == (None, "vantage")


def test_timeouts_that_fire_late_on_a_starved_loop_are_unknown(
    server: FeedServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(KINDS, "hog", ProbeKind("hog", None, probe=hog))
    monkeypatch.setitem(KINDS, "stuck", ProbeKind("stuck", None, probe=stuck))
    server.delays["/healthz"] = 0.5  # it answers, in 0.5 s: within a 1 s timeout
    targets = [
        target(1, "http", f"{server.url}/healthz", timeout=1.0),
        target(2, "stuck", timeout=1.0),
        target(3, "hog", timeout=1.0),
    ]
    slow_but_fine, stuck_result, hogger = asyncio.run(probe_many(targets, probe_client()))
    assert hogger.ok is True
    assert stuck_result.error_kind in ("vantage", "timeout")
    # the loop was held for 1.5 s while the answer waited: not a timeout of the target
    assert (slow_but_fine.ok, slow_but_fine.error_kind) in ((True, None), (None, "vantage"))


def test_a_silent_target_on_a_process_that_keeps_time_is_still_a_timeout(
    server: FeedServer,
) -> None:
    server.delays["/healthz"] = 2.0
    [result] = asyncio.run(
        probe_many([target(1, "http", f"{server.url}/healthz", timeout=0.5)], probe_client())
    )
    assert (result.ok, result.error_kind, result.error) == (
        False,
        "timeout",
        "no answer within 0.5 s",
    )
