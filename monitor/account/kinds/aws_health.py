"""``aws_health``: the AWS Health API's account events (``pip install 'slamon[aws]'``).

One poll reads DescribeEvents page after page (filtered by the events' regions, services,
categories, and the checkpoint as ``lastUpdatedTimes.from``), then each event's description with
DescribeEventDetails and the entities it names with DescribeAffectedEntities, ten event ARNs a
call (both APIs' limit). The Health API answers in us-east-1 (its global endpoint); an account
without a Business, Enterprise On-Ramp or Enterprise support plan is refused with
``SubscriptionRequiredException``, which fails the poll with one line saying so. Anything else
that fails (unreachable, unauthorized, throttled, a malformed answer) fails the whole poll with
one line: the checkpoint advances only after a clean one.

With ``organization: true`` the source reads the organizational view instead, from the
management (or a delegated administrator) account: DescribeEventsForOrganization page after page
(``filter.lastUpdatedTime.from`` the checkpoint), then, for each event not ``PUBLIC``, the
accounts it affects (DescribeAffectedAccountsForOrganization), its description
(DescribeEventDetailsForOrganization, ten ``{eventArn, awsAccountId}`` a call: a public event
without an account, an account-specific one with the first account it affects) and its entities
in every account (DescribeAffectedEntitiesForOrganization, ten
``organizationEntityAccountFilters`` a call). An event in several accounts is still one event,
keyed by its ARN; its entities are the union of every account's. An organization whose view is
not enabled fails the poll with one line saying how to enable it (AWS documents no error code
for it: a refused DescribeEventsForOrganization is explained by
DescribeHealthServiceStatusForOrganization where that answers).

The answers are turned into events by pure functions (:func:`events`, :func:`event`), tested on
a recorded DescribeEvents answer (tests/fixtures/account/), and so is an EventBridge delivery of
the same event (:func:`from_eventbridge`), for the push endpoint.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from datetime import UTC, datetime
from typing import Any, Literal, TypeVar

from pydantic import Field

from monitor.account.kind import AccountKind, EventPollContext, SourceOptions
from monitor.account.kinds._aws import RETRIES, Region, client_error, client_error_code, failed
from monitor.account.model import (
    AccountEvent,
    EventStatus,
    aws_health_kind,
    aws_health_status,
    first_line,
    optional_text,
    text_field,
    time_field,
)

NAME = "aws_health"
API_REGION = "us-east-1"  # the Health API's global endpoint
BATCH = 10  # DescribeEventDetails and DescribeAffectedEntities take at most ten event ARNs
# and their organization forms at most ten {eventArn, awsAccountId} filters
SUPPORT_PLAN = (
    "the AWS Health API needs a Business, Enterprise On-Ramp or Enterprise support plan "
    "(SubscriptionRequiredException)"
)
ENABLE_VIEW = (
    "run `aws health enable-health-service-access-for-organization` from the management account"
)
THROTTLED = frozenset({"ThrottlingException", "TooManyRequestsException"})
Batched = TypeVar("Batched")
Category = Literal["issue", "accountNotification", "scheduledChange", "investigation"]


class AwsHealthOptions(SourceOptions):
    regions: tuple[Region | Literal["global"], ...] = ()  # the events' regions; empty: all
    services: tuple[str, ...] = ()  # EC2, EBS …; empty: all
    categories: tuple[Category, ...] = ()  # empty: all
    profile: str | None = None  # a named profile of the shared credentials files
    endpoint_url: str | None = Field(default=None, pattern=r"^https?://")
    # the organizational view, read from the management or a delegated administrator account
    organization: bool = False


class MalformedEvent(ValueError):
    """An event document that is not the shape AWS documents; the message names the field."""


class ViewNotEnabled(Exception):
    """The organization's view is not enabled; the message is its
    ``healthServiceAccessStatusForOrganization``."""


def list_events(options: AwsHealthOptions, context: EventPollContext) -> Sequence[AccountEvent]:
    # loaded by a process that polls aws_health, not by every one that reads the config
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
    try:
        session = boto3.Session(profile_name=options.profile)
        client = session.client(
            "health", region_name=API_REGION, endpoint_url=options.endpoint_url, config=config
        )
        try:
            if not options.organization:
                return _poll(client, options, context.since)
            try:
                return _poll_organization(client, options, context.since)
            except ClientError as exc:
                if exc.operation_name == "DescribeEventsForOrganization":
                    _explain_refusal(client, exc, ClientError)
                raise
        finally:
            client.close()
    except ClientError as exc:
        if client_error_code(exc) == "SubscriptionRequiredException":
            raise failed(NAME, SUPPORT_PLAN) from None
        raise failed(NAME, client_error(exc)) from None
    except ViewNotEnabled as exc:
        said = f"the organizational view is not enabled ({exc}): {ENABLE_VIEW}"
        raise failed(NAME, said) from None
    except (BotoCoreError, ResponseParserError) as exc:  # the latter is no BotoCoreError
        raise failed(NAME, f"{type(exc).__name__}: {exc}") from None
    except MalformedEvent as exc:
        raise failed(NAME, f"malformed answer: {exc}") from None


def _poll(client: Any, options: AwsHealthOptions, since: datetime | None) -> list[AccountEvent]:
    pages = list(
        client.get_paginator("describe_events").paginate(filter=event_filter(options, since))
    )
    arns = [found.key for found in events(pages)]  # a malformed page fails before more calls
    descriptions: dict[str, str] = {}
    entities: dict[str, list[str]] = {}
    for batch in _batches(arns):
        descriptions.update(details(client.describe_event_details(eventArns=batch)))
        paginator = client.get_paginator("describe_affected_entities")
        for page in paginator.paginate(filter={"eventArns": batch}):
            for arn, values in affected(page).items():
                entities.setdefault(arn, []).extend(values)
    return events(pages, descriptions, entities)


def _poll_organization(
    client: Any, options: AwsHealthOptions, since: datetime | None
) -> list[AccountEvent]:
    paginator = client.get_paginator("describe_events_for_organization")
    pages = list(paginator.paginate(filter=organization_event_filter(options, since)))
    found = events(pages)  # a malformed page fails before more calls
    public = public_events(pages)
    accounts: dict[str, list[str]] = {}
    for arn in dict.fromkeys(listed.key for listed in found):
        if arn not in public:
            paginator = client.get_paginator("describe_affected_accounts_for_organization")
            accounts[arn] = [
                account
                for page in paginator.paginate(eventArn=arn)
                for account in affected_accounts(page)
            ]
    descriptions: dict[str, str] = {}
    for batch in _batches(detail_filters([e.key for e in found], accounts)):
        answer = client.describe_event_details_for_organization(
            organizationEventDetailFilters=batch
        )
        descriptions.update(details(answer))
    entities: dict[str, list[str]] = {}
    for batch in _batches(entity_filters(accounts)):
        paginator = client.get_paginator("describe_affected_entities_for_organization")
        for page in paginator.paginate(organizationEntityAccountFilters=batch):
            for arn, values in affected(page).items():
                entities.setdefault(arn, []).extend(values)
    return one_per_arn(events(pages, descriptions, entities))


def one_per_arn(found: Sequence[AccountEvent]) -> list[AccountEvent]:
    """``found`` with one event per ARN, its latest reading, in the order first seen (pure): an
    event the organizational view lists more than once is still one event."""
    latest: dict[str, AccountEvent] = {}
    for item in found:
        seen = latest.get(item.key)
        if seen is None or _reading(item) > _reading(seen):
            latest[item.key] = item
    return list(latest.values())


def _reading(found: AccountEvent) -> datetime:
    return found.updated_at or datetime.min.replace(tzinfo=UTC)


def _explain_refusal(client: Any, refused: Exception, client_error: type[Exception]) -> None:
    """Raise :class:`ViewNotEnabled` where DescribeEventsForOrganization was refused because the
    organization's view is not enabled, as DescribeHealthServiceStatusForOrganization says;
    return where it is, or where that cannot be told (the refusal then stands as it is)."""
    if client_error_code(refused) in {"SubscriptionRequiredException", *THROTTLED}:
        return
    try:
        answer = client.describe_health_service_status_for_organization()
    except client_error:
        return
    status = str(answer.get("healthServiceAccessStatusForOrganization") or "")
    if status and status != "ENABLED":
        raise ViewNotEnabled(f"healthServiceAccessStatusForOrganization: {status}")


def organization_event_filter(options: AwsHealthOptions, since: datetime | None) -> dict[str, Any]:
    """DescribeEventsForOrganization's ``filter`` (an ``OrganizationEventFilter``) for
    ``options`` and the checkpoint ``since``: ``lastUpdatedTime`` is one range, not a list."""
    wanted = event_filter(options, None)
    if since is not None:
        wanted["lastUpdatedTime"] = {"from": since}
    return wanted


def public_events(pages: Sequence[Mapping[str, Any]]) -> set[str]:
    """The ARNs of DescribeEventsForOrganization's ``pages`` whose ``eventScopeCode`` is
    ``PUBLIC``: they affect no account of their own (pure)."""
    return {
        str(raw.get("arn"))
        for page in pages
        for raw in page.get("events") or []
        if raw.get("eventScopeCode") == "PUBLIC"
    }


def affected_accounts(page: Mapping[str, Any]) -> list[str]:
    """The account ids of a DescribeAffectedAccountsForOrganization page (pure). Raises
    :class:`MalformedEvent` where ``affectedAccounts`` is not a list of account ids."""
    found = page.get("affectedAccounts") or []
    if not isinstance(found, list) or not all(isinstance(a, str) and a for a in found):
        raise MalformedEvent(f"affectedAccounts: {found!r}, not a list of account ids")
    return list(found)


def detail_filters(
    arns: Sequence[str], accounts: Mapping[str, Sequence[str]]
) -> list[dict[str, str]]:
    """DescribeEventDetailsForOrganization's ``organizationEventDetailFilters`` (pure): one per
    event, a public event's (not in ``accounts``) without an account, an account-specific one's
    with the first account it affects (its description is the event's, whichever account asks);
    an account-specific event that affects no account has no description to ask for."""
    found = []
    for arn in dict.fromkeys(arns):
        if arn not in accounts:
            found.append({"eventArn": arn})
        elif accounts[arn]:
            found.append({"eventArn": arn, "awsAccountId": accounts[arn][0]})
    return found


def entity_filters(accounts: Mapping[str, Sequence[str]]) -> list[dict[str, str]]:
    """DescribeAffectedEntitiesForOrganization's ``organizationEntityAccountFilters`` (pure): an
    event's ARN with each account it affects."""
    return [
        {"eventArn": arn, "awsAccountId": account}
        for arn, ids in accounts.items()
        for account in dict.fromkeys(ids)
    ]


def event_filter(options: AwsHealthOptions, since: datetime | None) -> dict[str, Any]:
    """DescribeEvents' ``filter`` for ``options`` and the checkpoint ``since``."""
    wanted: dict[str, Any] = {}
    if options.regions:
        wanted["regions"] = list(options.regions)
    if options.services:
        wanted["services"] = list(options.services)
    if options.categories:
        wanted["eventTypeCategories"] = list(options.categories)
    if since is not None:
        wanted["lastUpdatedTimes"] = [{"from": since}]
    return wanted


def _batches(items: Sequence[Batched]) -> Iterator[list[Batched]]:
    for start in range(0, len(items), BATCH):
        yield list(items[start : start + BATCH])


def details(answer: Mapping[str, Any]) -> dict[str, str]:
    """Event ARN -> its latest description, from a DescribeEventDetails answer (pure); an ARN
    in its ``failedSet`` has none."""
    found = {}
    for item in answer.get("successfulSet") or []:
        arn = (item.get("event") or {}).get("arn")
        if arn:
            found[str(arn)] = str((item.get("eventDescription") or {}).get("latestDescription", ""))
    return found


def affected(page: Mapping[str, Any]) -> dict[str, list[str]]:
    """Event ARN -> the entity values it names, from a DescribeAffectedEntities page (pure)."""
    found: dict[str, list[str]] = {}
    for entity in page.get("entities") or []:
        arn, value = entity.get("eventArn"), entity.get("entityValue")
        if arn and value:
            found.setdefault(str(arn), []).append(str(value))
    return found


def events(
    pages: Sequence[Mapping[str, Any]],
    descriptions: Mapping[str, str] | None = None,
    entities: Mapping[str, Sequence[str]] | None = None,
) -> list[AccountEvent]:
    """The events of DescribeEvents' ``pages`` with their descriptions and entities (pure).
    Raises :class:`MalformedEvent` for an event that is not AWS' shape."""
    descriptions = descriptions or {}
    entities = entities or {}
    found = []
    for page in pages:
        for raw in page.get("events") or []:
            arn = str(raw.get("arn") or "")
            found.append(event(raw, descriptions.get(arn, ""), tuple(entities.get(arn, ()))))
    return found


def event(
    raw: Mapping[str, Any], description: str = "", entities: Sequence[str] = ()
) -> AccountEvent:
    """One event of a DescribeEvents answer (``events[]``, times as datetimes or text)."""
    code = text_field(raw, "eventTypeCode", MalformedEvent)
    return AccountEvent(
        provider="aws",
        source=NAME,
        key=text_field(raw, "arn", MalformedEvent),
        kind=aws_health_kind(code, text_field(raw, "eventTypeCategory", MalformedEvent)),
        status=_status(raw.get("statusCode")),
        starts_at=time_field(raw, "startTime", MalformedEvent),
        ends_at=time_field(raw, "endTime", MalformedEvent),
        updated_at=time_field(raw, "lastUpdatedTime", MalformedEvent),
        region=str(raw.get("region") or "") or None,
        service=str(raw.get("service") or "") or None,
        title=title(code),
        detail=first_line(description),
        entities=tuple(dict.fromkeys(entities)),
        raw_type=code,
    )


def from_eventbridge(document: Mapping[str, Any]) -> AccountEvent:
    """The event of an EventBridge delivery (``source: aws.health``, ``detail-type: AWS Health
    Event``), pure. Its region is ``detail.eventRegion``, the event's, not the envelope's (the
    region the rule delivered from); a delivery without one takes the region its event ARN names.
    Without a ``statusCode`` an event with an ``endTime`` is closed, one starting after the
    delivery's ``time`` upcoming, else open. Raises :class:`MalformedEvent` naming the field."""
    if not isinstance(document, Mapping):
        raise MalformedEvent("the document: not an object")
    for name, wanted in (("source", "aws.health"), ("detail-type", "AWS Health Event")):
        if document.get(name) != wanted:
            raise MalformedEvent(f"{name}: {document.get(name)!r}, not {wanted!r}")
    detail = document.get("detail")
    if not isinstance(detail, Mapping):
        raise MalformedEvent("detail: not an object")
    try:
        arn = text_field(detail, "eventArn", MalformedEvent)
        code = text_field(detail, "eventTypeCode", MalformedEvent)
        category = text_field(detail, "eventTypeCategory", MalformedEvent)
        starts = time_field(detail, "startTime", MalformedEvent)
        ends = time_field(detail, "endTime", MalformedEvent)
        sent = time_field(document, "time", MalformedEvent)
        updated = time_field(detail, "lastUpdatedTime", MalformedEvent) or sent
        region = optional_text(detail, "eventRegion", MalformedEvent)
        service = optional_text(detail, "service", MalformedEvent)
        status = _pushed_status(detail.get("statusCode"), starts, ends, sent)
    except MalformedEvent as exc:
        raise MalformedEvent(f"detail.{exc}") from None
    return AccountEvent(
        provider="aws",
        source=NAME,
        key=arn,
        kind=aws_health_kind(code, category),
        status=status,
        starts_at=starts,
        ends_at=ends,
        updated_at=updated,
        region=region or _arn_region(arn),
        service=service or None,
        title=title(code),
        detail=first_line(_description(_objects(detail, "eventDescription"))),
        entities=_pushed_entities(detail),
        raw_type=code,
    )


def title(code: str) -> str:
    """A title from the event type code: ``AWS_EC2_INSTANCE_RETIREMENT_SCHEDULED`` reads
    ``EC2 instance retirement scheduled``."""
    words = code.removeprefix("AWS_").split("_")
    return " ".join([words[0], *(word.lower() for word in words[1:])]) if words else code


def _status(value: object) -> EventStatus:
    try:
        return aws_health_status(str(value))
    except ValueError as exc:
        raise MalformedEvent(str(exc)) from None


def _pushed_status(
    value: object, starts: datetime | None, ends: datetime | None, sent: datetime | None
) -> EventStatus:
    if value is not None:
        try:
            return aws_health_status(str(value))
        except ValueError as exc:
            raise MalformedEvent(str(exc)) from None
    if ends is not None:
        return "closed"
    if starts is not None and sent is not None and starts > sent:
        return "upcoming"
    return "open"


def _arn_region(arn: str) -> str | None:
    # arn:aws:health:us-west-2::event/…
    parts = arn.split(":")
    return parts[3] or None if len(parts) > 3 else None


def _description(value: list[Mapping[str, Any]]) -> str:
    """The English description of an EventBridge delivery's ``eventDescription`` list."""
    texts = {
        str(item.get("language", "")): str(item.get("latestDescription", "")) for item in value
    }
    return texts.get("en_US") or next(iter(texts.values()), "")


def _pushed_entities(detail: Mapping[str, Any]) -> tuple[str, ...]:
    raw = _objects(detail, "affectedEntities")
    values = [str(item["entityValue"]) for item in raw if item.get("entityValue")]
    return tuple(dict.fromkeys(values))


def _objects(detail: Mapping[str, Any], name: str) -> list[Mapping[str, Any]]:
    """An optional list of objects of a delivery's ``detail`` (absent: none; null is not a
    list)."""
    if name not in detail:
        return []
    value = detail[name]
    if not isinstance(value, list) or not all(isinstance(item, Mapping) for item in value):
        raise MalformedEvent(f"detail.{name}: not a list of objects")
    return value


KIND = AccountKind(
    name=NAME,
    provider="aws",
    options=AwsHealthOptions,
    list_events=list_events,
    requires=("boto3", "botocore"),  # botocore: its exceptions and Config
    extra="aws",
)
