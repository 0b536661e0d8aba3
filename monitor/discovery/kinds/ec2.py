"""``ec2``: Amazon EC2's DescribeInstances, region by region (``pip install 'slamon[aws]'``).

Every page of every region is read before the sweep decides anything: one region that fails
(unreachable, unauthorized, throttled, a timeout, an answer we cannot read) fails the whole
sweep, with one line naming the region and what AWS said, so nothing is retired for a region
that was not seen. The answer is turned into instances by :func:`instance`, a pure function
(tested on answers of DescribeInstances' documented shape, and end to end against moto's EC2
server: tests/monitor/discovery/test_ec2.py).

The end of a life comes from the instance's state reason (``StateReason.Code``): a spot
instance reclaimed by the market is ``Server.SpotInstanceTermination`` (even while it is still
``shutting-down`` or ``stopping``: the market has decided), the account's own stop or terminate
is ``Client.UserInitiatedShutdown`` (or the OS shutting itself down), and AWS' own doing (a
scheduled retirement, a host failure) is a ``Server.*`` code.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from typing import Annotated, Any

from pydantic import Field, model_validator

from monitor.discovery.kind import DiscoveryKind, SourceOptions, SweepContext
from monitor.discovery.model import Capacity, EndedBy, Instance, InstanceState
from monitor.errors import SweepFailed

RETRIES = 2  # attempts per request, the first included: a sweep every minute is the retry

# StateReason.Code -> who ended the life (docs: "EC2 instance state change reasons")
ENDERS: dict[str, EndedBy] = {
    "Server.SpotInstanceTermination": "preempted",
    "Server.SpotInstanceShutdown": "preempted",
    "Client.UserInitiatedShutdown": "user",
    "Client.InstanceInitiatedShutdown": "user",
    "Server.ScheduledStop": "provider",
    "Server.InternalError": "provider",
    "Server.InsufficientInstanceCapacity": "provider",
}
PREEMPTED = frozenset(code for code, by in ENDERS.items() if by == "preempted")
STATES: dict[str, InstanceState] = {
    "running": "running",
    "pending": "other",
    "stopping": "other",
    "shutting-down": "other",
    "stopped": "ended",
    "terminated": "ended",
}
# "User initiated (2026-12-01 10:00:00 GMT)": EC2 says GMT, moto says UTC
_WHEN = re.compile(r"\((\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}) (?:GMT|UTC)\)")
Region = Annotated[str, Field(pattern=r"^[a-z]{2}(-[a-z0-9]+)+$")]  # us-east-1, us-gov-west-1


class Ec2Options(SourceOptions):
    regions: tuple[Region, ...] = Field(min_length=1)
    # DescribeInstances filters by name: {"tag:team": "ml", "instance-state-name": [running]}
    filters: dict[str, str | list[str]] = Field(default_factory=dict)
    instance_types: tuple[str, ...] = ()  # an instance-type filter
    profile: str | None = None  # a named profile of the shared credentials files
    endpoint_url: str | None = Field(default=None, pattern=r"^https?://")

    @model_validator(mode="after")
    def _one_instance_type_filter(self) -> Ec2Options:
        if self.instance_types and "instance-type" in self.filters:
            raise ValueError("give instance_types or filters.instance-type, not both")
        return self

    def describe_filters(self) -> list[dict[str, Any]]:
        """The filters as DescribeInstances takes them."""
        wanted = {name: [v] if isinstance(v, str) else list(v) for name, v in self.filters.items()}
        if self.instance_types:
            wanted["instance-type"] = list(self.instance_types)
        return [{"Name": name, "Values": values} for name, values in wanted.items()]


def list_instances(options: Ec2Options, context: SweepContext) -> Sequence[Instance]:
    # loaded by a process that sweeps ec2, not by every one that reads the config
    import boto3  # type: ignore[import-untyped]
    from botocore.config import Config  # type: ignore[import-untyped]
    from botocore.exceptions import BotoCoreError, ClientError  # type: ignore[import-untyped]
    from botocore.parsers import ResponseParserError  # type: ignore[import-untyped]

    config = Config(
        connect_timeout=context.timeout_s,
        read_timeout=context.timeout_s,
        retries={"max_attempts": RETRIES, "mode": "standard"},
        user_agent_extra="slamon-discovery",
    )
    found: list[Instance] = []
    session = None
    for region in options.regions:
        try:
            session = session or boto3.Session(profile_name=options.profile)
            found.extend(instances(_pages(session, region, options, config), region))
        except ClientError as exc:
            raise _failed(region, _client_error(exc)) from None
        except (BotoCoreError, ResponseParserError) as exc:  # the latter is no BotoCoreError
            raise _failed(region, f"{type(exc).__name__}: {exc}") from None
        except MalformedAnswer as exc:
            raise _failed(region, f"malformed answer: {exc}") from None
    return found


def _pages(session: Any, region: str, options: Ec2Options, config: Any) -> list[Any]:
    """Every page DescribeInstances answers in ``region`` (the paginator follows NextToken)."""
    client = session.client(
        "ec2", region_name=region, endpoint_url=options.endpoint_url, config=config
    )
    try:
        paginator = client.get_paginator("describe_instances")
        return list(paginator.paginate(Filters=options.describe_filters()))
    finally:
        client.close()  # its connections, not left to the garbage collector


class MalformedAnswer(ValueError):
    """A DescribeInstances page that is not the shape EC2 documents."""


def instances(pages: Sequence[Mapping[str, Any]], region: str) -> list[Instance]:
    """The instances of DescribeInstances' ``pages`` in ``region`` (pure). Raises
    :class:`MalformedAnswer` for a page that is not EC2's shape."""
    found = []
    try:
        for page in pages:
            for reservation in page.get("Reservations") or []:
                for raw in reservation.get("Instances") or []:
                    found.append(instance(raw, region))
    except (AttributeError, KeyError, TypeError, ValueError) as exc:
        raise MalformedAnswer(f"{type(exc).__name__}: {exc}") from None
    return found


