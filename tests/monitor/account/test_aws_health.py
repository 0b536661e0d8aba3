"""The aws_health source: its parsers on a recorded DescribeEvents answer and a published
EventBridge delivery (tests/fixtures/account/), and its listing against a local server speaking
the Health API's JSON protocol to boto3 (moto has no Health API)."""

from __future__ import annotations

import copy
import socket
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from monitor.account.kind import EventPollContext
from monitor.account.kinds import KINDS
from monitor.account.kinds.aws_health import (
    AwsHealthOptions,
    MalformedEvent,
    events,
    from_eventbridge,
    title,
)
from monitor.account.model import AccountEvent
from monitor.errors import EventPollFailed
from tests.monitor.account.captured import document, placebo
from tests.monitor.account.fake_aws import AwsServer, aws_server, json_error

DESCRIBED = "2-aws-health-describeevents-issue-and-accountnotification.placebo.json"
PUSHED = "1-aws-health-ec2-instance-store-issue.json"
NOW = datetime(2026, 12, 4, 12, 0, tzinfo=UTC)


# --- DescribeEvents, read (pure) ----------------------------------------------------------------


def test_a_recorded_describe_events_answer_is_two_events_as_aws_recorded_them() -> None:
    billing, iam = events([placebo(DESCRIBED)])
    assert billing == AccountEvent(
        provider="aws",
        source="aws_health",
        key="arn:aws:health:global::event/event-1485912991457",
        kind="issue",  # accountNotification: kept, as an issue of no entity
        status="open",
        starts_at=datetime(2017, 1, 31, 20, 36, 31, tzinfo=UTC),
        ends_at=None,
        updated_at=datetime(2017, 1, 31, 20, 40, 16, 919000, tzinfo=UTC),
        region="global",
        service="BILLING",
        title="BILLING notification",
        detail="",
        entities=(),
        raw_type="AWS_BILLING_NOTIFICATION",
    )
    assert (iam.key, iam.kind, iam.status) == (
        "arn:aws:health:us-east-1::event/AWS_IAM_OPERATIONAL_ISSUE_1481033166",
        "issue",
        "closed",
    )
    assert iam.starts_at == iam.ends_at == datetime(2016, 12, 6, 9, 6, 6, tzinfo=UTC)
    assert (iam.region, iam.service, iam.title) == ("us-east-1", "IAM", "IAM operational issue")


def test_descriptions_and_entities_join_their_events_by_arn() -> None:
    arn = "arn:aws:health:us-east-1::event/AWS_IAM_OPERATIONAL_ISSUE_1481033166"
    found = events(
        [placebo(DESCRIBED)],
        {arn: "Increased error rates\n\nfor IAM in us-east-1"},
        {arn: ["AKIA1", "AKIA1", "role/x"]},
    )
    assert (found[1].detail, found[1].entities) == ("Increased error rates", ("AKIA1", "role/x"))
    assert (found[0].detail, found[0].entities) == ("", ())


@pytest.mark.parametrize(
    ("change", "field"),
    [
        pytest.param(lambda e: e.pop("arn"), "arn", id="no-arn"),
        pytest.param(lambda e: e.update(eventTypeCode=7), "eventTypeCode", id="code-not-text"),
        pytest.param(lambda e: e.update(statusCode="done"), "statusCode", id="unknown-status"),
        pytest.param(lambda e: e.update(startTime="soon"), "startTime", id="start-no-time"),
    ],
)
def test_a_malformed_described_event_is_refused_naming_its_field(
    change: Callable[[dict[str, Any]], object], field: str
) -> None:
    page = placebo(DESCRIBED)
    change(page["events"][0])
    with pytest.raises(MalformedEvent, match=field):
        events([page])


def test_a_title_is_the_event_type_code_in_words() -> None:
    assert title("AWS_EC2_INSTANCE_RETIREMENT_SCHEDULED") == "EC2 instance retirement scheduled"


# --- an EventBridge delivery, read (pure) -------------------------------------------------------


