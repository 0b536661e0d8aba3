"""One fleet, two sources: an EKS node is an EC2 instance. The ec2 source lists it from a real
EC2 API (moto) and the kubernetes source from a real API server's NodeList, whose providerID
names the same instance; both sweeps run through the real sweep, and the instance is one
target, the first source's. When the cloud ends it, the ec2 source's end is the one that
counts, and the kubernetes source, which still sees the node, adds no second target."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session, sessionmaker

from monitor.db.models import Target
from tests.monitor.discovery.fake_clouds import NodesApi, kube_node, launch, reclaim_spot, swept

CONFIG = """
discovery:
  - name: aws
    kind: ec2
    regions: [us-east-1]
    endpoint_url: {moto}
    timeout: 5s
    template: {{kind: dcgm, url: "http://{{private_ip}}:9400/metrics", name: "{{instance_id}}"}}
  - name: eks
    kind: kubernetes
    host: {kube}
    template: {{kind: dcgm, url: "http://{{internal_ip}}:9400/metrics", name: "{{node}}"}}
"""
GPU_NODE = {"nvidia.com/gpu.present": "true", "node.kubernetes.io/instance-type": "p5.48xlarge",
            "eks.amazonaws.com/capacityType": "SPOT"}  # fmt: skip


def good_sweep(sessions: sessionmaker[Session], text: str, name: str, at: datetime) -> Any:
    outcome = swept(sessions, text, name, at)
    assert outcome.ok, outcome.error
    return outcome


def targets(sessions: sessionmaker[Session]) -> list[Target]:
    with sessions() as session:
        return list(session.scalars(select(Target)))


def test_an_eks_node_and_its_ec2_instance_are_one_target(
    ec2: Any, moto_url: str, api: NodesApi, sessions: sessionmaker[Session]
) -> None:
    instance_id = launch(ec2, spot=True, Name="gpu-node")
    api.nodes = [
        kube_node("ip-10-0-1-5.ec2.internal", GPU_NODE, f"aws:///us-east-1a/{instance_id}")
    ]
    text = CONFIG.format(moto=moto_url, kube=api.url)
    t0 = datetime.now(UTC).replace(microsecond=0)

    first = good_sweep(sessions, text, "aws", t0)
    assert [(s.action, s.external_id) for s in first.steps] == [("added", instance_id)]
    second = good_sweep(sessions, text, "eks", t0)
    assert [(s.action, s.external_id, s.reason) for s in second.steps] == [
        ("kept", instance_id, "one target: registered by source aws"),
    ]  # fmt: skip
    [one] = targets(sessions)
    assert (one.name, one.external_id, one.discovered_by) == (instance_id, instance_id, "aws")
    assert (one.provider, one.capacity, one.gpus) == ("aws", "spot", 8)

    reclaim_spot(instance_id, "terminated")
    t1 = t0 + timedelta(minutes=1)
    ended = good_sweep(sessions, text, "aws", t1)
    assert [(s.action, s.reason) for s in ended.steps] == [("retired", "preempted")]
    lingers = good_sweep(sessions, text, "eks", t1)  # the node outlives its instance a moment
    assert [(s.action, s.reason) for s in lingers.steps] == [
        ("kept", "one target: source aws saw its life end (preempted)"),
    ]  # fmt: skip
    [gone] = targets(sessions)
    assert (gone.ended_by, gone.retired_at) == ("preempted", t1)
