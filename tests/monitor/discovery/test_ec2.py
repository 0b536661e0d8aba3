"""The ec2 source against a real EC2 API: moto's server on 127.0.0.1, driven with boto3 as an
account would drive EC2 (launch tagged instances, stop, terminate), swept through the real
sweep. The spot market's reclaim has no API, so that one case is done inside the fake cloud
(moto's own instance record), as AWS would do it; slamon's code is never patched."""

from __future__ import annotations

import socket
from datetime import UTC, datetime, timedelta
from typing import Any

import boto3
import pytest
from sqlalchemy import select
from sqlalchemy.orm import Session, sessionmaker

from monitor.config import parse_config
from monitor.db.models import DiscoverySource, Target
from monitor.discovery.kind import SweepContext
from monitor.discovery.kinds import KINDS
from monitor.discovery.kinds.ec2 import Ec2Options, MalformedAnswer, ended_at, instance, instances
from monitor.errors import ConfigError, SweepFailed
from tests.monitor.discovery.fake_clouds import REGION, launch, moto_api, reclaim_spot, swept


def listed(url: str, timeout_s: float = 5.0, **options: Any) -> list[Any]:
    opts = Ec2Options.model_validate({"regions": [REGION], "endpoint_url": url, **options})
    context = SweepContext("aws", datetime.now(UTC), timeout_s=timeout_s)
    return list(KINDS["ec2"].list_instances(opts, context))


def closed_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


# --- the answer, read (pure) --------------------------------------------------------------------


def raw(state: str, code: str = "", lifecycle: str | None = None, **more: Any) -> dict[str, Any]:
    return {
        "InstanceId": "i-0abc",
        "InstanceType": "p5.48xlarge",
        "State": {"Name": state},
        "StateReason": {"Code": code, "Message": f"{code}: words" if code else ""},
        "Placement": {"AvailabilityZone": "us-east-1b"},
        **({"InstanceLifecycle": lifecycle} if lifecycle else {}),
        **more,
    }


@pytest.mark.parametrize(
    ("state", "code", "lifecycle", "expected"),
    [
        pytest.param("running", "", None, ("running", None), id="running"),
        pytest.param("pending", "", None, ("other", None), id="pending-is-not-yet"),
        pytest.param("stopping", "Client.UserInitiatedShutdown", None, ("other", None),
                     id="stopping-is-not-yet-ended"),
        pytest.param("shutting-down", "Server.SpotInstanceTermination", "spot",
                     ("ended", "preempted"), id="spot-shutting-down-reclaimed-is-ended"),
        pytest.param("stopping", "Server.SpotInstanceTermination", "spot",
                     ("ended", "preempted"), id="spot-stopping-reclaimed-is-ended"),
        pytest.param("shutting-down", "Client.UserInitiatedShutdown", "spot", ("other", None),
                     id="spot-shutting-down-by-the-user-is-not-yet"),
        pytest.param("terminated", "Server.SpotInstanceTermination", "spot",
                     ("ended", "preempted"), id="spot-terminated-reclaimed"),
        pytest.param("stopped", "Client.UserInitiatedShutdown", None, ("ended", "user"),
                     id="stopped-by-the-user"),
        pytest.param("stopped", "Client.InstanceInitiatedShutdown", None, ("ended", "user"),
                     id="shut-down-from-inside"),
        pytest.param("stopped", "Server.ScheduledStop", None, ("ended", "provider"),
                     id="scheduled-retirement"),
        pytest.param("terminated", "Server.InternalError", None, ("ended", "provider"),
                     id="host-failure"),
        pytest.param("stopped", "Server.InsufficientInstanceCapacity", None,
                     ("ended", "provider"), id="no-capacity"),
        pytest.param("terminated", "Client.VolumeLimitExceeded", None, ("ended", "unknown"),
                     id="another-reason-is-unknown"),
        pytest.param("terminated", "", None, ("ended", "unknown"), id="no-reason-is-unknown"),
    ],
)  # fmt: skip
def test_the_state_and_its_reason_say_whether_and_who_ended_a_life(
    state: str, code: str, lifecycle: str | None, expected: tuple[str, str | None]
) -> None:
    seen = instance(raw(state, code, lifecycle), REGION)
    assert (seen.state, seen.ended_by) == expected
    assert seen.end_detail == (f"{code}: words" if seen.state == "ended" and code else "")