def test_a_published_eventbridge_delivery_is_its_event() -> None:
    found = from_eventbridge(document(PUSHED))
    arn = (
        "arn:aws:health:us-west-2::event/"
        "AWS_EC2_INSTANCE_STORE_DRIVE_PERFORMANCE_DEGRADED_90353408594353980"
    )
    assert found == AccountEvent(
        provider="aws",
        source="aws_health",
        key=arn,
        kind="issue",
        # no statusCode in this old sample, and its start lies after the delivery's time
        status="upcoming",
        starts_at=datetime(2016, 6, 5, 15, 10, 9, tzinfo=UTC),
        ends_at=None,
        updated_at=datetime(2016, 6, 5, 6, 27, 57, tzinfo=UTC),  # the delivery's time
        region="us-west-2",  # no eventRegion: the event ARN's region
        service="EC2",
        title="EC2 instance store drive performance degraded",
        detail="A description of the event will be provided here",
        entities=("i-abcd1111",),
        raw_type="AWS_EC2_INSTANCE_STORE_DRIVE_PERFORMANCE_DEGRADED",
    )


def test_the_event_region_wins_over_the_region_it_was_delivered_from() -> None:
    pushed = document(PUSHED)
    pushed["region"] = "us-east-1"  # the rule's region, where an organization aggregates
    pushed["detail"]["eventRegion"] = "eu-west-1"
    pushed["detail"]["statusCode"] = "open"
    found = from_eventbridge(pushed)
    assert (found.region, found.status) == ("eu-west-1", "open")


def test_a_delivery_with_an_end_and_no_status_is_closed() -> None:
    pushed = document(PUSHED)
    pushed["detail"]["endTime"] = "Sun, 06 Jun 2016 15:10:09 GMT"
    assert from_eventbridge(pushed).status == "closed"


def test_a_retirement_delivered_twice_is_one_key() -> None:
    pushed = document(PUSHED)
    pushed["detail"]["eventTypeCode"] = "AWS_EC2_INSTANCE_RETIREMENT_SCHEDULED"
    pushed["detail"]["eventTypeCategory"] = "scheduledChange"
    again = copy.deepcopy(pushed)
    again["id"] = "another-delivery-id"
    first, second = from_eventbridge(pushed), from_eventbridge(again)
    assert first == second
    assert first.kind == "retirement"


@pytest.mark.parametrize(
    ("change", "field"),
    [
        pytest.param(lambda d: d.update(source="aws.ec2"), "source", id="another-source"),
        pytest.param(lambda d: d.update({"detail-type": "EC2 Spot Instance Interruption Warning"}),
                     "detail-type", id="another-detail-type"),
        pytest.param(lambda d: d.pop("detail"), "detail", id="no-detail"),
        pytest.param(lambda d: d["detail"].pop("eventArn"), "detail.eventArn", id="no-arn"),
        pytest.param(lambda d: d["detail"].update(eventTypeCategory=None),
                     "detail.eventTypeCategory", id="no-category"),
        pytest.param(lambda d: d["detail"].update(startTime="whenever"), "detail.startTime",
                     id="start-no-time"),
        pytest.param(lambda d: d["detail"].update(affectedEntities="i-1"),
                     "detail.affectedEntities", id="entities-not-a-list"),
        pytest.param(lambda d: d["detail"].update(statusCode="maybe"), "detail.statusCode",
                     id="unknown-status"),
        pytest.param(lambda d: d["detail"].update(affectedEntities=None),
                     "detail.affectedEntities", id="entities-null"),
        pytest.param(lambda d: d["detail"].update(eventDescription={"en_US": "x"}),
                     "detail.eventDescription", id="description-not-a-list"),
        pytest.param(lambda d: d["detail"].update(service=7), "detail.service",
                     id="service-a-number"),
        pytest.param(lambda d: d["detail"].update(eventRegion=["us-east-1"]),
                     "detail.eventRegion", id="region-a-list"),
    ],
)  # fmt: skip
def test_a_malformed_delivery_is_one_line_naming_the_field(
    change: Callable[[dict[str, Any]], object], field: str
) -> None:
    pushed = document(PUSHED)
    change(pushed)
    with pytest.raises(MalformedEvent) as raised:
        from_eventbridge(pushed)
    assert str(raised.value).startswith(f"{field}:")
    assert "\n" not in str(raised.value)


def test_a_delivery_that_is_not_an_object_is_refused() -> None:
    with pytest.raises(MalformedEvent, match="not an object"):
        from_eventbridge([])  # type: ignore[arg-type]


