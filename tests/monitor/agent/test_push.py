"""Pushing readings: nothing lost for a short outage, the oldest dropped and counted for a long
one, a refused reading dropped, a refused agent kept waiting. The server is faked at the HTTP
layer with respx."""

from __future__ import annotations

import json
from datetime import UTC, datetime

import httpx
import pytest
import respx

from monitor.agent.push import MAX_BACKOFF_S, Backoff, Outbox, Pusher, stamped

URL = "http://slamon.test:8080"
ENDPOINT = f"{URL}/api/v1/heartbeats/box%2F1"


def reading(n: int) -> dict[str, object]:
    return stamped(
        {"source": "nvml", "gpus": [{"key": f"GPU-{n}"}]}, datetime(2026, 12, 3, 7, n, tzinfo=UTC)
    )


def pusher(client: httpx.Client, capacity: int = 10) -> Pusher:
    return Pusher(URL, "box/1", "hb-token", client, Outbox(capacity))


@respx.mock
def test_readings_wait_out_an_outage_and_go_oldest_first_with_their_times() -> None:
    route = respx.post(ENDPOINT).mock(side_effect=httpx.ConnectError("refused"))
    with httpx.Client() as client:
        p = pusher(client)
        for n in range(3):
            p.outbox.add(reading(n))
            flushed = p.flush()
            assert flushed.sent == 0
            assert "ConnectError" in (flushed.problem or "")
        route.mock(return_value=httpx.Response(202, json={"target": "box/1"}))
        flushed = p.flush()
    assert (flushed.sent, flushed.problem, len(p.outbox.items)) == (3, None, 0)
    sent = [json.loads(call.request.content) for call in route.calls if call.optional_response]
    assert [b["at"] for b in sent[-3:]] == [r["at"] for r in map(reading, range(3))]
    assert {call.request.headers["Authorization"] for call in route.calls} == {"Bearer hb-token"}
    assert sent[-1]["agent"] == {"dropped": 0}


@respx.mock
def test_a_long_outage_drops_the_oldest_and_the_count_rides_along() -> None:
    route = respx.post(ENDPOINT).mock(return_value=httpx.Response(503))
    with httpx.Client() as client:
        p = pusher(client, capacity=3)
        for n in range(5):
            p.outbox.add(reading(n))
        assert "HTTP 503" in (p.flush().problem or "")
        route.mock(return_value=httpx.Response(202))
        assert p.flush().sent == 3
    bodies = [json.loads(call.request.content) for call in route.calls[-3:]]
    assert [b["gpus"][0]["key"] for b in bodies] == ["GPU-2", "GPU-3", "GPU-4"]
    assert {b["agent"]["dropped"] for b in bodies} == {2}


@respx.mock
def test_a_refused_reading_is_dropped_and_the_rest_go() -> None:
    answers = iter([httpx.Response(422, json={"detail": "gpus: a number"}), httpx.Response(202)])
    respx.post(ENDPOINT).mock(side_effect=lambda request: next(answers))
    with httpx.Client() as client:
        p = pusher(client)
        p.outbox.add(reading(0))
        p.outbox.add(reading(1))
        flushed = p.flush()
    assert (flushed.sent, p.outbox.dropped, len(p.outbox.items)) == (1, 1, 0)
    assert flushed.refused is not None
    assert "HTTP 422: gpus: a number" in flushed.refused


@pytest.mark.parametrize("status", [401, 403, 404])
@respx.mock
def test_a_refused_agent_keeps_its_readings_and_says_why(status: int) -> None:
    respx.post(ENDPOINT).mock(return_value=httpx.Response(status, json={"detail": "no"}))
    with httpx.Client() as client:
        p = pusher(client)
        p.outbox.add(reading(0))
        flushed = p.flush()
    assert (flushed.sent, flushed.retry, len(p.outbox.items)) == (0, False, 1)
    assert f"HTTP {status}: no" in (flushed.problem or "")


def test_backoff_doubles_to_its_ceiling_and_resets() -> None:
    backoff = Backoff(15.0, jitter=lambda: 0.5)
    waits = [backoff.failed() for _ in range(7)]
    assert waits == [15.0, 30.0, 60.0, 120.0, 240.0, MAX_BACKOFF_S, MAX_BACKOFF_S]
    backoff.succeeded()
    assert backoff.failed() == 15.0
