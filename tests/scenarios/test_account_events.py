"""The provider's own word, end to end, on both deployments: what a provider tells the account
reaches every surface once, and explains what happened.

- An ``ec2`` discovery source (moto) registers the account's GPU instances; an ``aws_health``
  source polls a local server of the Health API's JSON protocol (moto has none), which
  schedules the retirement of one discovered instance: ``scheduled_maintenance`` fires ahead,
  reminds once before the work starts, and resolves when AWS closes the event; the outage the
  retirement caused pages (the instance still runs) and the monthly report shows AWS' event as
  its evidence.
- A spot instance runs the real ``slamon agent --metadata aws`` against a local IMDSv2 server
  and a training loop on the hooks: AWS' two-minute notice (here, twenty seconds) reaches the
  agent, fires ``interruption_notice`` within one agent poll with its deadline, the loop saves
  its checkpoint before the deadline, and the reclaim that follows ends the instance's life as a
  preemption: no ``target_down``, no outage, no credit.
- AWS Health's EventBridge delivery (the published sample) and an Azure action group's Service
  Health alert (Azure's published test action, its stage edited to Active for the first
  deliveries) are each pushed three times: one event each on the API, one ``provider_event``
  firing and one resolved webhook, the event on the target's page and in /metrics.
"""

from __future__ import annotations

import copy
import json
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import httpx
import pytest

from monitor import training
from monitor.interruptions import Notice
from monitor.interruptions.aws import INSTANCE_ACTION
from tests.monitor.account.fake_aws import AwsServer, json_error
from tests.monitor.interruptions.fake_metadata import MetadataServer
from tests.scenarios import surfaces
from tests.scenarios.checks import (
    ALERT_S,
    Expect,
    Live,
    World,
    alerting_config,
    await_webhook,
    eventually,
    month_of,
    no_second_messages,
    once_each,
    quiet_period,
    surfaces_agree,
)
from tests.scenarios.clouds import AWS_ENVIRONMENT, CREDIT_POLICY, REGION, TYPES, Cloud, ec2_source
from tests.scenarios.deployments import Deployment
from tests.support import FIXTURES

pytestmark = pytest.mark.slow

RETIRING, SPOT = "acct-retire", "acct-spot"
TYPES.update({RETIRING: "p5.48xlarge", SPOT: "g5.xlarge"})
STORE_BOX = "acct-store"  # configured with the instance id the EventBridge sample names
AZURE_VM = "acct-azure"  # configured in East US, where the edited Service Health alert is
REMINDER_S = 8  # scheduled_maintenance reminds this long before the work starts
AHEAD_S = 20  # the retirement is scheduled this far ahead of its announcement
NOTICE_S = 20  # the spot notice's deadline, from when IMDS starts serving it
AGENT_POLL_S = 1.0  # the agent's IMDS poll (monitor/interruptions/aws.py pause_s)
ACCOUNT = FIXTURES / "account"


def iso(moment: datetime) -> str:
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