# --- the listing, against the Health API's JSON protocol ----------------------------------------


def epoch(when: datetime) -> float:
    return when.timestamp()


def health_event(n: int, code: str = "AWS_EC2_INSTANCE_RETIREMENT_SCHEDULED") -> dict[str, Any]:
    return {
        "arn": f"arn:aws:health:us-east-1::event/EC2/{code}/{code}_{n}",
        "service": "EC2",
        "eventTypeCode": code,
        "eventTypeCategory": "scheduledChange",
        "region": "us-east-1",
        "startTime": epoch(NOW + timedelta(days=14)),
        "lastUpdatedTime": epoch(NOW),
        "statusCode": "upcoming",
    }


class HealthApi:
    """The Health API of one account holding ``count`` events, two pages of DescribeEvents."""

    def __init__(self, count: int) -> None:
        self.events = [health_event(n) for n in range(count)]

    def __call__(self, operation: str, params: dict[str, Any]) -> tuple[int, object]:
        if operation == "DescribeEvents":
            half = (len(self.events) + 1) // 2
            if params.get("nextToken") == "page-2":
                return 200, {"events": self.events[half:]}
            return 200, {"events": self.events[:half], "nextToken": "page-2"}
        if operation == "DescribeEventDetails":
            return 200, {
                "successfulSet": [
                    {
                        "event": {"arn": arn},
                        "eventDescription": {"latestDescription": f"{arn[-1]} retires\nsoon"},
                    }
                    for arn in params["eventArns"]
                ],
                "failedSet": [],
            }
        if operation == "DescribeAffectedEntities":
            arns = params["filter"]["eventArns"]
            return 200, {
                "entities": [
                    {"eventArn": arn, "entityValue": f"i-0{arn[-2:].strip('_')}"} for arn in arns
                ]
            }
        return 400, json_error("UnknownOperationException", operation)


def polled(server: AwsServer, since: datetime | None = None, **options: Any) -> list[Any]:
    opts = AwsHealthOptions.model_validate({"endpoint_url": server.url, **options})
    context = EventPollContext("aws_health", NOW, timeout_s=2.0, since=since)
    return list(KINDS["aws_health"].list_events(opts, context))


def test_a_poll_reads_every_page_then_details_and_entities_ten_arns_a_call() -> None:
    with aws_server(HealthApi(12)) as server:
        found = polled(server, since=NOW - timedelta(hours=1), services=["EC2"])
    assert len(found) == 12
    assert {event.kind for event in found} == {"retirement"}
    assert found[3].detail == "3 retires"
    assert found[3].entities == ("i-03",)
    operations = [operation for operation, _ in server.calls]
    assert operations.count("DescribeEvents") == 2
    sizes = [len(p["eventArns"]) for op, p in server.calls if op == "DescribeEventDetails"]
    assert sizes == [10, 2]
    first = server.calls[0][1]["filter"]
    assert first["services"] == ["EC2"]
    assert first["lastUpdatedTimes"] == [{"from": epoch(NOW - timedelta(hours=1))}]


def test_a_first_poll_asks_for_everything_the_api_still_has() -> None:
    with aws_server(HealthApi(1)) as server:
        polled(server)
    assert server.calls[0][1].get("filter", {}) == {}


def test_an_account_without_a_support_plan_is_told_which_plans_it_needs() -> None:
    def refuse(operation: str, params: dict[str, Any]) -> tuple[int, object]:
        return 400, json_error("SubscriptionRequiredException", "")

    with aws_server(refuse) as server, pytest.raises(EventPollFailed) as raised:
        polled(server)
    assert str(raised.value) == (
        "aws_health: the AWS Health API needs a Business, Enterprise On-Ramp or Enterprise "
        "support plan (SubscriptionRequiredException)"
    )


@pytest.mark.parametrize(
    ("status", "body", "said"),
    [
        pytest.param(400, json_error("AccessDeniedException", "User: x is not authorized to\n"
                     "perform: health:DescribeEvents"), "aws_health: AccessDeniedException: User:"
                     " x is not authorized to perform: health:DescribeEvents", id="forbidden"),
        pytest.param(400, json_error("ThrottlingException", "Rate exceeded"),
                     "aws_health: ThrottlingException: Rate exceeded", id="throttled"),
    ],
)  # fmt: skip
def test_a_refusal_is_one_line_of_what_aws_said(status: int, body: object, said: str) -> None:
    with (
        aws_server(lambda op, params: (status, body)) as server,
        pytest.raises(EventPollFailed) as raised,
    ):
        polled(server)
    assert str(raised.value) == said