def instance(raw: Mapping[str, Any], region: str) -> Instance:
    """One instance of a DescribeInstances answer (``Reservations[].Instances[]``)."""
    instance_id = str(raw["InstanceId"])
    tags = {str(tag["Key"]): str(tag.get("Value", "")) for tag in raw.get("Tags") or []}
    zone = (raw.get("Placement") or {}).get("AvailabilityZone") or None
    launched = raw.get("LaunchTime")
    fields = {
        "instance_id": instance_id,
        "private_ip": raw.get("PrivateIpAddress"),
        "public_ip": raw.get("PublicIpAddress"),
        "private_dns": raw.get("PrivateDnsName"),
        "region": region,
        "zone": zone,
        "instance_type": raw.get("InstanceType"),
        "launch_time": launched.isoformat() if isinstance(launched, datetime) else launched,
    }
    state, ended_by = _state(raw)
    reason = raw.get("StateReason") or {}
    return Instance(
        external_id=instance_id,
        name=tags.get("Name") or instance_id,
        state=state,
        fields={key: value for key, value in fields.items() if value},  # absent: refused
        tags=tags,
        provider="aws",
        region=region,
        zone=zone,
        instance_type=raw.get("InstanceType"),
        capacity=_capacity(raw.get("InstanceLifecycle")),
        ended_by=ended_by,
        ended_at=ended_at(raw.get("StateTransitionReason")) if state == "ended" else None,
        end_detail=str(reason.get("Message") or "") if state == "ended" else "",
    )


def _state(raw: Mapping[str, Any]) -> tuple[InstanceState, EndedBy | None]:
    name = str(raw["State"]["Name"])
    code = str((raw.get("StateReason") or {}).get("Code") or "")
    state = STATES.get(name, "other")
    spot = raw.get("InstanceLifecycle") == "spot"
    if state == "other" and spot and code in PREEMPTED and name in ("stopping", "shutting-down"):
        return "ended", "preempted"  # reclaimed: the market has decided, it will not run again
    if state == "ended":
        return state, ENDERS.get(code, "unknown")
    return state, None


def _capacity(lifecycle: object) -> Capacity:
    """``spot`` from the lifecycle; a Capacity Block for ML is capacity reserved in advance;
    else on-demand (EC2 does not say per instance whether a reservation's discount applies)."""
    if lifecycle == "spot":
        return "spot"
    if lifecycle == "capacity-block":
        return "reserved"
    return "on-demand"


def ended_at(transition_reason: object) -> datetime | None:
    """When the life ended, from a ``StateTransitionReason`` such as ``User initiated
    (2026-12-01 10:00:00 GMT)``; None where it says no time."""
    found = _WHEN.search(transition_reason) if isinstance(transition_reason, str) else None
    if found is None:
        return None
    return datetime.strptime(found.group(1), "%Y-%m-%d %H:%M:%S").replace(tzinfo=UTC)


def _client_error(exc: Any) -> str:
    error = (getattr(exc, "response", None) or {}).get("Error") or {}
    code = error.get("Code") or type(exc).__name__
    return f"{code}: {error.get('Message') or exc}"


def _failed(region: str, said: str) -> SweepFailed:
    line = " ".join(f"ec2: {region}: {said}".split())  # one line, whatever AWS sent
    return SweepFailed(line[:300])


KIND = DiscoveryKind(
    name="ec2",
    options=Ec2Options,
    list_instances=list_instances,
    requires=("boto3", "botocore"),  # botocore: its exceptions and Config
    extra="aws",
)
