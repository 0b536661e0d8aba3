"""``ec2_events``: EC2's scheduled instance events, region by region (``pip install
'slamon[aws]'``).

DescribeInstanceStatus with ``IncludeAllInstances`` (a stopped instance keeps its events) answers
each instance's ``Events``: a retirement, a reboot, a system maintenance, a stop, with the window
it is scheduled in. It needs no support plan, only ``ec2:DescribeInstanceStatus``. EC2 keeps a
finished event a while with ``[Completed]`` or ``[Canceled]`` before its description: that is a
closed event. The API has no "updated since" filter, so every poll reads every event; the
caller de-duplicates on the key (the instance and its event id). One region that fails fails
the poll, with one line naming the region and what AWS said.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any

from pydantic import Field

from monitor.account.kind import AccountKind, EventPollContext, SourceOptions
from monitor.account.kinds._aws import RETRIES, Region, client_error, failed
from monitor.account.model import (
    AccountEvent,
    ec2_event_kind,
    ec2_event_status,
    first_line,
    utc,
)

NAME = "ec2_events"


class Ec2EventsOptions(SourceOptions):
    regions: tuple[Region, ...] = Field(min_length=1)
    profile: str | None = None  # a named profile of the shared credentials files
    endpoint_url: str | None = Field(default=None, pattern=r"^https?://")


class MalformedAnswer(ValueError):
    """A DescribeInstanceStatus page that is not the shape EC2 documents."""


def list_events(options: Ec2EventsOptions, context: EventPollContext) -> Sequence[AccountEvent]:
    # loaded by a process that polls ec2_events, not by every one that reads the config
    import boto3  # type: ignore[import-untyped]
    from botocore.config import Config  # type: ignore[import-untyped]
    from botocore.exceptions import BotoCoreError, ClientError  # type: ignore[import-untyped]
    from botocore.parsers import ResponseParserError  # type: ignore[import-untyped]

    config = Config(
        connect_timeout=context.timeout_s,
        read_timeout=context.timeout_s,
        retries={"max_attempts": RETRIES, "mode": "standard"},
        user_agent_extra="slamon-account",
    )
    found: list[AccountEvent] = []
    session = None
    for region in options.regions:
        try:
            session = session or boto3.Session(profile_name=options.profile)
            found.extend(events(_pages(session, region, options, config), region, context.now))
        except ClientError as exc:
            raise failed(f"{NAME}: {region}", client_error(exc)) from None
        except (BotoCoreError, ResponseParserError) as exc:
            raise failed(f"{NAME}: {region}", f"{type(exc).__name__}: {exc}") from None
        except MalformedAnswer as exc:
            raise failed(f"{NAME}: {region}", f"malformed answer: {exc}") from None
    return found


def _pages(session: Any, region: str, options: Ec2EventsOptions, config: Any) -> list[Any]:
    client = session.client(
        "ec2", region_name=region, endpoint_url=options.endpoint_url, config=config
    )
    try:
        paginator = client.get_paginator("describe_instance_status")
        return list(paginator.paginate(IncludeAllInstances=True))
    finally:
        client.close()


def events(pages: Sequence[Mapping[str, Any]], region: str, now: datetime) -> list[AccountEvent]:
    """The scheduled events of DescribeInstanceStatus' ``pages`` in ``region`` (pure), their
    status judged at ``now``. Raises :class:`MalformedAnswer` for a page not of EC2's shape."""
    found = []
    try:
        for page in pages:
            for status in page.get("InstanceStatuses") or []:
                instance_id = str(status["InstanceId"])
                for raw in status.get("Events") or []:
                    found.append(event(raw, instance_id, region, now))
    except (AttributeError, KeyError, TypeError, ValueError) as exc:
        raise MalformedAnswer(f"{type(exc).__name__}: {exc}") from None
    return found


def event(raw: Mapping[str, Any], instance_id: str, region: str, now: datetime) -> AccountEvent:
    """One of an instance's ``Events``. Its key is the instance and the event's id (an event
    without an id, as older answers had, is keyed by its code and start)."""
    code = str(raw["Code"])
    description = str(raw.get("Description") or "")
    starts = utc(raw.get("NotBefore"))
    event_id = raw.get("InstanceEventId") or f"{code}@{starts.isoformat() if starts else ''}"
    return AccountEvent(
        provider="aws",
        source=NAME,
        key=f"{instance_id}/{event_id}",
        kind=ec2_event_kind(code),
        status=ec2_event_status(description, starts, now),
        starts_at=starts,
        ends_at=utc(raw.get("NotAfter")),
        region=region,
        service="EC2",
        title=f"{code} of {instance_id}",
        detail=first_line(description),
        entities=(instance_id,),
        raw_type=code,
    )


KIND = AccountKind(
    name=NAME,
    provider="aws",
    options=Ec2EventsOptions,
    list_events=list_events,
    requires=("boto3", "botocore"),
    extra="aws",
)