def test_a_malformed_answer_fails_the_poll_before_any_more_calls() -> None:
    def answer(operation: str, params: dict[str, Any]) -> tuple[int, object]:
        raw = {"arn": "arn:x", "eventTypeCode": "X", "eventTypeCategory": "issue"}
        return 200, {"events": [{**raw, "statusCode": "bogus"}]}

    with aws_server(answer) as server, pytest.raises(EventPollFailed) as raised:
        polled(server)
    assert str(raised.value).startswith("aws_health: malformed answer: statusCode: 'bogus'")
    assert [operation for operation, _ in server.calls] == ["DescribeEvents"]


def test_a_closed_port_and_a_timeout_are_one_line_each() -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    with aws_server(HealthApi(1)) as server:
        server.server.server_close()
        options = AwsHealthOptions(endpoint_url=f"http://127.0.0.1:{port}")
        context = EventPollContext("aws_health", NOW, timeout_s=1.0)
        with pytest.raises(EventPollFailed) as closed:
            KINDS["aws_health"].list_events(options, context)
    assert str(closed.value).startswith("aws_health: EndpointConnectionError:")
    with aws_server(HealthApi(1)) as server:
        server.delay_s = 2.0
        opts = AwsHealthOptions(endpoint_url=server.url)
        with pytest.raises(EventPollFailed) as slow:
            KINDS["aws_health"].list_events(opts, EventPollContext("aws_health", NOW, 0.3))
    assert str(slow.value).startswith("aws_health: ReadTimeoutError:")
    assert "\n" not in str(closed.value) + str(slow.value)


def test_the_options_refuse_an_unknown_category_and_key() -> None:
    with pytest.raises(ValueError, match="categories"):
        AwsHealthOptions.model_validate({"categories": ["outage"]})
    with pytest.raises(ValueError, match="region_name"):
        AwsHealthOptions.model_validate({"region_name": "us-east-1"})


# --- the organizational view, against the Health API's JSON protocol ----------------------------

ALICE, BOB = "111111111111", "222222222222"
HOUR = timedelta(hours=1)


def org_event(n: int, scope: str = "ACCOUNT_SPECIFIC") -> dict[str, Any]:
    return {**health_event(n), "eventScopeCode": scope}


class OrganizationHealthApi:
    """The organizational view of an organization of two accounts: ``count`` account-specific
    retirements, event 0 in both accounts (``i-a0`` in Alice's, ``i-b0`` in Bob's), the rest in
    Alice's alone; and one public issue, which affects no account. DescribeEventsForOrganization
    answers two pages; DescribeAffectedEntitiesForOrganization one page per call, each account's
    entities as the filters ask. ``status`` is what DescribeHealthServiceStatusForOrganization
    answers."""

    def __init__(self, count: int) -> None:
        public = {
            **health_event(99, "AWS_EC2_OPERATIONAL_ISSUE"),
            "eventTypeCategory": "issue",
            "statusCode": "open",
            "eventScopeCode": "PUBLIC",
        }
        self.events = [org_event(n) for n in range(count)] + [public]
        self.accounts = {e["arn"]: [ALICE] for e in self.events[:count]}
        self.accounts[self.events[0]["arn"]] = [ALICE, BOB]
        self.status = "ENABLED"

    def __call__(self, operation: str, params: dict[str, Any]) -> tuple[int, object]:
        if operation == "DescribeEventsForOrganization":
            half = (len(self.events) + 1) // 2
            if params.get("nextToken") == "page-2":
                return 200, {"events": self.events[half:]}
            return 200, {"events": self.events[:half], "nextToken": "page-2"}
        if operation == "DescribeAffectedAccountsForOrganization":
            arn = params["eventArn"]
            scope = "ACCOUNT_SPECIFIC" if arn in self.accounts else "PUBLIC"
            return 200, {"affectedAccounts": self.accounts.get(arn, []), "eventScopeCode": scope}
        if operation == "DescribeEventDetailsForOrganization":
            found = []
            for asked in params["organizationEventDetailFilters"]:
                arn, account = asked["eventArn"], asked.get("awsAccountId")
                if (account is None) != (arn not in self.accounts):
                    return 400, json_error("ValidationException", f"scope of {arn}")
                found.append(
                    {
                        "awsAccountId": account,
                        "event": {"arn": arn},
                        "eventDescription": {"latestDescription": f"{arn[-2:]} for {account}"},
                    }
                )
            return 200, {"successfulSet": found, "failedSet": []}
        if operation == "DescribeAffectedEntitiesForOrganization":
            entities = []
            for asked in params["organizationEntityAccountFilters"]:
                arn, account = asked["eventArn"], asked["awsAccountId"]
                n = arn.rpartition("_")[2]
                prefix = "i-a" if account == ALICE else "i-b"
                if account in self.accounts.get(arn, []):
                    entities.append(
                        {"eventArn": arn, "awsAccountId": account, "entityValue": prefix + n}
                    )
            return 200, {"entities": entities}
        if operation == "DescribeHealthServiceStatusForOrganization":
            return 200, {"healthServiceAccessStatusForOrganization": self.status}
        return 400, json_error("UnknownOperationException", operation)