def test_an_instance_carries_its_fields_tags_and_capacity() -> None:
    seen = instance(
        raw("running", lifecycle="spot", PrivateIpAddress="10.0.0.7", PrivateDnsName="ip-10",
            Tags=[{"Key": "Name", "Value": "trainer"}, {"Key": "pool", "Value": "h100"}],
            LaunchTime=datetime(2026, 12, 1, 9, tzinfo=UTC)),
        REGION,
    )  # fmt: skip
    assert (seen.external_id, seen.name, seen.capacity, seen.provider) == (
        "i-0abc", "trainer", "spot", "aws",
    )  # fmt: skip
    assert (seen.region, seen.zone, seen.instance_type) == (REGION, "us-east-1b", "p5.48xlarge")
    assert dict(seen.fields) == {
        "instance_id": "i-0abc", "private_ip": "10.0.0.7", "private_dns": "ip-10",
        "region": REGION, "zone": "us-east-1b", "instance_type": "p5.48xlarge",
        "launch_time": "2026-12-01T09:00:00+00:00",
    }  # fmt: skip
    assert "public_ip" not in seen.fields  # none: a template naming it refuses the instance
    assert seen.template_fields()["tags.pool"] == "h100"
    assert instance(raw("running"), REGION).name == "i-0abc"  # no Name tag: the id
    assert instance(raw("running", lifecycle="capacity-block"), REGION).capacity == "reserved"
    assert instance(raw("running"), REGION).capacity == "on-demand"


@pytest.mark.parametrize(
    ("reason", "expected"),
    [
        ("User initiated (2026-12-01 10:00:00 GMT)", datetime(2026, 12, 1, 10, tzinfo=UTC)),
        ("User initiated (2026-12-01 10:00:00 UTC)", datetime(2026, 12, 1, 10, tzinfo=UTC)),
        ("", None),
        ("Service initiated", None),
        (None, None),
    ],
)
def test_the_end_is_dated_by_the_transition_reason_where_it_says(
    reason: str | None, expected: datetime | None
) -> None:
    assert ended_at(reason) == expected
    seen = instance(raw("stopped", "Client.UserInitiatedShutdown", StateTransitionReason=reason),
                    REGION)  # fmt: skip
    assert seen.ended_at == expected


@pytest.mark.parametrize(
    "pages",
    [
        [{"Reservations": [{"Instances": [{"State": {"Name": "running"}}]}]}],  # no id
        [{"Reservations": [{"Instances": [{"InstanceId": "i-1"}]}]}],  # no state
        [{"Reservations": ["not a reservation"]}],
        [{"Reservations": [{"Instances": [{**raw("running"), "Tags": [{"Value": "x"}]}]}]}],
    ],
    ids=["no-instance-id", "no-state", "not-a-reservation", "a-tag-without-key"],
)
def test_a_malformed_answer_is_refused(pages: list[dict[str, Any]]) -> None:
    with pytest.raises(MalformedAnswer):
        instances(pages, REGION)


# --- against moto's EC2 server ------------------------------------------------------------------


def test_lists_the_instances_its_filters_and_types_select(ec2: Any, moto_url: str) -> None:
    trainer = launch(ec2, Name="trainer", team="ml", pool="h100")
    spot = launch(ec2, "g5.12xlarge", spot=True, team="ml")
    launch(ec2, team="web")  # another team's
    launch(ec2, "m5.large", team="ml")  # not a GPU type asked for
    types = ["p5.48xlarge", "g5.12xlarge"]
    found = {i.external_id: i for i in listed(moto_url, filters={"tag:team": "ml"},
                                              instance_types=types)}  # fmt: skip
    assert sorted(found) == sorted([trainer, spot])
    one, two = found[trainer], found[spot]
    assert (one.name, one.state, one.capacity, one.instance_type) == (
        "trainer", "running", "on-demand", "p5.48xlarge",
    )  # fmt: skip
    assert (one.region, one.zone, one.provider) == (REGION, "us-east-1a", "aws")
    assert one.tags == {"Name": "trainer", "team": "ml", "pool": "h100"}
    assert one.fields["private_ip"].startswith("10.")
    assert one.fields["private_dns"].endswith(".ec2.internal")
    assert {"instance_id", "public_ip", "launch_time"} <= set(one.fields)
    assert (two.name, two.capacity) == (spot, "spot")  # no Name tag: its id
    both = listed(moto_url, filters={"tag:team": ["ml", "web"]}, instance_types=["p5.48xlarge"])
    assert len(both) == 2  # a filter's list of values: any of them


def test_every_page_and_every_region_is_read(ec2: Any, moto_url: str) -> None:
    for _ in range(101):  # moto answers 100 reservations a page
        launch(ec2, team="ml")
    west = boto3.client("ec2", region_name="us-west-2", endpoint_url=moto_url)
    far = launch(west, team="ml")
    found = listed(moto_url, regions=[REGION, "us-west-2"], filters={"tag:team": "ml"})
    assert len(found) == 102
    assert {(i.region, i.zone) for i in found if i.external_id == far} == {
        ("us-west-2", "us-west-2a")
    }


