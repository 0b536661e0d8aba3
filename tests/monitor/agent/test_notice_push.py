"""`slamon agent --metadata` pushes each interruption notice at once: the real agent code against
a local metadata service (IMDSv2's token handshake, Azure's Scheduled Events) and a local slamon
(the real API under uvicorn on loopback, a migrated SQLite file), and the notice read back
stored through GET /api/v1/events. While slamon is unreachable the notices wait and go when it
answers; a refused notice is dropped and said, a refused agent keeps them (respx at the HTTP
layer for those answers)."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import threading
import time
from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import httpx
import pytest
import respx
import uvicorn
from click.testing import CliRunner
from sqlalchemy.orm import Session

from monitor import tokens
from monitor.account.notices import notice_event
from monitor.agent.notice_push import MAX_DETAIL, NoticePusher, notice_body
from monitor.agent.notices import open_source, watch
from monitor.agent.push import Backoff
from monitor.api import account_events
from monitor.api.app import create_app
from monitor.cli import cli
from monitor.db.engine import make_engine
from monitor.db.migrate import upgrade
from monitor.db.models import Target
from monitor.interruptions import Notice
from monitor.interruptions.aws import INSTANCE_ACTION, REBALANCE
from monitor.settings import Settings
from tests.monitor.agent.test_notices import fake_nvidia_smi
from tests.monitor.interruptions.fake_metadata import MetadataServer
from tests.support import slamon_command

AZURE_EVENT = "C7061BAC-AFDC-4513-B24B-AA5F13A16123"


def eventually(check: Callable[[], Any], what: str, timeout_s: float = 10.0) -> Any:
    until = time.monotonic() + timeout_s
    while time.monotonic() < until:
        if found := check():
            return found
        time.sleep(0.05)
    raise AssertionError(f"not within {timeout_s:g} s: {what}")


def instance_action(deadline: datetime) -> bytes:
    return json.dumps({"action": "terminate", "time": f"{deadline:%Y-%m-%dT%H:%M:%SZ}"}).encode()


class LocalSlamon:
    """slamon's real API on a loopback port that is taken at once but answers only once
    :meth:`start` is called (before: connections refused), on a migrated SQLite file with a
    target ``box`` (instance ``i-0abc``), its heartbeat token and a read token."""

    def __init__(self, folder: Path) -> None:
        url = f"sqlite:///{folder / 'slamon.db'}"
        engine = make_engine(url)
        upgrade(engine)
        with Session(engine) as session:
            box = Target(name="box", kind="heartbeat", provider="aws", external_id="i-0abc")
            session.add(box)
            session.flush()
            self.box_token = tokens.create_heartbeat_token(session, box)
            self.read_token = tokens.create(session, "read", "read")
            session.commit()
        engine.dispose()
        settings = Settings(  # type: ignore[call-arg]
            database_url=url, config=folder / "none.yaml", state_dir=folder / "state"
        )
        self.socket = socket.socket()
        self.socket.bind(("127.0.0.1", 0))  # bound, not listening: refused until started
        self.url = f"http://127.0.0.1:{self.socket.getsockname()[1]}"
        config = uvicorn.Config(create_app(settings), log_level="warning")
        self.server = uvicorn.Server(config)
        self.thread: threading.Thread | None = None

    def start(self) -> LocalSlamon:
        self.thread = threading.Thread(
            target=self.server.run, kwargs={"sockets": [self.socket]}, daemon=True
        )
        self.thread.start()
        eventually(lambda: self.server.started, "slamon's API started")
        return self

    def close(self) -> None:
        self.server.should_exit = True
        if self.thread is not None:
            self.thread.join(timeout=10)
        self.socket.close()

    def events(self, **query: str) -> list[dict[str, Any]]:
        headers = {"Authorization": f"Bearer {self.read_token}"}
        answer = httpx.get(f"{self.url}/api/v1/events", headers=headers, params=query)
        assert answer.status_code == 200, answer.text
        items: list[dict[str, Any]] = answer.json()["items"]
        return items


@pytest.fixture
def slamon(tmp_path: Path) -> Iterator[LocalSlamon]:
    local = LocalSlamon(tmp_path)
    yield local
    local.close()


@pytest.fixture
def aws_metadata() -> Iterator[MetadataServer]:
    server = MetadataServer("aws")
    yield server
    server.close()


def test_a_notice_heard_is_pushed_at_once_and_stored_for_the_target(
    slamon: LocalSlamon, aws_metadata: MetadataServer
) -> None:
    slamon.start()
    deadline = datetime.now(UTC).replace(microsecond=0) + timedelta(minutes=2)
    lines: list[str] = []
    with httpx.Client(timeout=2) as metadata, httpx.Client() as client:
        pusher = NoticePusher(slamon.url, "box", slamon.box_token, client).start()
        watching = watch(open_source("aws", metadata, aws_metadata.url), lines.append,
                         push=pusher.push)  # fmt: skip
        try:
            aws_metadata.documents[INSTANCE_ACTION] = (200, instance_action(deadline))
            heard = time.monotonic()
            (event,) = eventually(slamon.events, "the notice stored")
            took = time.monotonic() - heard
        finally:
            watching.close()
            pusher.close()
    assert took < 5  # one metadata poll (1 s) and one push, not a reading's interval
    assert len(lines) == 1
    assert "interrupt notice  aws preemption" in lines[0]
    assert event["key"] == f"aws:box:{deadline:%Y-%m-%dT%H:%M:%SZ} terminate"
    assert (event["provider"], event["source"], event["via"]) == ("aws", "agent", "agent")
    assert (event["kind"], event["status"]) == ("preemption", "upcoming")
    assert event["starts_at"] == f"{deadline:%Y-%m-%dT%H:%M:%SZ}"
    assert (event["targets"], event["entities"]) == (["box"], ["i-0abc"])
    assert (event["raw_type"], event["title"]) == ("metadata:preemption", "AWS preemption notice")
    assert event["detail"] == "spot instance-action terminate"


def test_notices_wait_out_an_unreachable_slamon_in_order_and_none_is_lost(
    slamon: LocalSlamon, aws_metadata: MetadataServer
) -> None:
    said: list[str] = []
    deadline = datetime.now(UTC).replace(microsecond=0) + timedelta(minutes=2)
    with httpx.Client(timeout=2) as metadata, httpx.Client() as client:
        pusher = NoticePusher(slamon.url, "box", slamon.box_token, client, report=said.append,
                              backoff=Backoff(0.1, max_s=0.4)).start()  # fmt: skip
        watching = watch(open_source("aws", metadata, aws_metadata.url), lambda _: None,
                         push=pusher.push)  # fmt: skip
        try:
            aws_metadata.documents[REBALANCE] = (200, b'{"noticeTime": "2026-12-04T21:55:00Z"}')
            aws_metadata.documents[INSTANCE_ACTION] = (200, instance_action(deadline))
            eventually(lambda: len(pusher.pending) == 2, "both notices waiting")
            eventually(lambda: any("not pushed" in line for line in said), "the outage said")
            time.sleep(1.0)  # several tries refused
            assert len(pusher.pending) == 2
            slamon.start()
            stored = eventually(lambda: len(slamon.events()) == 2 and slamon.events(), "stored")
        finally:
            watching.close()
            pusher.close()
    assert sorted(e["raw_type"] for e in stored) == ["metadata:preemption", "metadata:rebalance"]
    assert {e["readings"] for e in stored} == {1}
    assert sum("not pushed (" in line for line in said) == 1  # said once for the outage
    assert "ConnectError" in said[0]
    assert said[-1] == "interruption notices pushed again (2 sent)"


def test_an_acknowledged_azure_event_is_stored_as_accepted_maintenance(
    slamon: LocalSlamon,
) -> None:
    slamon.start()
    azure = MetadataServer("azure")
    with httpx.Client(timeout=2) as metadata, httpx.Client() as client:
        pusher = NoticePusher(slamon.url, "box", slamon.box_token, client).start()
        watching = watch(open_source("azure", metadata, azure.url), lambda _: None,
                         acknowledge=True, push=pusher.push)  # fmt: skip
        try:
            azure.document = json.dumps({"DocumentIncarnation": 1, "Events": [
                {"EventId": AZURE_EVENT, "EventStatus": "Scheduled", "EventType": "Redeploy",
                 "ResourceType": "VirtualMachine", "Resources": ["box"],
                 "NotBefore": "Mon, 19 Sep 2016 18:29:47 GMT", "Description": "Host failing",
                 "EventSource": "Platform", "DurationInSeconds": -1}]}).encode()  # fmt: skip
            (event,) = eventually(slamon.events, "the notice stored")
        finally:
            watching.close()
            pusher.close()
            azure.close()
    assert azure.acknowledged == [{"StartRequests": [{"EventId": AZURE_EVENT}]}]
    assert (event["kind"], event["status"], event["accepted"]) == (
        "scheduled_maintenance", "open", True  # its NotBefore long passed
    )  # fmt: skip
    assert event["key"] == f"azure:box:{AZURE_EVENT}"


def test_once_pushes_what_the_metadata_service_says_now(
    slamon: LocalSlamon, aws_metadata: MetadataServer, tmp_path: Path
) -> None:
    slamon.start()
    deadline = datetime.now(UTC) + timedelta(minutes=2)
    aws_metadata.documents[INSTANCE_ACTION] = (200, instance_action(deadline))
    argv = ["agent", "--url", slamon.url, "--target", "box", "--token", slamon.box_token,
            "--source", "nvidia-smi", "--nvidia-smi", fake_nvidia_smi(tmp_path), "--once",
            "--metadata", "aws", "--metadata-url", aws_metadata.url]  # fmt: skip
    result = CliRunner().invoke(cli, argv)
    assert result.exit_code == 0, result.output
    assert "interrupt notice  aws preemption" in result.output
    assert f"pushed 1 interruption notice(s) to {slamon.url}/api/v1/events/notices/box" in (
        result.output
    )
    (event,) = slamon.events(target="box")
    assert (event["kind"], event["via"]) == ("preemption", "agent")


def test_once_fails_in_one_line_when_the_notice_is_not_pushed(
    aws_metadata: MetadataServer, slamon: LocalSlamon, tmp_path: Path
) -> None:
    deadline = datetime.now(UTC) + timedelta(minutes=2)
    aws_metadata.documents[INSTANCE_ACTION] = (200, instance_action(deadline))
    argv = ["agent", "--url", slamon.url, "--target", "box", "--token", slamon.box_token,
            "--source", "nvidia-smi", "--nvidia-smi", fake_nvidia_smi(tmp_path), "--once",
            "--metadata", "aws", "--metadata-url", aws_metadata.url]  # fmt: skip
    result = CliRunner().invoke(cli, argv)  # slamon not started: refused
    assert result.exit_code == 1
    assert "interruption notice not pushed: " in result.output
    assert "ConnectError" in result.output
    assert "Traceback" not in result.output


def test_the_running_agent_pushes_a_notice_without_waiting_for_its_interval(
    slamon: LocalSlamon, aws_metadata: MetadataServer, tmp_path: Path
) -> None:
    """The real `slamon agent` process, reading every hour: the notice is stored in seconds."""
    slamon.start()
    env = {**os.environ, "SLAMON_AGENT_TOKEN": slamon.box_token}
    argv = [*slamon_command(), "agent", "--url", slamon.url, "--target", "box",
            "--interval", "1h", "--source", "nvidia-smi",
            "--nvidia-smi", fake_nvidia_smi(tmp_path),
            "--metadata", "aws", "--metadata-url", aws_metadata.url]  # fmt: skip
    agent = subprocess.Popen(argv, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                             text=True)  # fmt: skip
    try:
        eventually(lambda: aws_metadata.handed_out > 0, "the agent watching", timeout_s=30)
        deadline = datetime.now(UTC) + timedelta(minutes=2)
        aws_metadata.documents[INSTANCE_ACTION] = (200, instance_action(deadline))
        (event,) = eventually(slamon.events, "the notice stored")
    finally:
        agent.send_signal(signal.SIGTERM)
        out, err = agent.communicate(timeout=30)
    assert agent.returncode == 0, err
    assert (event["kind"], event["targets"]) == ("preemption", ["box"])
    assert "interrupt notice  aws preemption" in out
    assert f"watching aws interruption notices -> {slamon.url}/api/v1/events/notices/box" in err


# --------------------------------------------------------------------------- the answers


URL = "http://slamon.test:8080"
ENDPOINT = f"{URL}/api/v1/events/notices/box%2F1"
NOTICE = Notice("aws", "preemption", datetime(2026, 12, 4, 22, 2, tzinfo=UTC),
                "2026-12-04T22:02:00Z terminate", "spot instance-action terminate")  # fmt: skip


def pusher(client: httpx.Client, said: list[str]) -> NoticePusher:
    return NoticePusher(URL, "box/1", "slmhb_x", client, report=said.append)


@respx.mock
def test_a_refused_notice_is_dropped_and_said_and_the_next_goes() -> None:
    refusal = {"error": {"code": "validation_error", "message": "kind: not one", "details": []}}
    answers = iter([httpx.Response(422, json=refusal), httpx.Response(201, json={})])
    route = respx.post(ENDPOINT).mock(side_effect=lambda request: next(answers))
    said: list[str] = []
    with httpx.Client() as client:
        p = pusher(client, said)
        p.push(NOTICE)
        p.push(NOTICE, acknowledged=True)
        flushed = p.flush()
    assert (flushed.sent, flushed.problem, p.dropped, len(p.pending)) == (1, None, 1, 0)
    assert said == [
        "interruption notice preemption 2026-12-04T22:02:00Z terminate refused: "
        f"{ENDPOINT}: HTTP 422: kind: not one"
    ]
    sent = [json.loads(call.request.content) for call in route.calls]
    assert sent[1] == notice_body(NOTICE, acknowledged=True)
    assert {call.request.headers["Authorization"] for call in route.calls} == {"Bearer slmhb_x"}


@pytest.mark.parametrize(("status", "retry"), [(401, False), (404, False), (503, True)])
@respx.mock
def test_a_refused_agent_or_a_failing_server_keeps_the_notice(status: int, retry: bool) -> None:
    respx.post(ENDPOINT).mock(return_value=httpx.Response(status))
    with httpx.Client() as client:
        p = pusher(client, [])
        p.push(NOTICE)
        flushed = p.flush()
    assert (flushed.sent, flushed.retry, len(p.pending), p.dropped) == (0, retry, 1, 0)
    assert f"HTTP {status}" in (flushed.problem or "")


def test_the_body_is_what_the_endpoint_takes_and_maps() -> None:
    long = Notice("azure", "reboot", None, "E-1", "x" * (MAX_DETAIL + 10))
    body = notice_body(long)
    assert len(body["detail"]) == MAX_DETAIL == account_events.MAX_DETAIL
    parsed = account_events.NoticeIn.model_validate(notice_body(NOTICE, acknowledged=True))
    back = Notice(parsed.cloud, parsed.kind, parsed.deadline, parsed.key, parsed.detail)
    assert back == NOTICE
    assert parsed.acknowledged is True
    now = datetime(2026, 12, 4, 22, 0, tzinfo=UTC)
    assert notice_event(back, "box/1", now) == notice_event(NOTICE, "box/1", now)
