"""Discovery end to end: an ``ec2`` source sweeping a real moto server registers three tagged
instances, which are then probed; one is reclaimed by the spot market, one terminated by the
user, one goes down while it runs. The preempted and the terminated instance end their lives
without a ``target_down``, an outage or a credit; the one that went down pages, opens an
outage and owes a credit — and the webhooks, the API, /metrics, the status page and the
monthly report (its interruption ledger computed here by hand) tell the same story, on both
deployments.

moto cannot reclaim spot capacity through EC2's API (only AWS can), so the reclaim is written
into the fake cloud itself: the instance's state and state reason in moto's own backend, as
DescribeInstances then reports them. slamon's code is never touched.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import datetime
from typing import Any

import httpx
import pytest

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
    report_counts,
    surfaces_agree,
)
from tests.scenarios.deployments import Deployment

pytestmark = pytest.mark.slow

REGION = "us-east-1"
SPOT, STOPPED, DOWN = "disc-spot", "disc-user", "disc-down"
NAMES = (SPOT, STOPPED, DOWN)
TYPES = {SPOT: "g5.xlarge", STOPPED: "g5.xlarge", DOWN: "p5.48xlarge"}
SLA = """\
sla_policies:
  - name: scenario-credit
    provider: aws
    target_pct: 80
    tiers: [{below_pct: 80, credit_pct: 25}]
"""


class Cloud:
    """A moto server on 127.0.0.1 and a boto3 client of it."""

    def __init__(self) -> None:
        from moto.server import ThreadedMotoServer

        self.server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
        self.server.start()
        host, port = self.server.get_host_and_port()
        self.url = f"http://{host}:{port}"

    def client(self) -> Any:
        import boto3

        return boto3.client(
            "ec2",
            region_name=REGION,
            endpoint_url=self.url,
            aws_access_key_id="testing",
            aws_secret_access_key="testing",
        )

    def reset(self) -> None:
        httpx.post(f"{self.url}/moto-api/reset", timeout=10).raise_for_status()

    def launch(self, name: str, *, spot: bool, team: str, health: str) -> str:
        extra: dict[str, Any] = {"InstanceMarketOptions": {"MarketType": "spot"}} if spot else {}
        answer = self.client().run_instances(
            ImageId="ami-12c6146b",
            MinCount=1,
            MaxCount=1,
            InstanceType=TYPES.get(name, "t3.micro"),
            TagSpecifications=[
                {
                    "ResourceType": "instance",
                    "Tags": [
                        {"Key": "Name", "Value": name},
                        {"Key": "team", "Value": team},
                        {"Key": "health", "Value": health},
                    ],
                }
            ],
            **extra,
        )
        instance_id: str = answer["Instances"][0]["InstanceId"]
        return instance_id

    def instance_id(self, name: str) -> str:
        answer = self.client().describe_instances(Filters=[{"Name": "tag:Name", "Values": [name]}])
        ids = [i["InstanceId"] for r in answer["Reservations"] for i in r["Instances"]]
        assert len(ids) == 1, f"{name}: {ids}"
        return ids[0]

    def reclaim_spot(self, instance_id: str) -> None:
        """What AWS does when it takes spot capacity back: the instance is terminated with the
        state reason ``Server.SpotInstanceTermination`` (written into moto's backend: EC2 has
        no API for it)."""
        from moto.backends import get_backend
        from moto.core import DEFAULT_ACCOUNT_ID
        from moto.ec2.models.instances import InstanceState, StateReason

        instance = get_backend("ec2")[DEFAULT_ACCOUNT_ID][REGION].get_instance(instance_id)
        instance._state = InstanceState("terminated", 48)
        instance._reason = "Service initiated"
        instance.state_reason = StateReason(
            "Server.SpotInstanceTermination: Spot instance termination",
            "Server.SpotInstanceTermination",
        )

    def close(self) -> None:
        self.server.stop()


CLOUD: Cloud | None = None


@pytest.fixture(scope="module", autouse=True)
def cloud() -> Iterator[Cloud]:
    global CLOUD
    CLOUD = Cloud()
    try:
        yield CLOUD
    finally:
        CLOUD.close()
        CLOUD = None


def _cloud() -> Cloud:
    assert CLOUD is not None, "the moto server starts before the deployment"
    return CLOUD


def prepare_world(world: World) -> None:
    """A fresh account: the three team instances (one spot) up, and one of another team that
    the source's tag filter must leave out."""
    cloud = _cloud()
    cloud.reset()
    for name in (*NAMES, "other-team"):
        world.http.up(name)
    for name in NAMES:
        cloud.launch(name, spot=name == SPOT, team="ml", health=world.http.url(name))
    cloud.launch("other-team", spot=False, team="web", health=world.http.url("other-team"))


