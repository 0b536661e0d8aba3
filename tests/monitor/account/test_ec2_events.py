"""The ec2_events source against a local server answering EC2's query API with a
DescribeInstanceStatus response of the published shape (tests/fixtures/account/; moto answers no
scheduled events), read through boto3 as AWS would be."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest

from monitor.account.kind import EventPollContext
from monitor.account.kinds import KINDS
from monitor.account.kinds.ec2_events import Ec2EventsOptions, MalformedAnswer, events
from monitor.account.model import AccountEvent
from monitor.errors import EventPollFailed
from tests.monitor.account.captured import FIXTURES
from tests.monitor.account.fake_aws import AwsServer, aws_server, query_error

ANSWER = (FIXTURES / "ec2-describeinstancestatus-scheduled-events.xml").read_bytes()
NOW = datetime(2026, 12, 4, 12, 0, tzinfo=UTC)


def polled(server: AwsServer, timeout_s: float = 2.0) -> list[AccountEvent]:
    options = Ec2EventsOptions(regions=("us-east-1",), endpoint_url=server.url)
    return list(KINDS["ec2_events"].list_events(options, EventPollContext("e", NOW, timeout_s)))


def test_a_retirement_ahead_and_a_completed_reboot_are_read_from_the_answer() -> None:
    with aws_server(lambda op, params: (200, ANSWER)) as server:
        retirement, reboot = polled(server)
    assert server.calls[0][0] == "DescribeInstanceStatus"
    assert server.calls[0][1]["IncludeAllInstances"] == "true"
    assert retirement == AccountEvent(
        provider="aws",
        source="ec2_events",
        key="i-1234567890abcdef0/instance-event-0d59937288b749b32",
        kind="retirement",
        status="upcoming",
        starts_at=datetime(2026, 12, 18, 14, tzinfo=UTC),
        ends_at=datetime(2026, 12, 18, 16, tzinfo=UTC),
        region="us-east-1",
        service="EC2",
        title="instance-retirement of i-1234567890abcdef0",
        detail="The instance is running on degraded hardware",
        entities=("i-1234567890abcdef0",),
        raw_type="instance-retirement",
    )
    assert (reboot.kind, reboot.status, reboot.entities) == (
        "scheduled_maintenance",
        "closed",
        ("i-0598c7d356eba48d7",),
    )


def test_an_event_without_an_id_is_keyed_by_its_code_and_start() -> None:
    scheduled = {"Code": "system-maintenance", "NotBefore": datetime(2026, 12, 1, tzinfo=UTC)}
    page = {"InstanceStatuses": [{"InstanceId": "i-1", "Events": [scheduled]}]}
    (found,) = events([page], "eu-west-1", NOW)
    assert found.key == "i-1/system-maintenance@2026-12-01T00:00:00+00:00"
    assert found.status == "open"


@pytest.mark.parametrize(
    "page",
    [
        {"InstanceStatuses": [{"Events": []}]},
        {"InstanceStatuses": [{"InstanceId": "i-1", "Events": [{"Description": "x"}]}]},
        {"InstanceStatuses": [{"InstanceId": "i-1", "Events": [{"Code": "x", "NotBefore": 5}]}]},
    ],
    ids=["no-instance-id", "no-code", "start-no-time"],
)
def test_a_malformed_page_is_refused(page: dict[str, Any]) -> None:
    with pytest.raises(MalformedAnswer):
        events([page], "us-east-1", NOW)


@pytest.mark.parametrize(
    ("code", "message"),
    [("UnauthorizedOperation", "You are not authorized to perform this operation."),
     ("RequestLimitExceeded", "Request limit exceeded.")],
    ids=["forbidden", "throttled"],
)  # fmt: skip
def test_a_refusal_is_one_line_naming_the_region(code: str, message: str) -> None:
    status = 400 if code.startswith("Unauthorized") else 503
    answer = (status, query_error(code, message))
    with aws_server(lambda op, params: answer) as server, pytest.raises(EventPollFailed) as raised:
        polled(server)
    assert str(raised.value) == f"ec2_events: us-east-1: {code}: {message}"


def test_a_timeout_is_one_line() -> None:
    with aws_server(lambda op, params: (200, ANSWER)) as server:
        server.delay_s = 2.0
        with pytest.raises(EventPollFailed) as raised:
            polled(server, timeout_s=0.3)
    assert str(raised.value).startswith("ec2_events: us-east-1: ReadTimeoutError")