def asked(server: AwsServer, operation: str) -> list[dict[str, Any]]:
    return [params for op, params in server.calls if op == operation]


def test_an_organization_poll_reads_every_page_then_accounts_details_and_entities() -> None:
    api = OrganizationHealthApi(12)
    with aws_server(api) as server:
        found = polled(
            server,
            since=NOW - timedelta(hours=1),
            organization=True,
            services=["EC2"],
            regions=["us-east-1", "global"],
            categories=["scheduledChange", "issue"],
        )
    # the exact requests boto3 sent (and validated against the service model before sending)
    assert asked(server, "DescribeEventsForOrganization") == [
        {
            "filter": {
                "regions": ["us-east-1", "global"],
                "services": ["EC2"],
                "eventTypeCategories": ["scheduledChange", "issue"],
                "lastUpdatedTime": {"from": epoch(NOW - timedelta(hours=1))},
            }
        },
        {
            "filter": {
                "regions": ["us-east-1", "global"],
                "services": ["EC2"],
                "eventTypeCategories": ["scheduledChange", "issue"],
                "lastUpdatedTime": {"from": epoch(NOW - timedelta(hours=1))},
            },
            "nextToken": "page-2",
        },
    ]
    specific = [event["arn"] for event in api.events[:12]]
    public = api.events[12]["arn"]
    # the accounts of each account-specific event, none asked for the public one
    assert asked(server, "DescribeAffectedAccountsForOrganization") == [
        {"eventArn": arn} for arn in specific
    ]
    details_asked = asked(server, "DescribeEventDetailsForOrganization")
    assert [len(p["organizationEventDetailFilters"]) for p in details_asked] == [10, 3]
    assert [f for p in details_asked for f in p["organizationEventDetailFilters"]] == [
        *({"eventArn": arn, "awsAccountId": ALICE} for arn in specific),
        {"eventArn": public},  # a public event's details are asked without an account
    ]
    entities_asked = asked(server, "DescribeAffectedEntitiesForOrganization")
    assert [len(p["organizationEntityAccountFilters"]) for p in entities_asked] == [10, 3]
    assert entities_asked[0]["organizationEntityAccountFilters"][:3] == [
        {"eventArn": specific[0], "awsAccountId": ALICE},
        {"eventArn": specific[0], "awsAccountId": BOB},
        {"eventArn": specific[1], "awsAccountId": ALICE},
    ]
    assert [event.key for event in found] == [*specific, public]
    assert found[3].entities == ("i-a3",)
    assert found[3].detail == "_3 for 111111111111"
    assert (found[3].kind, found[3].status) == ("retirement", "upcoming")
    assert (found[12].kind, found[12].entities, found[12].detail) == ("issue", (), "99 for None")


def test_one_event_in_two_accounts_is_one_event_with_both_accounts_entities() -> None:
    with aws_server(OrganizationHealthApi(1)) as server:
        found = polled(server, organization=True)
    retirement = [event for event in found if event.kind == "retirement"]
    assert len(retirement) == 1
    assert retirement[0].entities == ("i-a0", "i-b0")
    assert asked(server, "DescribeEventsForOrganization")[0] == {"filter": {}}  # a first poll