def scenario_config(world: World) -> tuple[str, str]:
    body = (
        alerting_config(world.receiver.url)
        + SLA
        + "discovery:\n"
        + "  - name: aws\n"
        + "    kind: ec2\n"
        + f"    regions: [{REGION}]\n"
        + f"    endpoint_url: '{_cloud().url}'\n"
        + "    filters: {'tag:team': ml}\n"
        + "    every: 1s\n"
        + "    template: {kind: http, url: '{tags.health}', name: '{tags.Name}',"
        + " sla: scenario-credit, interval: 1s}\n"
    )
    return "", body  # aws is among the providers every scenario config lists


def scenario_environment(deployment: Deployment) -> dict[str, str]:
    """The standard credential chain, fed from the environment as a user's would be."""
    return {
        "AWS_ACCESS_KEY_ID": "testing",
        "AWS_SECRET_ACCESS_KEY": "testing",
        "AWS_EC2_METADATA_DISABLED": "true",
    }


def _targets(live: Live) -> dict[str, dict[str, Any]]:
    return surfaces.targets(live.base, live.deployment.read_token, include_retired=True)


def _when(text: str | None) -> datetime:
    moment = surfaces.when(text)
    assert moment is not None, text
    return moment


# --------------------------------------------------------------------------- the story


def test_the_source_registers_its_running_instances_and_they_are_probed(live: Live) -> None:
    targets = eventually(
        lambda: (found := _targets(live)) and all(n in found for n in NAMES) and found,
        "the three tagged instances registered",
        ALERT_S,
    )
    assert "other-team" not in targets, "the tag filter let another team's instance in"
    for name in NAMES:
        target = targets[name]
        assert target["discovered_by"] == "aws", target
        assert target["instance_id"] == _cloud().instance_id(name), target
        assert target["provider"] == "aws", target
        assert target["instance_type"] == TYPES[name], target
        assert target["url"] == live.world.http.url(name), target
    assert targets[SPOT]["capacity"] == "spot"
    assert targets[DOWN]["capacity"] == "on-demand"
    assert targets[DOWN]["gpus"] == 8, "p5.48xlarge is 8 x H100 in the GPU type table"
    surfaces_agree(live, Expect(targets=dict.fromkeys(NAMES, "up")))
    assert live.metrics().discovery_up.get("aws") == 1, "/metrics: the aws source is not up"


def test_a_spot_reclaim_ends_a_life_without_downtime_or_page(live: Live) -> None:
    live.world.http.down(SPOT)  # the box goes dark first, then the API says why
    _cloud().reclaim_spot(_cloud().instance_id(SPOT))
    ended = eventually(
        lambda: (t := _targets(live).get(SPOT)) and t["retired_at"] and t,
        f"{SPOT} retired by a sweep",
    )
    assert ended["ended_by"] == "preempted", ended
    assert "SpotInstanceTermination" in (ended["end_detail"] or ""), ended
    quiet_period()
    assert not live.hooks("target_down", SPOT)["firing"], "a preemption paged someone"
    assert live.outages(SPOT) == [], "a preemption left an outage"
    surfaces_agree(live, Expect(gone=(SPOT,), quiet=(("target_down", SPOT),)))


def test_a_user_termination_ends_a_life_without_downtime_or_page(live: Live) -> None:
    live.world.http.down(STOPPED)
    _cloud().client().terminate_instances(InstanceIds=[_cloud().instance_id(STOPPED)])
    ended = eventually(
        lambda: (t := _targets(live).get(STOPPED)) and t["retired_at"] and t,
        f"{STOPPED} retired by a sweep",
    )
    assert ended["ended_by"] == "user", ended
    quiet_period()
    assert not live.hooks("target_down", STOPPED)["firing"], "a user's terminate paged someone"
    assert live.outages(STOPPED) == [], "a user's terminate left an outage"
    surfaces_agree(live, Expect(gone=(STOPPED,), quiet=(("target_down", STOPPED),)))


def test_an_instance_down_while_it_runs_pages_and_owes_a_credit(live: Live) -> None:
    live.world.http.down(DOWN)
    await_webhook(live, "target_down", DOWN, "firing")
    surfaces_agree(live, Expect(targets={DOWN: "down"}, firing=(("target_down", DOWN),)))
    live.world.http.up(DOWN)
    await_webhook(live, "target_down", DOWN, "resolved")
    surfaces_agree(live, Expect(targets={DOWN: "up"}, quiet=(("target_down", DOWN),)))
    firing, resolved = once_each(live, "target_down", DOWN)
    assert _targets(live)[DOWN]["retired_at"] is None, "a running instance was retired"

    month = month_of(firing.started_at)
    report = live.report(month)
    report_counts(live, report, DOWN, "reachable", [(firing, resolved)])
    down = surfaces.report_target(report, DOWN)
    assert down is not None, f"the {month} report does not list {DOWN}"
    assert down["credit_pct"] == 25, down
    for name in (SPOT, STOPPED):
        ended = surfaces.report_target(report, name)
        assert ended is not None, f"the report leaves out {name}, which lived this month"
        assert ended["credit_pct"] == 0, ended
        assert surfaces.report_outages(report, name, "reachable") == [], ended


def test_no_alert_was_sent_twice(live: Live) -> None:
    wrong = no_second_messages(live)
    assert not wrong, "\n".join(wrong)
