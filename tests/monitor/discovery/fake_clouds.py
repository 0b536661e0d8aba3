"""The fake clouds the discovery tests sweep, both real servers on 127.0.0.1: moto's EC2 API
(driven with boto3 as an account drives EC2) and a Kubernetes API server's `GET /api/v1/nodes`
(the published NodeList shape). What no API does (the spot market reclaiming an instance) is
done inside the fake cloud itself; slamon's code is never patched."""

from __future__ import annotations

import json
import ssl
import urllib.request
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from datetime import datetime
from typing import Any

import boto3
import pytest
from moto.backends import get_backend
from moto.core import DEFAULT_ACCOUNT_ID
from moto.ec2.models.instances import StateReason
from moto.server import ThreadedMotoServer
from sqlalchemy import select
from sqlalchemy.orm import Session, sessionmaker

from monitor.config import parse_config
from monitor.db.models import Target
from monitor.fleet.sweep import sweep
from tests.support import ApiServer

# --- EC2 (moto) --------------------------------------------------------------------------------

REGION = "us-east-1"
AMI = "ami-12c6146b"
SPOT_RECLAIM = StateReason(
    "Server.SpotInstanceTermination: Spot instance termination", "Server.SpotInstanceTermination"
)


@contextmanager
def moto_server() -> Iterator[str]:
    """A real EC2 API on 127.0.0.1, for this module, with test credentials in the environment
    and nothing else of the standard chain (no shared files, no instance metadata)."""
    with pytest.MonkeyPatch.context() as env:
        for name in ("AWS_PROFILE", "AWS_SESSION_TOKEN", "AWS_DEFAULT_REGION"):
            env.delenv(name, raising=False)
        env.setenv("AWS_ACCESS_KEY_ID", "testing")
        env.setenv("AWS_SECRET_ACCESS_KEY", "testing")
        env.setenv("AWS_SHARED_CREDENTIALS_FILE", "/nonexistent/credentials")
        env.setenv("AWS_CONFIG_FILE", "/nonexistent/config")
        env.setenv("AWS_EC2_METADATA_DISABLED", "true")
        server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
        server.start()
        host, port = server.get_host_and_port()
        try:
            yield f"http://{host}:{port}"
        finally:
            server.stop()


def moto_api(url: str, path: str, body: bytes = b"") -> None:
    request = urllib.request.Request(
        url + path, data=body, method="POST", headers={"Content-Type": "text/plain"}
    )
    with urllib.request.urlopen(request, timeout=10) as answer:
        answer.read()


def emptied(moto_url: str) -> Any:
    """An emptied fake cloud, and a boto3 client of its us-east-1 for the test to act with."""
    moto_api(moto_url, "/moto-api/reset")
    return boto3.client("ec2", region_name=REGION, endpoint_url=moto_url)


def launch(ec2: Any, instance_type: str = "p5.48xlarge", spot: bool = False, **tags: str) -> str:
    more: dict[str, Any] = {"InstanceMarketOptions": {"MarketType": "spot"}} if spot else {}
    answer = ec2.run_instances(
        ImageId=AMI, MinCount=1, MaxCount=1, InstanceType=instance_type,
        TagSpecifications=[{"ResourceType": "instance",
                            "Tags": [{"Key": k, "Value": v} for k, v in tags.items()]}],
        **more,
    )  # fmt: skip
    return str(answer["Instances"][0]["InstanceId"])


def reclaim_spot(instance_id: str, state: str = "shutting-down") -> None:
    """What the spot market does to an instance, done inside moto's backend (no API does it)."""
    record = get_backend("ec2")[DEFAULT_ACCOUNT_ID][REGION].get_instance(instance_id)
    record._state.name, record._state.code = state, {"shutting-down": 32, "terminated": 48}[state]
    record.state_reason = SPOT_RECLAIM
    record._reason = ""  # EC2 gives no time for it here: the sweep's own time is the end


# --- Kubernetes ----------------------------------------------------------------------------------