SWEPT = """
discovery:
  - name: aws
    kind: ec2
    regions: [us-east-1]
    endpoint_url: {url}
    timeout: 5s
    filters: {{"tag:team": ml}}
    instance_types: [p5.48xlarge, g5.12xlarge]
    template: {{kind: dcgm, url: "http://{{private_ip}}:9400/metrics", pool: "{{tags.pool}}",
               name: "{{tags.Name}}-{{instance_id}}", sla: aws-ec2-instance}}
"""


def sweep_aws(sessions: sessionmaker[Session], url: str, at: datetime) -> Any:
    return swept(sessions, SWEPT.format(url=url), "aws", at)


def rows(sessions: sessionmaker[Session]) -> dict[str, Target]:
    with sessions() as session:
        return {t.external_id or "": t for t in session.scalars(select(Target))}


def test_a_sweep_registers_the_fleet_and_retires_the_stopped_and_the_reclaimed(
    ec2: Any, moto_url: str, sessions: sessionmaker[Session]
) -> None:
    t0 = datetime.now(UTC).replace(microsecond=0)
    stopped = launch(ec2, Name="train", team="ml", pool="h100")
    gone = launch(ec2, Name="train", team="ml", pool="h100")
    reclaimed = launch(ec2, "g5.12xlarge", spot=True, Name="spot", team="ml", pool="a10g")
    kept = launch(ec2, Name="serve", team="ml", pool="h100")
    first = sweep_aws(sessions, moto_url, t0)
    assert first.ok, first.error
    assert first.counts()["added"] == 4
    targets = rows(sessions)
    one = targets[stopped]
    assert one.name == f"train-{stopped}"
    assert one.url is not None
    assert one.url.startswith("http://10.")
    assert one.url.endswith(":9400/metrics")
    assert (one.kind, one.pool, one.gpus, one.capacity, one.sla_policy) == (
        "dcgm", "h100", 8, "on-demand", "aws-ec2-instance",  # p5.48xlarge: 8 x H100
    )  # fmt: skip
    assert (one.provider, one.region, one.zone) == ("aws", REGION, "us-east-1a")
    assert (targets[reclaimed].gpus, targets[reclaimed].capacity) == (4, "spot")

    ec2.stop_instances(InstanceIds=[stopped])
    ec2.terminate_instances(InstanceIds=[gone])
    reclaim_spot(reclaimed)
    t1 = t0 + timedelta(minutes=1)
    second = sweep_aws(sessions, moto_url, t1)
    assert second.ok, second.error
    steps = {s.external_id: s for s in second.steps}
    assert {k: steps[k].action for k in (stopped, gone, reclaimed, kept)} == {
        stopped: "retired", gone: "retired", reclaimed: "retired", kept: "kept",
    }  # fmt: skip
    targets = rows(sessions)
    for user_end in (stopped, gone):
        target = targets[user_end]
        assert (target.ended_by, target.end_detail) == (
            "user", "Client.UserInitiatedShutdown: User initiated shutdown",
        )  # fmt: skip
        said = ec2.describe_instances(InstanceIds=[user_end])["Reservations"][0]["Instances"][0]
        assert target.retired_at == ended_at(said["StateTransitionReason"])  # when EC2 says
        assert target.retired_at is not None
        assert t0 <= target.retired_at <= t1
    spot = targets[reclaimed]
    assert (spot.ended_by, spot.capacity, spot.retired_at) == ("preempted", "spot", t1)
    assert spot.end_detail == "Server.SpotInstanceTermination: Spot instance termination"
    assert targets[kept].retired_at is None
    third = sweep_aws(sessions, moto_url, t1 + timedelta(minutes=1))  # ends already known: quiet
    assert [s.external_id for s in third.steps] == [kept]


def test_an_unreachable_api_fails_the_sweep_with_one_line_and_retires_nothing(
    ec2: Any, moto_url: str, sessions: sessionmaker[Session]
) -> None:
    t0 = datetime.now(UTC)
    box = launch(ec2, Name="train", team="ml", pool="h100")
    assert sweep_aws(sessions, moto_url, t0).ok
    nowhere = f"http://127.0.0.1:{closed_port()}"
    for minute in (1, 2, 3):
        outcome = sweep_aws(sessions, nowhere, t0 + timedelta(minutes=minute))
        assert outcome.error == (
            "ec2: us-east-1: EndpointConnectionError: Could not connect to the endpoint URL: "
            f'"{nowhere}/"'
        )
        assert not outcome.steps
    assert rows(sessions)[box].retired_at is None
    with sessions() as session:
        state = session.get(DiscoverySource, "aws")
        assert state is not None
        assert state.consecutive_failures == 3
        assert state.last_error == outcome.error


