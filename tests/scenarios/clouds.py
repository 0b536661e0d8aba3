"""A real EC2 API for the scenarios: moto's server on 127.0.0.1, and what only AWS itself can do
to an instance (a spot reclaim) written into moto's own backend, as DescribeInstances then
reports it. slamon's code is never touched."""

from __future__ import annotations

from typing import Any

import httpx

REGION = "us-east-1"
TYPES: dict[str, str] = {}  # instance name -> type (t3.micro unless named here)
# Any second of downtime in a life of minutes owes the credit, however long the life ran first
CREDIT_POLICY = """\
sla_policies:
  - name: scenario-credit
    provider: aws
    target_pct: 99.99
    tiers: [{below_pct: 99.99, credit_pct: 25}]
"""
# The standard credential chain, fed from the environment as a user's would be
AWS_ENVIRONMENT = {
    "AWS_ACCESS_KEY_ID": "testing",
    "AWS_SECRET_ACCESS_KEY": "testing",
    "AWS_EC2_METADATA_DISABLED": "true",
}


def ec2_source(url: str) -> str:
    """The ``discovery:`` section of one ec2 source, ``aws``, sweeping the ``team: ml``
    instances of ``url`` every second into http targets on their ``health`` tag."""
    return (
        "discovery:\n"
        "  - name: aws\n"
        "    kind: ec2\n"
        f"    regions: [{REGION}]\n"
        f"    endpoint_url: '{url}'\n"
        "    filters: {'tag:team': ml}\n"
        "    every: 1s\n"
        "    template: {kind: http, url: '{tags.health}', name: '{tags.Name}',"
        " sla: scenario-credit, interval: 1s}\n"
    )


class Cloud:
    """A moto server on 127.0.0.1 and a boto3 client of it."""

    def __init__(self) -> None:
        from moto.server import ThreadedMotoServer

        self.server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
        self.server.start()
        host, self.port = self.server.get_host_and_port()
        self.url = f"http://{host}:{self.port}"

    def go_dark(self) -> None:
        """The EC2 API stops answering (its port refuses); the account's instances live on."""
        self.server.stop()

    def come_back(self) -> None:
        """The EC2 API answers again on its port, its instances as they were (moto keeps them
        in this process)."""
        from moto.server import ThreadedMotoServer

        self.server = ThreadedMotoServer(ip_address="127.0.0.1", port=self.port, verbose=False)
        self.server.start()

    def client(self) -> Any:
        import boto3  # type: ignore[import-untyped]

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
        return str(answer["Instances"][0]["InstanceId"])

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
        from moto.core.models import DEFAULT_ACCOUNT_ID
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