class HealthApi:
    """The account's AWS Health API (the JSON protocol boto3 speaks): the events it holds now,
    each with its description and affected entities, as DescribeEvents,
    DescribeEventDetails and DescribeAffectedEntities answer them."""

    def __init__(self) -> None:
        self.events: dict[str, dict[str, Any]] = {}
        self.descriptions: dict[str, str] = {}
        self.entities: dict[str, list[str]] = {}
        self.lock = threading.Lock()
        self.server = AwsServer(self.answer)

    @property
    def url(self) -> str:
        return self.server.url

    def schedule_retirement(self, instance_id: str, start: datetime) -> str:
        arn = (
            f"arn:aws:health:{REGION}::event/EC2/AWS_EC2_INSTANCE_RETIREMENT_SCHEDULED/"
            f"AWS_EC2_INSTANCE_RETIREMENT_SCHEDULED_{instance_id}"
        )
        with self.lock:
            self.events[arn] = {
                "arn": arn,
                "service": "EC2",
                "eventTypeCode": "AWS_EC2_INSTANCE_RETIREMENT_SCHEDULED",
                "eventTypeCategory": "scheduledChange",
                "region": REGION,
                "startTime": start.timestamp(),
                "lastUpdatedTime": time.time(),
                "statusCode": "upcoming",
            }
            self.descriptions[arn] = (
                "EC2 has detected degradation of the underlying hardware hosting your instance "
                f"{instance_id}; it will be retired."
            )
            self.entities[arn] = [instance_id]
        return arn

    def update(self, arn: str, **fields: Any) -> None:
        with self.lock:
            self.events[arn].update(fields, lastUpdatedTime=time.time())

    def answer(self, operation: str, params: dict[str, Any]) -> tuple[int, object]:
        with self.lock:
            if operation == "DescribeEvents":
                since = (params.get("filter") or {}).get("lastUpdatedTimes") or [{}]
                after = since[0].get("from", 0)
                listed = [e for e in self.events.values() if e["lastUpdatedTime"] >= after]
                return 200, {"events": copy.deepcopy(listed)}
            if operation == "DescribeEventDetails":
                return 200, {
                    "successfulSet": [
                        {
                            "event": {"arn": arn},
                            "eventDescription": {"latestDescription": self.descriptions[arn]},
                        }
                        for arn in params["eventArns"]
                    ],
                    "failedSet": [],
                }
            if operation == "DescribeAffectedEntities":
                arns = params["filter"]["eventArns"]
                return 200, {
                    "entities": [
                        {"eventArn": arn, "entityValue": entity}
                        for arn in arns
                        for entity in self.entities[arn]
                    ]
                }
        return 400, json_error("UnknownOperationException", operation)

    def clear(self) -> None:
        with self.lock:
            self.events.clear()

    def close(self) -> None:
        self.server.close()


class Account:
    """The module's local clouds: EC2 (moto), the Health API, the spot box's IMDSv2."""

    def __init__(self) -> None:
        self.cloud = Cloud()
        self.health = HealthApi()
        self.imds = MetadataServer("aws")

    def close(self) -> None:
        self.cloud.close()
        self.health.close()
        self.imds.close()


ACCOUNT_SERVERS: Account | None = None


@pytest.fixture(scope="module", autouse=True)
def account() -> Iterator[Account]:
    global ACCOUNT_SERVERS
    ACCOUNT_SERVERS = Account()
    try:
        yield ACCOUNT_SERVERS
    finally:
        ACCOUNT_SERVERS.close()
        ACCOUNT_SERVERS = None


def _account() -> Account:
    assert ACCOUNT_SERVERS is not None, "the local clouds start before the deployment"
    return ACCOUNT_SERVERS


def prepare_world(world: World) -> None:
    """A fresh account: two team instances (one spot) up, the configured boxes up, no Health
    event, no notice."""
    servers = _account()
    servers.cloud.reset()
    servers.health.clear()
    servers.imds.documents.clear()
    for name in (RETIRING, SPOT, STORE_BOX, AZURE_VM):
        world.http.up(name)
    for name in (RETIRING, SPOT):
        servers.cloud.launch(name, spot=name == SPOT, team="ml", health=world.http.url(name))


def scenario_config(world: World) -> tuple[str, str]:
    servers = _account()
    body = (
        alerting_config(world.receiver.url, f"maintenance_reminder: {REMINDER_S}s")
        + CREDIT_POLICY
        + "targets:\n"
        + f"  - {{name: {STORE_BOX}, kind: http, url: '{world.http.url(STORE_BOX)}',"
        + " provider: aws, region: us-west-2, instance_id: i-abcd1111, interval: 1s}\n"
        + f"  - {{name: {AZURE_VM}, kind: http, url: '{world.http.url(AZURE_VM)}',"
        + " provider: azure, region: eastus, interval: 1s}\n"
        + ec2_source(servers.cloud.url)
        + "account_events:\n"
        + f"  - {{name: health, kind: aws_health, endpoint_url: '{servers.health.url}',"
        + " every: 1s, timeout: 5s}\n"
    )
    return "", body


def scenario_environment(deployment: Deployment) -> dict[str, str]:
    return dict(AWS_ENVIRONMENT)