def test_an_auth_failure_is_one_line_naming_the_region_and_what_aws_said(
    ec2: Any, moto_url: str
) -> None:
    launch(ec2, team="ml")
    moto_api(moto_url, "/moto-api/reset-auth", b"0")  # from now on moto checks the keys
    try:
        with pytest.raises(SweepFailed) as caught:
            listed(moto_url)
    finally:
        moto_api(moto_url, "/moto-api/reset-auth", b"inf")
    assert str(caught.value) == (
        "ec2: us-east-1: AuthFailure: AWS was not able to validate the provided access credentials"
    )


def test_an_answer_that_is_not_ec2s_is_one_line(ec2: Any, moto_url: str) -> None:
    """moto answers a filter it does not know with an HTML error page: a malformed answer."""
    launch(ec2, team="ml")  # moto reads the filters only when it has instances to filter
    with pytest.raises(SweepFailed) as caught:
        listed(moto_url, filters={"no-such-filter": "x"})
    line = str(caught.value)
    assert line.startswith("ec2: us-east-1: ResponseParserError: Unable to parse response")
    assert "\n" not in line
    assert len(line) <= 300


def test_a_timeout_is_one_line(moto_url: str) -> None:
    with socket.socket() as silent:  # accepts connections (the backlog), never answers
        silent.bind(("127.0.0.1", 0))
        silent.listen(8)
        url = f"http://127.0.0.1:{silent.getsockname()[1]}"
        with pytest.raises(SweepFailed) as caught:
            listed(url, timeout_s=0.3)
    assert str(caught.value) == (
        f'ec2: us-east-1: ReadTimeoutError: Read timeout on endpoint URL: "{url}/"'
    )


def test_no_credentials_or_an_unknown_profile_is_one_line(
    moto_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    with pytest.raises(SweepFailed, match=r"^ec2: us-east-1: ProfileNotFound: The config profile "
                       r"\(nope\) could not be found$"):  # fmt: skip
        listed(moto_url, profile="nope")
    monkeypatch.delenv("AWS_ACCESS_KEY_ID")
    monkeypatch.delenv("AWS_SECRET_ACCESS_KEY")
    with pytest.raises(SweepFailed) as caught:
        listed(moto_url)
    assert str(caught.value) == "ec2: us-east-1: NoCredentialsError: Unable to locate credentials"


# --- the config -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("options", "problem"),
    [
        ("regions: [us-east-1], colour: red", "colour: Extra inputs are not permitted"),
        ("regions: []", "regions: Tuple should have at least 1 item after validation"),
        ("filters: {a: b}", "regions: Field required"),
        ("regions: [US East]", "regions.0: String should match pattern"),
        ("regions: [us-east-1], endpoint_url: 'ftp://x'", "endpoint_url: String should match"),
        ("regions: [us-east-1], instance_types: [p5.48xlarge], "
         "filters: {instance-type: p4d.24xlarge}",
         "give instance_types or filters.instance-type, not both"),
    ],
    ids=["unknown-option", "no-region", "regions-missing", "bad-region", "bad-endpoint",
         "two-type-filters"],
)  # fmt: skip
def test_a_bad_option_is_refused_with_its_path(options: str, problem: str) -> None:
    text = f"discovery:\n  - {{name: aws, kind: ec2, {options}, template: {{kind: http}}}}\n"
    with pytest.raises(ConfigError) as caught:
        parse_config(text)
    assert len(caught.value.problems) == 1
    assert caught.value.problems[0].startswith("discovery[0] (line 2): ")
    assert problem in caught.value.problems[0]


def test_a_good_source_parses_into_its_filters() -> None:
    config = parse_config(
        "discovery:\n  - {name: aws, kind: ec2, regions: [us-east-1, us-gov-west-1],"
        " filters: {'tag:team': ml, instance-state-name: [running, stopped]},"
        " instance_types: [p5.48xlarge], template: {kind: http}}\n"
    )
    source = config.source("aws")
    assert source is not None
    assert source.options.describe_filters() == [
        {"Name": "tag:team", "Values": ["ml"]},
        {"Name": "instance-state-name", "Values": ["running", "stopped"]},
        {"Name": "instance-type", "Values": ["p5.48xlarge"]},
    ]