def test_an_event_listed_twice_by_the_organizational_view_is_its_latest_reading() -> None:
    api = OrganizationHealthApi(1)
    again = {**api.events[0], "statusCode": "closed", "lastUpdatedTime": epoch(NOW + HOUR)}
    api.events.insert(1, again)
    with aws_server(api) as server:
        found = polled(server, organization=True)
    assert [(event.key, event.status) for event in found] == [
        (api.events[0]["arn"], "closed"),
        (api.events[2]["arn"], "open"),
    ]
    assert found[0].entities == ("i-a0", "i-b0")


@pytest.mark.parametrize("status", ["DISABLED", "PENDING"])
def test_an_organization_whose_view_is_not_enabled_is_told_how_to_enable_it(status: str) -> None:
    api = OrganizationHealthApi(1)
    api.status = status

    def refuse(operation: str, params: dict[str, Any]) -> tuple[int, object]:
        if operation == "DescribeEventsForOrganization":
            return 400, json_error("AccessDeniedException", "not enabled\nfor this organization")
        return api(operation, params)

    with aws_server(refuse) as server, pytest.raises(EventPollFailed) as raised:
        polled(server, organization=True)
    assert str(raised.value) == (
        f"aws_health: the organizational view is not enabled "
        f"(healthServiceAccessStatusForOrganization: {status}): run `aws health "
        "enable-health-service-access-for-organization` from the management account"
    )
    assert [operation for operation, _ in server.calls] == [
        "DescribeEventsForOrganization",
        "DescribeHealthServiceStatusForOrganization",
    ]


@pytest.mark.parametrize(
    "status_answer",
    [
        pytest.param((200, {"healthServiceAccessStatusForOrganization": "ENABLED"}), id="enabled"),
        pytest.param((400, json_error("AccessDeniedException", "no status")), id="unanswered"),
    ],
)
def test_a_refusal_of_an_enabled_view_or_one_that_cannot_be_told_stands_as_aws_said_it(
    status_answer: tuple[int, object],
) -> None:
    def refuse(operation: str, params: dict[str, Any]) -> tuple[int, object]:
        if operation == "DescribeEventsForOrganization":
            return 400, json_error("AccessDeniedException", "User: x is not authorized")
        return status_answer

    with aws_server(refuse) as server, pytest.raises(EventPollFailed) as raised:
        polled(server, organization=True)
    assert str(raised.value) == "aws_health: AccessDeniedException: User: x is not authorized"


def test_an_organization_without_a_support_plan_keeps_its_one_line() -> None:
    def refuse(operation: str, params: dict[str, Any]) -> tuple[int, object]:
        return 400, json_error("SubscriptionRequiredException", "")

    with aws_server(refuse) as server, pytest.raises(EventPollFailed) as raised:
        polled(server, organization=True)
    assert str(raised.value).endswith("support plan (SubscriptionRequiredException)")
    assert [operation for operation, _ in server.calls] == ["DescribeEventsForOrganization"]


@pytest.mark.parametrize(
    ("operation", "body", "said", "calls"),
    [
        pytest.param("DescribeEventsForOrganization",
                     {"events": [{**org_event(1), "statusCode": "bogus"}]},
                     "statusCode: 'bogus'", ["DescribeEventsForOrganization"], id="events"),
        pytest.param("DescribeAffectedAccountsForOrganization", {"affectedAccounts": [7]},
                     "affectedAccounts: [7]", [*["DescribeEventsForOrganization"] * 2,
                     "DescribeAffectedAccountsForOrganization"], id="accounts"),
    ],
)  # fmt: skip
def test_a_malformed_organization_answer_fails_the_poll_before_any_more_calls(
    operation: str, body: object, said: str, calls: list[str]
) -> None:
    api = OrganizationHealthApi(1)

    def answer(asked_for: str, params: dict[str, Any]) -> tuple[int, object]:
        if asked_for == operation:
            return 200, body
        return api(asked_for, params)

    with aws_server(answer) as server, pytest.raises(EventPollFailed) as raised:
        polled(server, organization=True)
    assert str(raised.value).startswith(f"aws_health: malformed answer: {said}")
    assert [asked_for for asked_for, _ in server.calls] == calls