# --------------------------------------------------------------------------- reading surfaces


def _get(live: Live, path: str, **params: Any) -> Any:
    reply = httpx.get(
        f"{live.base}{path}",
        params=params,
        headers={"Authorization": f"Bearer {live.deployment.read_token}"},
        timeout=10,
    )
    reply.raise_for_status()
    return reply.json()


def _events(live: Live, **params: Any) -> list[dict[str, Any]]:
    found: list[dict[str, Any]] = _get(live, "/api/v1/events", limit=500, **params)["items"]
    return found


def _event(live: Live, key: str) -> dict[str, Any] | None:
    return next((e for e in _events(live) if e["key"] == key), None)


def _targets(live: Live) -> dict[str, dict[str, Any]]:
    return surfaces.targets(live.base, live.deployment.read_token, include_retired=True)


def _registered(live: Live, *names: str) -> dict[str, dict[str, Any]] | None:
    found = _targets(live)
    return found if all(name in found for name in names) else None


def _page(live: Live, path: str) -> str:
    return httpx.get(f"{live.base}{path}", timeout=10).raise_for_status().text


def _account_metric(live: Live, name: str, **labels: str) -> list[float]:
    from prometheus_client.parser import text_string_to_metric_families

    text = httpx.get(f"{live.base}/metrics", timeout=10).raise_for_status().text
    return [
        sample.value
        for family in text_string_to_metric_families(text)
        for sample in family.samples
        if sample.name == name and all(sample.labels.get(k) == v for k, v in labels.items())
    ]


def _hooks_about(live: Live, rule: str, key: str) -> dict[str, list[surfaces.Webhook]]:
    """The webhooks of ``rule`` whose alert carries the provider's event id ``key``."""
    found: dict[str, list[surfaces.Webhook]] = {"firing": [], "resolved": []}
    for hook in surfaces.webhooks(live.world.receiver):
        if hook.rule == rule and hook.alert.get("extra", {}).get("event_id") == key:
            found[hook.event].append(hook)
    return found


def _instance_id(name: str) -> str:
    return _account().cloud.instance_id(name)


# --------------------------------------------------------------------------- the stories


def test_the_account_s_instances_are_registered_with_their_ids(live: Live) -> None:
    found = eventually(lambda: _registered(live, RETIRING, SPOT), "the two team instances")
    for name in (RETIRING, SPOT):
        assert found[name]["instance_id"] == _instance_id(name), found[name]
    assert found[STORE_BOX]["instance_id"] == "i-abcd1111", found[STORE_BOX]
    surfaces_agree(live, Expect(targets=dict.fromkeys((RETIRING, SPOT, STORE_BOX), "up")))