class NodesApi:
    """`GET /api/v1/nodes` as an API server answers it, on a real loopback server
    (``tests.support.ApiServer``): equality selectors (`a=b`, `a!=b`, `a`, comma-joined),
    `limit` and `continue` (an offset here; opaque to the client). ``answer`` replaces the
    NodeList with ``(status, body)``; ``server.delay_s`` holds each answer back; ``tls`` serves
    HTTPS."""

    def __init__(self, tls: ssl.SSLContext | None = None) -> None:
        self.nodes: list[dict[str, Any]] = []
        self.answer: tuple[int, bytes] | None = None
        self.server = ApiServer(self._answer, tls)

    @property
    def url(self) -> str:
        return self.server.url

    @property
    def requests(self) -> list[tuple[dict[str, str], dict[str, str]]]:
        """Each request's query and headers (names in lower case)."""
        return [(query, headers) for _, query, headers in self.server.requests]

    def _answer(self, path: str, query: dict[str, str]) -> tuple[int, object]:
        if path != "/api/v1/nodes":
            return 404, {"kind": "Status", "message": "the server could not find it"}
        return self.answer or (200, self.node_list(query))

    def node_list(self, query: dict[str, str]) -> bytes:
        selected = [n for n in self.nodes if selects(query.get("labelSelector", ""), n)]
        start = int(query.get("continue", "0"))
        limit = int(query.get("limit", str(len(selected) or 1)))
        items = selected[start : start + limit]
        more = start + limit < len(selected)
        metadata = {"resourceVersion": "4242", **({"continue": str(start + limit)} if more else {})}
        document = {"kind": "NodeList", "apiVersion": "v1", "metadata": metadata, "items": items}
        return json.dumps(document).encode()

    def close(self) -> None:
        self.server.close()


def selects(selector: str, item: dict[str, Any]) -> bool:
    labels = item["metadata"].get("labels", {})
    for term in filter(None, selector.split(",")):
        if "!=" in term:
            key, value = term.split("!=")
            if labels.get(key) == value:
                return False
        elif "=" in term:
            key, value = term.split("=", 1)
            if labels.get(key) != value.lstrip("="):
                return False
        elif term not in labels:
            return False
    return True


def kube_node(
    name: str,
    labels: dict[str, str] | None = None,
    provider_id: str = "",
    *,
    ready: bool = True,
    taints: Sequence[dict[str, str]] = (),
    capacity: dict[str, str] | None = None,
    ip: str = "10.0.0.1",
    deleted: str | None = None,
) -> dict[str, Any]:
    """A node as `GET /api/v1/nodes` lists it."""
    metadata: dict[str, Any] = {"name": name, "uid": f"uid-{name}", "labels": labels or {}}
    if deleted:
        metadata["deletionTimestamp"] = deleted
    return {
        "metadata": metadata,
        "spec": {"providerID": provider_id, **({"taints": list(taints)} if taints else {})},
        "status": {
            "capacity": {"cpu": "192", "memory": "2097152Ki", **(capacity or {})},
            "addresses": [
                {"type": "InternalIP", "address": ip},
                {"type": "Hostname", "address": f"{name}.internal"},
            ],
            "conditions": [
                {"type": "MemoryPressure", "status": "False"},
                {"type": "Ready", "status": "True" if ready else "Unknown"},
            ],
        },
    }


# --- through the real sweep ----------------------------------------------------------------------


def swept(sessions: sessionmaker[Session], config_text: str, source: str, at: datetime) -> Any:
    """The source ``source`` of the config ``config_text``, swept at ``at`` by the real sweep."""
    config = parse_config(config_text)
    chosen = config.source(source)
    assert chosen is not None, f"no source {source!r} in the config"
    return sweep(sessions, config, chosen, at)


def targets_by_name(sessions: sessionmaker[Session]) -> dict[str, Target]:
    with sessions() as session:
        return {t.name: t for t in session.scalars(select(Target))}
