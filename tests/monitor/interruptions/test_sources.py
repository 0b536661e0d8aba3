"""Each cloud's metadata client against a local server speaking its protocol
(tests/monitor/interruptions/fake_metadata.py), on the providers' real documents
(tests/fixtures/notices/SOURCES.md): IMDSv2's token handshake and expiry, GCE's wait_for_change
with the ETag, Azure's Scheduled Events with and without an acknowledgement, and every failure
as one line."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import httpx
import pytest

from monitor.interruptions import MetadataError, Notice, NotOnThisCloud, find_source
from monitor.interruptions.aws import (
    INSTANCE_ACTION,
    REBALANCE,
    SCHEDULED,
    AwsMetadata,
    parse_instance_action,
    parse_rebalance,
    parse_scheduled,
)
from monitor.interruptions.azure import AzureMetadata, parse_document
from monitor.interruptions.gcp import GceMetadata, parse_maintenance_event, parse_preempted
from tests.monitor.interruptions.fake_metadata import MetadataServer, closed_port

CAPTURED = Path(__file__).resolve().parents[2] / "fixtures" / "notices"
NOW = datetime(2026, 12, 4, 22, 0, tzinfo=UTC)

# AWS' documented example of events/maintenance/scheduled (EC2 user guide, "View scheduled
# events"), with a canceled one beside it
SCHEDULED_EVENTS = b"""[
  {"NotBefore": "21 Jan 2019 09:00:43 GMT", "Code": "system-reboot",
   "Description": "scheduled reboot", "EventId": "instance-event-0d59937288b749b32",
   "NotAfter": "21 Jan 2019 09:17:23 GMT", "State": "active"},
  {"NotBefore": "29 Jan 2019 09:00:43 GMT", "Code": "instance-retirement",
   "Description": "[Canceled] scheduled retirement", "EventId": "instance-event-0e2a1d8c29f7d7f2c",
   "NotAfter": "29 Jan 2019 09:17:23 GMT", "State": "canceled"}
]"""


def captured(name: str) -> bytes:
    return (CAPTURED / name).read_bytes()


@pytest.fixture
def client() -> Iterator[httpx.Client]:
    with httpx.Client(timeout=2.0) as c:
        yield c


def serve(cloud: str) -> Iterator[MetadataServer]:
    server = MetadataServer(cloud)
    try:
        yield server
    finally:
        server.close()


@pytest.fixture
def imds() -> Iterator[MetadataServer]:
    yield from serve("aws")


@pytest.fixture
def gce() -> Iterator[MetadataServer]:
    yield from serve("gcp")


@pytest.fixture
def azure() -> Iterator[MetadataServer]:
    yield from serve("azure")


# --- the pure parsers on the real documents -----------------------------------------------


def test_a_spot_instance_action_is_a_preemption_by_its_time() -> None:
    notice = parse_instance_action(captured("aws-spot-instance-action-terminate.json"))
    assert notice == Notice(
        "aws",
        "preemption",
        datetime(2017, 9, 18, 8, 22, tzinfo=UTC),
        "2017-09-18T08:22:00Z terminate",
        "spot instance-action terminate",
    )
    assert notice.seconds_left(datetime(2017, 9, 18, 8, 20, tzinfo=UTC)) == 120.0


@pytest.mark.parametrize(("action", "kind"), [("stop", "stop"), ("hibernate", "hibernate")])
def test_a_spot_stop_or_hibernate_keeps_its_word(action: str, kind: str) -> None:
    raw = f'{{"action": "{action}", "time": "2026-12-04T22:02:00Z"}}'.encode()
    assert parse_instance_action(raw).kind == kind


def test_a_rebalance_recommendation_has_no_deadline() -> None:
    notice = parse_rebalance(captured("aws-rebalance-recommendation.json"))
    assert (notice.kind, notice.deadline, notice.key) == ("rebalance", None, "2020-10-27T08:22:00Z")
    assert notice.seconds_left(NOW) is None


def test_scheduled_events_keep_the_active_ones_with_their_window_start() -> None:
    assert parse_scheduled(SCHEDULED_EVENTS) == [
        Notice(
            "aws",
            "reboot",
            datetime(2019, 1, 21, 9, 0, 43, tzinfo=UTC),
            "instance-event-0d59937288b749b32",
            "scheduled reboot",
        )
    ]


def test_a_user_reboot_in_scheduled_events_is_a_reboot_by_its_not_before() -> None:
    [notice] = parse_document(captured("azure-scheduledevents-user-reboot.json"))
    assert notice == Notice(
        "azure",
        "reboot",
        datetime(2021, 7, 22, 4, 50, 17, tzinfo=UTC),
        "4CAEA225-A741-474D-A72E-428C86FCD853",
        "Reboot Scheduled by User",
    )


def test_a_started_azure_event_has_no_deadline() -> None:
    raw = (
        b'{"DocumentIncarnation": 3, "Events": [{"EventId": "e1", "EventType": "Preempt",'
        b' "EventStatus": "Started", "NotBefore": "", "Description": "Spot eviction",'
        b' "EventSource": "Platform", "DurationInSeconds": -1}]}'
    )
    [notice] = parse_document(raw)
    assert (notice.kind, notice.deadline) == ("preemption", None)
    assert notice.detail == "Preempt Started by Platform: Spot eviction"


@pytest.mark.parametrize(
    ("value", "kind", "seconds"),
    [
        ("NONE", None, None),
        ("MIGRATE_ON_HOST_MAINTENANCE", "scheduled_maintenance", 60),
        ("TERMINATE_ON_HOST_MAINTENANCE", "scheduled_maintenance", 60),
    ],
)
def test_gce_maintenance_values(value: str, kind: str | None, seconds: int | None) -> None:
    notice = parse_maintenance_event(value, NOW)
    assert (notice and notice.kind, notice and notice.seconds_left(NOW)) == (kind, seconds)


def test_gce_preempted_true_leaves_thirty_seconds() -> None:
    assert parse_preempted("FALSE", NOW) is None
    notice = parse_preempted("TRUE", NOW)
    assert notice is not None
    assert notice.seconds_left(NOW) == 30


@pytest.mark.parametrize(
    ("parse", "raw", "says"),
    [
        (parse_instance_action, b"<html>oops</html>", "spot/instance-action: not JSON"),
        (parse_instance_action, b'{"action": "explode", "time": "x"}', "no known action"),
        (parse_instance_action, b'{"action": "stop", "time": "soon"}', "not a time: 'soon'"),
        (parse_rebalance, b"[]", "rebalance recommendation: not an object"),
        (parse_scheduled, b'{"Code": 1}', "not a list of events"),
        (parse_scheduled, b'[{"Code": "meteor", "EventId": "e"}]', "unknown Code 'meteor'"),
        (parse_document, b'{"Events": {}}', "no Events list"),
        (parse_document, b'{"Events": [{"EventId": "e", "EventType": "Nap"}]}', "'Nap'"),
        (
            parse_document,
            b'{"Events": [{"EventId": "e", "EventType": "Freeze", "NotBefore": "tomorrow"}]}',
            "not a time",
        ),
    ],
)
def test_a_malformed_document_is_one_line(parse: object, raw: bytes, says: str) -> None:
    with pytest.raises(MetadataError, match=says) as caught:
        parse(raw)  # type: ignore[operator]
    assert "\n" not in str(caught.value)


@pytest.mark.parametrize("value", ["", "<html>", "maybe"])
def test_gce_values_that_are_not_values_are_one_line(value: str) -> None:
    with pytest.raises(MetadataError):
        parse_maintenance_event(value, NOW) if value != "maybe" else parse_preempted(value, NOW)


# --- AWS IMDSv2 --------------------------------------------------------------------------


def test_imds_reads_with_a_session_token_and_no_notice_is_a_404(
    imds: MetadataServer, client: httpx.Client
) -> None:
    source = AwsMetadata(client, imds.url)
    assert source.poll() == []
    put = [r for r in imds.requests if r[0] == "PUT"]
    assert [(r[1], r[3]["x-aws-ec2-metadata-token-ttl-seconds"]) for r in put] == [
        ("/latest/api/token", "21600")
    ]
    gets = [r for r in imds.requests if r[0] == "GET"]
    assert [r[1] for r in gets] == [INSTANCE_ACTION, REBALANCE, SCHEDULED]
    assert {r[3]["x-aws-ec2-metadata-token"] for r in gets} == {"token-1"}


def test_a_get_without_a_valid_token_is_refused(imds: MetadataServer) -> None:
    reply = httpx.get(f"{imds.url}{INSTANCE_ACTION}", headers={"X-aws-ec2-metadata-token": "x"})
    assert reply.status_code == 401


def test_imds_serves_each_notice(imds: MetadataServer, client: httpx.Client) -> None:
    imds.documents[INSTANCE_ACTION] = (200, captured("aws-spot-instance-action-terminate.json"))
    imds.documents[REBALANCE] = (200, captured("aws-rebalance-recommendation.json"))
    imds.documents[SCHEDULED] = (200, SCHEDULED_EVENTS)
    kinds = [n.kind for n in AwsMetadata(client, imds.url).poll()]
    assert kinds == ["preemption", "rebalance", "reboot"]


def test_an_expired_token_is_replaced_once(imds: MetadataServer, client: httpx.Client) -> None:
    source = AwsMetadata(client, imds.url)
    source.poll()
    imds.expire_tokens()
    imds.documents[INSTANCE_ACTION] = (200, captured("aws-spot-instance-action-terminate.json"))
    assert [n.kind for n in source.poll()] == ["preemption"]
    assert imds.handed_out == 2
    assert source.token == "token-2"


def test_a_token_refused_again_is_one_line(imds: MetadataServer, client: httpx.Client) -> None:
    imds.refuse_all = True  # every GET is a 401, even with a fresh token
    with pytest.raises(MetadataError, match=r"^AWS metadata /latest/.*: HTTP 401$"):
        AwsMetadata(client, imds.url).poll()
    assert imds.handed_out == 2  # one new token, one more try: no loop


def test_an_imds_error_status_is_one_line(imds: MetadataServer, client: httpx.Client) -> None:
    imds.documents[INSTANCE_ACTION] = (500, b"boom")
    with pytest.raises(MetadataError, match=r"^AWS metadata .*instance-action: HTTP 500$"):
        AwsMetadata(client, imds.url).poll()


def test_a_malformed_instance_action_from_imds_is_one_line(
    imds: MetadataServer, client: httpx.Client
) -> None:
    imds.documents[INSTANCE_ACTION] = (200, b'{"action": "terminate"')
    with pytest.raises(MetadataError, match="not JSON"):
        AwsMetadata(client, imds.url).poll()


# --- GCE ---------------------------------------------------------------------------------


def test_gce_reads_with_the_flavor_header(gce: MetadataServer, client: httpx.Client) -> None:
    assert GceMetadata(client, gce.url).poll() == []
    assert {r[3]["metadata-flavor"] for r in gce.requests} == {"Google"}
    assert [r[1] for r in gce.requests] == [
        "/computeMetadata/v1/instance/maintenance-event",
        "/computeMetadata/v1/instance/preempted",
    ]


def test_gce_wait_for_change_is_held_until_the_value_changes(
    gce: MetadataServer, client: httpx.Client
) -> None:
    source = GceMetadata(client, gce.url, wait_s=10)
    assert source.read("preempted", wait=True) == []  # the first has no etag: answered at once
    first_etag = source.etags["preempted"]
    threading.Timer(0.5, gce.set_value, args=("preempted", "TRUE")).start()
    started = time.monotonic()
    [notice] = source.read("preempted", wait=True)
    held = time.monotonic() - started
    assert 0.4 < held < 5
    assert notice.kind == "preemption"
    query = gce.requests[-1][2]
    assert query == {"wait_for_change": "true", "timeout_sec": "10", "last_etag": first_etag}
    assert source.etags["preempted"] != first_etag


def test_gce_wait_for_change_answers_the_same_value_at_its_timeout(
    gce: MetadataServer, client: httpx.Client
) -> None:
    source = GceMetadata(client, gce.url, wait_s=1)
    source.read("maintenance-event", wait=True)
    started = time.monotonic()
    assert source.read("maintenance-event", wait=True) == []
    assert 0.9 < time.monotonic() - started < 4


def test_not_gce_when_the_answer_lacks_the_flavor(azure: MetadataServer) -> None:
    with httpx.Client(timeout=2) as c, pytest.raises(NotOnThisCloud, match="not GCE's"):
        GceMetadata(c, azure.url).check()


# --- Azure -------------------------------------------------------------------------------


def test_azure_reads_scheduled_events_and_does_not_acknowledge_unasked(
    azure: MetadataServer, client: httpx.Client
) -> None:
    azure.document = captured("azure-scheduledevents-user-reboot.json")
    [notice] = AzureMetadata(client, azure.url).poll()
    assert notice.key == "4CAEA225-A741-474D-A72E-428C86FCD853"
    assert [(r[0], r[2], r[3]["metadata"]) for r in azure.requests] == [
        ("GET", {"api-version": "2020-07-01"}, "true")
    ]
    assert azure.acknowledged == []


def test_azure_acknowledges_an_event_when_asked(
    azure: MetadataServer, client: httpx.Client
) -> None:
    azure.document = captured("azure-scheduledevents-user-reboot.json")
    source = AzureMetadata(client, azure.url)
    [notice] = source.poll()
    source.acknowledge(notice)
    assert azure.acknowledged == [
        {"StartRequests": [{"EventId": "4CAEA225-A741-474D-A72E-428C86FCD853"}]}
    ]


def test_azure_malformed_document_is_one_line(azure: MetadataServer, client: httpx.Client) -> None:
    azure.document = b"{not json"
    with pytest.raises(MetadataError, match=r"^scheduledevents: not JSON"):
        AzureMetadata(client, azure.url).poll()


# --- no metadata service, or another cloud's ---------------------------------------------


@pytest.mark.parametrize("cloud", ["aws", "gcp", "azure"])
def test_no_metadata_service_is_one_line_not_on_this_cloud(cloud: str) -> None:
    with httpx.Client(timeout=1) as c, pytest.raises(NotOnThisCloud) as caught:
        find_source(cloud, c, closed_port())
    assert "\n" not in str(caught.value)
    assert "ConnectError" in str(caught.value)


@pytest.mark.parametrize(("cloud", "other"), [("aws", "gcp"), ("gcp", "azure"), ("azure", "aws")])
def test_another_clouds_metadata_service_is_not_this_cloud(cloud: str, other: str) -> None:
    server = MetadataServer(other)
    try:
        with httpx.Client(timeout=1) as c, pytest.raises(NotOnThisCloud):
            find_source(cloud, c, server.url)
    finally:
        server.close()


@pytest.mark.parametrize("cloud", ["aws", "gcp", "azure"])
def test_auto_finds_the_cloud_that_answers(cloud: str) -> None:
    server = MetadataServer(cloud)
    try:
        with httpx.Client(timeout=1) as c:
            assert find_source("auto", c, server.url).cloud == cloud
    finally:
        server.close()


def test_auto_on_no_cloud_names_each_failure_in_one_line() -> None:
    with httpx.Client(timeout=1) as c, pytest.raises(NotOnThisCloud) as caught:
        find_source("auto", c, closed_port())
    text = str(caught.value)
    assert text.startswith("not on AWS, GCE or Azure: no AWS metadata service")
    assert "\n" not in text


def test_an_unknown_cloud_is_refused() -> None:
    with httpx.Client() as c, pytest.raises(ValueError, match="one of auto, aws, gcp, azure"):
        find_source("oracle", c)


def test_a_notice_refuses_a_naive_deadline_or_an_unknown_kind() -> None:
    with pytest.raises(ValueError):
        Notice("aws", "preemption", datetime(2026, 1, 1), "k", "d")
    with pytest.raises(ValueError):
        Notice("aws", "meteor", NOW + timedelta(seconds=1), "k", "d")