def test_a_scheduled_retirement_alerts_ahead_reminds_and_explains_its_outage(live: Live) -> None:
    instance = _instance_id(RETIRING)
    start = (datetime.now(UTC) + timedelta(seconds=AHEAD_S)).replace(microsecond=0)
    arn = _account().health.schedule_retirement(instance, start)

    fired = eventually(
        lambda: _hooks_about(live, "scheduled_maintenance", arn)["firing"],
        "a scheduled_maintenance webhook for the retirement",
    )[0]
    assert fired.received_at < start.timestamp(), "the retirement was announced after it began"
    extra = fired.alert["extra"]
    assert extra["targets"] == [RETIRING], extra
    assert surfaces.when(extra["starts_at"]) == start, extra
    stored = eventually(lambda: _event(live, arn), "the retirement on /api/v1/events")
    assert (stored["kind"], stored["status"], stored["targets"]) == (
        "retirement",
        "upcoming",
        [RETIRING],
    ), stored
    assert arn in _page(live, f"/targets/{RETIRING}"), "the target's page lacks the retirement"
    told = f"account event     aws retirement from {start:%H:%M:%S}Z on {RETIRING}: "
    assert told in live.deployment.log_tail(200_000), "the console does not name the target"
    assert _account_metric(live, "slamon_account_event_starts_in_seconds", target=RETIRING)

    # the reminder: once, REMINDER_S before the start, before the work begins
    reminders = eventually(
        lambda: [
            h
            for h in _hooks_about(live, "scheduled_maintenance", arn)["firing"]
            if h.alert.get("extra", {}).get("reminder")
        ],
        "the scheduled_maintenance reminder",
        AHEAD_S + ALERT_S,
    )
    reminded = reminders[0].received_at - start.timestamp()
    assert -REMINDER_S - 2 <= reminded < 2, f"reminded {reminded:+.1f} s from the start"

    # the work: the box goes dark while AWS says the event is open; the cloud still lists it
    # running, so its downtime pages
    wait_until(start)
    live.world.http.down(RETIRING)
    _account().health.update(arn, statusCode="open")
    down = await_webhook(live, "target_down", RETIRING, "firing")
    time.sleep(3)
    live.world.http.up(RETIRING)
    _account().health.update(arn, statusCode="closed", endTime=time.time())
    await_webhook(live, "target_down", RETIRING, "resolved")
    resolved = eventually(
        lambda: _hooks_about(live, "scheduled_maintenance", arn)["resolved"],
        "the retirement's scheduled_maintenance resolved",
    )
    assert len(resolved) == 1, resolved
    once_each(live, "target_down", RETIRING)

    assert down.started_at is not None
    report = live.report(month_of(down.started_at))
    [outage] = surfaces.report_outages(report, RETIRING, "reachable") or [None]
    assert outage is not None, report
    evidence = outage.get("evidence") or []
    assert [e["event_id"] for e in evidence] == [arn], outage
    assert evidence[0]["kind"] == "retirement", evidence
    assert "degradation of the underlying hardware" in evidence[0]["detail"], evidence
    row = surfaces.report_target(report, RETIRING)
    assert row is not None
    assert row["credit_pct"] == 25, row  # a retirement is AWS' doing: the downtime counts


def wait_until(moment: datetime) -> None:
    left = (moment - datetime.now(UTC)).total_seconds()
    if left > 0:
        time.sleep(left)


class Checkpointing:
    """A training loop in a thread of the test, on the hooks: it steps until told of an
    interruption, then saves its checkpoint (a file, stamped with the time it was written)."""

    def __init__(self, folder: Path, imds_url: str) -> None:
        self.checkpoint = folder / "checkpoint.json"
        self.heard: list[Notice] = []
        self.saved_at: datetime | None = None
        self.step = 0
        self.stop = threading.Event()
        self.watch = training.on_interruption(self._interrupted, "aws", imds_url)
        self.thread = threading.Thread(target=self._train, daemon=True)
        self.thread.start()

    def _interrupted(self, notice: Notice) -> None:
        self.heard.append(notice)
        self.stop.set()

    def _train(self) -> None:
        while not self.stop.is_set():
            self.step += 1
            time.sleep(0.05)
        self.checkpoint.write_text(json.dumps({"step": self.step}))
        self.saved_at = datetime.now(UTC)

    def close(self) -> None:
        self.watch.close()
        self.stop.set()
        self.thread.join(timeout=10)


