"""The watch: once per notice, as soon as it appears, from daemon threads; a failing source told
once per episode; a notice that goes away and comes back heard again; Azure acknowledged only
when asked."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator

import pytest

from monitor.interruptions import Notice, Watch
from monitor.interruptions.aws import INSTANCE_ACTION
from tests.monitor.interruptions.fake_metadata import MetadataServer, closed_port

ACTION = b'{"action": "terminate", "time": "2026-12-04T22:02:00Z"}'
REBOOT = (
    b'{"DocumentIncarnation": 2, "Events": [{"EventId": "E1", "EventType": "Reboot",'
    b' "EventStatus": "Scheduled", "NotBefore": "Thu, 22 Jul 2021 04:50:17 GMT",'
    b' "EventSource": "User", "Resources": ["vm1"], "Description": ""}]}'
)


def until(condition: Callable[[], object], within_s: float = 5.0) -> bool:
    deadline = time.monotonic() + within_s
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.02)
    return False


@pytest.fixture
def server(request: pytest.FixtureRequest) -> Iterator[MetadataServer]:
    s = MetadataServer(request.param)
    yield s
    s.close()


@pytest.mark.parametrize("server", ["aws"], indirect=True)
def test_a_notice_is_heard_once_however_many_polls_see_it(server: MetadataServer) -> None:
    heard: list[Notice] = []
    watch = Watch(heard.append, "aws", server.url).start()
    try:
        assert until(lambda: server.handed_out)  # watching: the token is fetched
        server.documents[INSTANCE_ACTION] = (200, ACTION)
        assert until(lambda: heard, 4)
        polls = len(server.requests)
        assert until(lambda: len(server.requests) >= polls + 6, 5)  # two more polls
        assert [n.kind for n in heard] == ["preemption"]
        del server.documents[INSTANCE_ACTION]  # gone, then back: a new notice
        time.sleep(1.5)
        server.documents[INSTANCE_ACTION] = (200, ACTION)
        assert until(lambda: len(heard) == 2, 4)
    finally:
        watch.close()


@pytest.mark.parametrize("server", ["gcp"], indirect=True)
def test_gce_is_heard_the_moment_its_value_changes(server: MetadataServer) -> None:
    heard: list[tuple[float, Notice]] = []
    watch = Watch(lambda n: heard.append((time.monotonic(), n)), "gcp", server.url).start()
    try:
        assert until(lambda: any("last_etag" in r[2] for r in server.requests))  # held now
        changed = time.monotonic()
        server.set_value("preempted", "TRUE")
        assert until(lambda: heard, 3)
        assert heard[0][0] - changed < 1.0  # no poll interval: the held request answered
        server.set_value("maintenance-event", "TERMINATE_ON_HOST_MAINTENANCE")
        assert until(lambda: len(heard) == 2, 3)
        assert [n.kind for _, n in heard] == ["preemption", "scheduled_maintenance"]
        assert {r[2].get("timeout_sec") for r in server.requests if r[2]} == {"60"}
    finally:
        watch.close()


@pytest.mark.parametrize("server", ["azure"], indirect=True)
@pytest.mark.parametrize("acknowledge", [False, True])
def test_azure_is_acknowledged_only_when_asked(server: MetadataServer, acknowledge: bool) -> None:
    server.document = REBOOT
    heard: list[Notice] = []
    watch = Watch(heard.append, "azure", server.url, acknowledge=acknowledge).start()
    try:
        assert until(lambda: heard)
        time.sleep(1.2)  # another poll: still one notice, still at most one acknowledgement
        expected = [{"StartRequests": [{"EventId": "E1"}]}] if acknowledge else []
        assert server.acknowledged == expected
        assert len(heard) == 1
    finally:
        watch.close()


def test_off_a_cloud_the_watch_says_so_in_one_line_and_stops() -> None:
    problems: list[str] = []
    watch = Watch(lambda n: None, "auto", closed_port(), on_problem=problems.append).start()
    assert until(lambda: watch.problem)
    watch.close()
    assert len(problems) == 1
    assert problems[0].startswith("not watched: not on AWS, GCE or Azure")
    assert "\n" not in problems[0]


@pytest.mark.parametrize("server", ["aws"], indirect=True)
def test_a_failing_source_is_told_once_and_its_return_once(server: MetadataServer) -> None:
    problems: list[str] = []
    heard: list[Notice] = []
    watch = Watch(heard.append, "aws", server.url, on_problem=problems.append, retry_s=0.1)
    watch.start()
    try:
        assert until(lambda: server.handed_out)
        server.documents[INSTANCE_ACTION] = (200, b"<html>")
        assert until(lambda: len(server.requests) > 8)
        server.documents[INSTANCE_ACTION] = (200, ACTION)
        assert until(lambda: heard)
        assert problems == [
            "spot/instance-action: not JSON: b'<html>'",
            "aws metadata answers again",
        ]
    finally:
        watch.close()


@pytest.mark.parametrize("server", ["aws"], indirect=True)
def test_a_callback_that_raises_does_not_end_the_watch(server: MetadataServer) -> None:
    calls: list[Notice] = []

    def broken(notice: Notice) -> None:
        calls.append(notice)
        raise RuntimeError("the user's bug")

    server.documents[INSTANCE_ACTION] = (200, ACTION)
    watch = Watch(broken, "aws", server.url).start()
    try:
        assert until(lambda: calls)
        server.documents[INSTANCE_ACTION] = (200, ACTION.replace(b"terminate", b"stop"))
        assert until(lambda: len(calls) == 2, 4)
    finally:
        watch.close()