def test_a_spot_notice_alerts_at_once_the_loop_checkpoints_and_the_reclaim_is_a_preemption(
    live: Live, tmp_path: Path
) -> None:
    imds = _account().imds
    token = live.deployment.command(
        "token", "create", f"agent-{live.deployment.kind}", "--scope", "events"
    ).stdout.strip()
    bin_dir = fake_nvidia_smi(tmp_path)
    env = os.environ | {
        "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}",
        "SLAMON_AGENT_TOKEN": token,
        "LD_LIBRARY_PATH": str(tmp_path),  # no libnvidia-ml here: NVML cannot load
    }
    command = [
        sys.executable, "-m", "monitor.cli", "agent", "--url", live.base, "--target", SPOT,
        "--interval", "5s", "--metadata", "aws", "--metadata-url", imds.url,
    ]  # fmt: skip
    agent = subprocess.Popen(
        command, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    loop = Checkpointing(tmp_path, imds.url)
    try:
        time.sleep(2 * AGENT_POLL_S)  # both watching, nothing to hear yet
        noticed = datetime.now(UTC)
        deadline = (noticed + timedelta(seconds=NOTICE_S)).replace(microsecond=0)
        body = json.dumps({"action": "terminate", "time": iso(deadline)}).encode()
        imds.documents[INSTANCE_ACTION] = (200, body)

        fired = await_webhook(live, "interruption_notice", SPOT, "firing")
        extra = fired.alert["extra"]
        assert surfaces.when(extra["deadline"]) == deadline, extra
        assert 0 < extra["seconds_left"] <= NOTICE_S, extra
        firing = live.firing()[("interruption_notice", SPOT)]
        took = (surfaces.when(firing["started_at"]) or deadline) - noticed
        assert took <= timedelta(seconds=AGENT_POLL_S + 2), (
            f"interruption_notice fired {took} after IMDS served the notice"
        )
        eventually(lambda: loop.saved_at, "the training loop's checkpoint")
        assert loop.saved_at is not None
        assert loop.saved_at < deadline, "the checkpoint was saved after the deadline"
        assert json.loads(loop.checkpoint.read_text())["step"] == loop.step
        [heard] = loop.heard
        assert (heard.kind, heard.deadline) == ("preemption", deadline)
        [event] = [e for e in _events(live, target=SPOT) if e["kind"] == "preemption"]
        assert (event["via"], event["status"]) == ("agent", "upcoming"), event
        surfaces_agree(live, Expect(targets={SPOT: "up"}, firing=(("interruption_notice", SPOT),)))
    finally:
        loop.close()
        agent.send_signal(signal.SIGTERM)
        out, err = agent.communicate(timeout=30)
    assert "interrupt notice" in out, (out, err)

    # the reclaim: the box goes dark at the deadline, then EC2 says why
    live.world.http.down(SPOT)
    _account().cloud.reclaim_spot(_instance_id(SPOT))
    ended = eventually(
        lambda: (_targets(live).get(SPOT) or {}).get("retired_at") and _targets(live)[SPOT],
        f"{SPOT} retired by a sweep",
    )
    assert ended["ended_by"] == "preempted", ended
    quiet_period()
    assert not live.hooks("target_down", SPOT)["firing"], "a preemption paged someone"
    assert live.outages(SPOT) == [], "a preemption left an outage"
    surfaces_agree(
        live, Expect(gone=(SPOT,), quiet=(("target_down", SPOT), ("interruption_notice", SPOT)))
    )


def fake_nvidia_smi(folder: Path) -> Path:
    """An ``nvidia-smi`` that prints a real H100 capture, as the driver's own would."""
    script = folder / "nvidia-smi"
    csv = FIXTURES / "nvidia-smi" / "gpuexp-h100-load.csv"
    script.write_text(f"#!/bin/sh\nexec cat '{csv}'\n")
    script.chmod(0o755)
    return folder


def _push(live: Live, path: str, body: dict[str, Any], token: str) -> dict[str, Any]:
    reply = httpx.post(
        f"{live.base}{path}", json=body, headers={"Authorization": f"Bearer {token}"}, timeout=10
    )
    assert reply.status_code in (200, 201), (reply.status_code, reply.text)
    answer: dict[str, Any] = reply.json()
    return answer


def _events_token(live: Live) -> str:
    return live.deployment.command(
        "token", "create", f"pusher-{time.monotonic_ns()}", "--scope", "events"
    ).stdout.strip()


def test_an_eventbridge_push_shows_once_however_often_it_is_delivered(live: Live) -> None:
    token = _events_token(live)
    delivery = json.loads((ACCOUNT / "1-aws-health-ec2-instance-store-issue.json").read_text())
    key = delivery["detail"]["eventArn"]
    answers = [_push(live, "/api/v1/events/aws-health", delivery, token) for _ in range(3)]
    assert [a["outcome"] for a in answers] == ["new", "unchanged", "unchanged"], answers
    assert len({a["id"] for a in answers}) == 1
    stored = _event(live, key)
    assert stored is not None
    assert (stored["readings"], stored["targets"], stored["kind"]) == (3, [STORE_BOX], "issue")
    assert [e["key"] for e in _events(live, target=STORE_BOX)] == [key]
    told = "account event     aws issue from 2016-06-05 15:10:09Z on acct-store: EC2 instance"
    assert live.deployment.log_tail(200_000).count(told) == 1, "the push is not told once"
    await_webhook(live, "provider_event", "aws", "firing")
    quiet_period()
    hooks = _hooks_about(live, "provider_event", key)
    assert len(hooks["firing"]) == 1, hooks
    assert key in _page(live, f"/targets/{STORE_BOX}")
    # the sample starts after it was sent: upcoming, as AWS would have it without a statusCode
    assert stored["status"] == "upcoming", stored
    counted = _account_metric(
        live, "slamon_account_events", provider="aws", kind="issue", status="upcoming"
    )
    assert counted == [1.0], counted


def service_health(stage: str, at: datetime, began: datetime) -> dict[str, Any]:
    """Azure's published test action, as a live delivery of one stage of an incident in East
    US: its stage, its times and its impacted services (as real deliveries carry them, an
    escaped JSON string) changed; every other field as published."""
    document: dict[str, Any] = json.loads(
        (ACCOUNT / "5-azure-servicehealth-incident-commonschema-testaction.json").read_text()
    )
    context = document["data"]["alertContext"]
    props = context["properties"]
    props["stage"] = stage
    props["impactedServices"] = json.dumps(
        [{"ImpactedRegions": [{"RegionName": "East US"}], "ServiceName": "Virtual Machines"}]
    )
    props["impactStartTime"] = iso(began)
    props["impactMitigationTime"] = iso(at) if stage == "Resolved" else None
    context["eventTimestamp"] = iso(at)
    return document


def test_an_azure_service_health_push_shows_once_and_resolves_once(live: Live) -> None:
    token = _events_token(live)
    began = datetime.now(UTC) - timedelta(minutes=10)
    active = service_health("Active", began + timedelta(minutes=1), began)
    key = active["data"]["alertContext"]["properties"]["trackingId"]
    for _ in range(2):
        _push(live, "/api/v1/events/azure-service-health", active, token)
    stored = _event(live, key)
    assert stored is not None
    assert (stored["status"], stored["targets"], stored["readings"]) == ("open", [AZURE_VM], 2)
    await_webhook(live, "provider_event", "azure", "firing")
    assert key in _page(live, "/providers/azure"), "the provider's page lacks the open event"
    assert key in _page(live, f"/targets/{AZURE_VM}"), "the VM's page lacks the open event"

    resolved = service_health("Resolved", datetime.now(UTC), began)
    for _ in range(2):
        _push(live, "/api/v1/events/azure-service-health", resolved, token)
    # a late copy of the active stage changes nothing
    assert _push(live, "/api/v1/events/azure-service-health", active, token)["outcome"] == "stale"
    await_webhook(live, "provider_event", "azure", "resolved")
    once_each(live, "provider_event", "azure")
    stored = _event(live, key)
    assert stored is not None
    assert (stored["status"], stored["readings"]) == ("closed", 5), stored
    assert key in _page(live, "/providers/azure"), "closed this month: still on the page"
    counted = _account_metric(
        live, "slamon_account_events", provider="azure", kind="issue", status="closed"
    )
    assert counted == [1.0], counted


def test_no_alert_was_sent_twice(live: Live) -> None:
    """Exactly once each, but for the maintenance reminder: a second firing message of the
    same alert, itself sent once."""
    wrong = no_second_messages(live)
    reminders = [
        h
        for h in surfaces.webhooks(live.world.receiver)
        if h.alert.get("extra", {}).get("reminder")
    ]
    assert len(reminders) == 1, [(h.subject, h.received_at) for h in reminders]
    allowed = {f"{('scheduled_maintenance', h.subject, 'firing')}: 2 webhooks" for h in reminders}
    wrong = [w for w in wrong if w not in allowed]
    assert not wrong, "\n".join(wrong)
