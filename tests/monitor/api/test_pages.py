"""The pages alerts link to (monitor/api/pages.py): ``/targets/NAME`` with its 30-day history
bars, its outages, newest first, with their causes, and what its provider told the account about
it; ``/providers/SLUG`` with its incidents, open and recent, and its account events with the
targets each names. Public like the status page, escaped, 404 for an unknown name, unknown never
shown as up; the status page links to them. On SQLite and PostgreSQL."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime, timedelta
from urllib.parse import quote, urljoin

from sqlalchemy.orm import Session, sessionmaker

from monitor.account.kinds.aws_health import from_eventbridge
from monitor.account.model import AccountEvent
from monitor.alerts.links import alert_url
from monitor.config import parse_config
from monitor.db.base import utcnow
from monitor.db.models import AccountSource, Incident, ObservedWindow, Outage, Target
from monitor.fleet.account_store import record
from monitor.status.account import month_start
from tests.monitor.account.captured import document
from tests.monitor.api.test_status_page import (
    EVIL,
    Element,
    add_provider,
    add_states,
    add_target,
    elements,
    fleet,
)
from tests.support import ApiClient

DAY = timedelta(days=1)
ARN = (
    "arn:aws:health:us-west-2::event/"
    "AWS_EC2_INSTANCE_STORE_DRIVE_PERFORMANCE_DEGRADED_90353408594353980"
)


def _day_start(now: datetime) -> datetime:
    epoch = int(now.timestamp())
    start = datetime.fromtimestamp(epoch - epoch % 86400, tz=UTC)
    return start if start < now else start - DAY


def outages(page: str) -> list[Element]:
    return list(elements(page, "tr", "data-start").values())


def bar(page: str) -> list[tuple[str, int]]:
    """The 30-day history bar as (state, days) segments, left to right."""
    history = elements(page, "div", "id")["history"]
    return [(i["data-state"], int(i["data-buckets"])) for i in history.children]


def seed_target(session: Session, now: datetime) -> Target:
    """``gpu-7``: watched for the last 10 days; down for an hour five days ago (closed), not
    usable for 40 minutes two days ago (a GPU fault, with its cause), down since 20 minutes
    ago (open); and an outage that ended 40 days ago, which the page leaves out."""
    row = add_target(session, "gpu-7", kind="dcgm")
    add_states(session, row, "down", "down", now)
    today = _day_start(now)
    session.add_all(
        [
            ObservedWindow(target_id=row.id, start=now - 10 * DAY, end=now, source="probe"),
            Outage(
                target_id=row.id,
                series="reachable",
                start=today - 5 * DAY + timedelta(hours=3),
                end=today - 5 * DAY + timedelta(hours=4),
                detail={"vantages": ["east", "west"]},
            ),
            Outage(
                target_id=row.id,
                series="usable",
                start=today - 2 * DAY + timedelta(hours=1),
                end=today - 2 * DAY + timedelta(hours=1, minutes=40),
                cause="gpu_hardware",
                detail={"vantages": ["east"]},
            ),
            Outage(target_id=row.id, series="reachable", start=now - timedelta(minutes=20)),
            Outage(
                target_id=row.id,
                series="reachable",
                start=now - 41 * DAY,
                end=now - 40 * DAY,
            ),
        ]
    )
    session.commit()
    return row


def test_a_target_page_lists_its_outages_newest_first_with_their_causes_without_a_token(
    api: ApiClient, sessions: sessionmaker[Session]
) -> None:
    now = utcnow()
    with sessions() as session:
        seed_target(session, now)
    response = api.get("/targets/gpu-7")

    assert response.status_code == 200
    assert response.headers["content-type"].startswith("text/html")
    assert response.headers["cache-control"] == "no-store"
    page = response.text
    assert elements(page, "header", "data-target")["gpu-7"].attrs["data-state"] == "down"
    rows = outages(page)
    assert [(r.attrs["data-series"], r.attrs["data-open"]) for r in rows] == [
        ("reachable", "true"),
        ("usable", "false"),
        ("reachable", "false"),
    ]
    starts = [datetime.fromisoformat(r.attrs["data-start"]) for r in rows]
    assert starts == sorted(starts, reverse=True)
    opened, unusable, closed = (r.text for r in rows)
    assert opened.startswith("down")
    assert "open" in opened.split()
    assert "so far" in opened
    assert unusable.startswith("not usable")
    assert "gpu_hardware" in unusable
    assert "vantages: east" in unusable
    assert "40 min" in unusable
    assert "1 h" in closed
    assert "vantages: east, west" in closed
    assert (now - 40 * DAY).strftime("%Y-%m-%d %H:%M") not in page  # older than the 30 days


def test_a_target_page_draws_30_days_and_time_nobody_watched_is_unknown_not_up(
    api: ApiClient, sessions: sessionmaker[Session]
) -> None:
    now = utcnow()
    with sessions() as session:
        seed_target(session, now)
    page = api.get("/targets/gpu-7").text

    segments = bar(page)
    assert sum(n for _, n in segments) == 30
    # 20 days before the watch began are unknown; the watch began mid-day, so 10 or 11 days
    # after it are seen, the last of them down (an outage is open now).
    assert segments[0][0] == "unknown"
    assert segments[0][1] in (19, 20)
    assert segments[-1] == ("down", 1)
    states = [state for state, _ in segments]
    assert "unusable" in states
    assert states.count("down") == 2
    uptime = elements(page, "td", "data-label")
    assert uptime["30 d"].text != "100.00%"


def test_a_target_nobody_has_watched_shows_unknown_and_no_data(
    api: ApiClient, sessions: sessionmaker[Session]
) -> None:
    with sessions() as session:
        add_target(session, "fresh-box")
        session.commit()
    page = api.get("/targets/fresh-box").text

    assert bar(page) == [("unknown", 30)]
    assert elements(page, "header", "data-target")["fresh-box"].attrs["data-state"] == "unknown"
    assert [cell.text for cell in elements(page, "td", "data-label").values()] == ["no data"] * 3
    assert "No outages in the last 30 days." in page


def test_an_unknown_name_answers_a_404_page(api: ApiClient) -> None:
    for path, what in (("/targets/nope", "target"), ("/providers/nope", "provider")):
        response = api.get(path)
        assert response.status_code == 404
        assert response.headers["content-type"].startswith("text/html")
        assert elements(response.text, "h1", "data-missing")[what].text == f"No {what} named “nope”"


def test_a_retired_target_keeps_its_page(api: ApiClient, sessions: sessionmaker[Session]) -> None:
    with sessions() as session:
        row = add_target(session, "old-box")
        row.retired_at = utcnow() - timedelta(hours=1)
        session.commit()
    page = api.get("/targets/old-box").text

    assert elements(page, "header", "data-target")["old-box"].attrs["data-state"] == "retired"
    assert "Its life ended" not in page  # retired by a person: no end to tell


def test_a_discovered_targets_page_says_how_its_life_ended(
    api: ApiClient, sessions: sessionmaker[Session]
) -> None:
    with sessions() as session:
        row = add_target(session, "spot-box")
        row.retired_at = utcnow() - timedelta(minutes=5)
        row.capacity, row.ended_by = "spot", "preempted"
        row.end_detail = "Server.SpotInstanceTermination: Spot instance termination"
        session.commit()
    page = api.get("/targets/spot-box").text

    [end] = elements(page, "p", "data-ended-by").values()
    assert end.attrs["data-ended-by"] == "preempted"
    assert "reclaimed by its provider" in end.text
    assert "not downtime" in end.text
    assert "Server.SpotInstanceTermination" in end.text
    assert " · spot · " in page


def test_the_status_page_links_each_target_and_provider_to_its_page_even_odd_names(
    api: ApiClient, sessions: sessionmaker[Session]
) -> None:
    odd = "rack 4/gpu-0?x#y"
    with sessions() as session:
        add_provider(session, "aws", "Amazon Web Services")
        add_target(session, odd)
        add_target(session, EVIL)
        session.commit()
    status = api.get("/").text
    base = "http://testserver/"

    for name in (odd, EVIL):
        assert name in fleet(status)
        [href] = [h for h, a in elements(status, "a", "href").items() if a.text == name]
        url = urljoin(base, href)
        followed = api.get(url)
        assert followed.status_code == 200, href
        assert elements(followed.text, "header", "data-target")[name].text.startswith(name)
        assert url == alert_url("http://testserver", {"target": name})  # where alerts link
    assert EVIL not in api.get(urljoin(base, "targets/" + quote(EVIL, safe=""))).text
    [provider] = [h for h in elements(status, "a", "href") if h == "providers/aws"]
    assert api.get(urljoin(base, provider)).status_code == 200


def test_a_provider_page_lists_open_and_recent_incidents_newest_first(
    api: ApiClient, sessions: sessionmaker[Session]
) -> None:
    now = utcnow()
    with sessions() as session:
        aws = add_provider(
            session,
            "aws",
            "Amazon Web Services",
            {"last_polled_at": now, "last_success_at": now},
        )
        session.add_all(
            [
                _incident(aws.id, "open", "EC2 p5 degraded", now - timedelta(hours=2), None),
                _incident(aws.id, "recent", "S3 errors", now - 3 * DAY, now - 3 * DAY + DAY / 4),
                _incident(aws.id, "old", "Ancient thing", now - 50 * DAY, now - 49 * DAY),
                _incident(aws.id, "elsewhere", "Other region", now - DAY, None, relevant=False),
                _incident(
                    aws.id, "evil", "Bad link", now - 4 * DAY, now - 4 * DAY, url="javascript:x()"
                ),
            ]
        )
        session.commit()
    response = api.get("/providers/aws")

    assert response.status_code == 200
    page = response.text
    header = elements(page, "header", "data-provider")["aws"]
    assert header.attrs["data-state"] == "incident"
    shown = [r.text for r in elements_in_order(page)]
    assert [s.split(" ", 1)[1].split(" ")[0] for s in shown] == ["EC2", "S3", "Bad"]
    assert "open" in shown[0]
    assert "after 6 h" in shown[1]
    assert '<a href="https://status.aws/open" rel="noopener noreferrer">EC2 p5 degraded</a>' in page
    assert "javascript:" not in page
    assert "Ancient thing" not in page
    assert "Other region" not in page


def elements_in_order(page: str) -> list[Element]:
    from tests.monitor.api.test_status_page import _Grab

    grab = _Grab(("tr",), "data-open")
    grab.feed(page)
    return grab.found


def _incident(
    provider_id: int,
    source_id: str,
    title: str,
    started: datetime,
    resolved: datetime | None,
    *,
    relevant: bool = True,
    url: str | None = None,
) -> Incident:
    return Incident(
        provider_id=provider_id,
        source_id=source_id,
        title=title,
        status="resolved" if resolved else "investigating",
        impact="major",
        started_at=started,
        resolved_at=resolved,
        first_seen_at=started,
        url=url or f"https://status.aws/{source_id}",
        relevant=relevant,
        content_hash=source_id,
    )


def test_a_kind_whose_usable_series_mirrors_reachability_lists_each_outage_once(
    api: ApiClient, sessions: sessionmaker[Session]
) -> None:
    now = utcnow()
    with sessions() as session:
        row = add_target(session, "plain-tcp")  # tcp: usable only mirrors reachable
        start = now - timedelta(minutes=5)
        session.add_all(
            [
                Outage(target_id=row.id, series="reachable", start=start),
                Outage(target_id=row.id, series="usable", start=start),
            ]
        )
        session.commit()
    page = api.get("/targets/plain-tcp").text

    assert [(r.attrs["data-series"], r.attrs["data-open"]) for r in outages(page)] == [
        ("reachable", "true")
    ]


# --------------------------------------------------------------------------- account events


def account_events(page: str, table: str) -> list[Element]:
    """The rows of an account event table (``account-events``: upcoming and open;
    ``account-events-closed``: closed this month), in page order."""
    from tests.monitor.api.test_status_page import _Grab

    start = page.find(f'<table id="{table}"')
    if start < 0:
        return []
    grab = _Grab(("tr",), "data-event")
    grab.feed(page[start : page.index("</table>", start)])
    return grab.found


def retirement(now: datetime, instance: str = "i-0abc") -> AccountEvent:
    return AccountEvent(
        provider="aws",
        source="ec2_events",
        key=f"{instance}:instance-event-1",
        kind="retirement",
        status="upcoming",
        starts_at=now + timedelta(days=14, minutes=1),
        updated_at=now - timedelta(hours=1),
        region="us-east-1",
        title="instance-retirement",
        detail="The instance is running on degraded hardware",
        entities=(instance,),
        raw_type="instance-retirement",
    )


def this_month(now: datetime) -> datetime:
    """An instant of the running month before ``now``."""
    start = month_start(now)
    return start + (now - start) / 2


def seed_account_events(session: Session, now: datetime) -> None:
    """``gpu-7`` (instance i-0abc) and ``gpu-8`` (i-abcd1111) on aws: a retirement ahead for
    gpu-7, AWS's published EventBridge issue for gpu-8 (open), a maintenance closed this month
    and one closed last month on gpu-7, an EC2 event of another account's instance, and an
    Azure event; all stored as the store stores them."""
    seven = add_target(session, "gpu-7")
    seven.external_id = "i-0abc"
    pushed = from_eventbridge(document("1-aws-health-ec2-instance-store-issue.json"))
    eight = add_target(session, "gpu-8")
    eight.external_id = pushed.entities[0]
    session.flush()
    done = this_month(now)
    ahead = retirement(now)
    record(
        session,
        [
            ahead,
            replace(
                ahead,
                key="i-0abc:maint-done",
                kind="scheduled_maintenance",
                status="closed",
                starts_at=done - timedelta(hours=1),
                ends_at=done,
                title="system-reboot",
                detail="[Completed] Scheduled system reboot",
            ),
            replace(
                ahead,
                key="i-0abc:maint-last-month",
                kind="scheduled_maintenance",
                status="closed",
                starts_at=month_start(now) - timedelta(days=3),
                ends_at=month_start(now) - timedelta(days=2),
                title="Old maintenance",
            ),
            retirement(now, "i-0ther"),
            replace(ahead, provider="azure", key="azure-1", entities=("/subscriptions/s/vm",)),
        ],
        now - timedelta(minutes=5),
    )
    record(session, [pushed], now - timedelta(minutes=4), "push")
    record(session, [pushed], now - timedelta(minutes=3), "push")  # delivered twice: one event
    session.commit()


def test_a_target_page_shows_its_account_events_upcoming_and_open_then_closed_this_month(
    api: ApiClient, sessions: sessionmaker[Session]
) -> None:
    now = utcnow()
    with sessions() as session:
        seed_account_events(session, now)
    page = api.get("/targets/gpu-7").text

    [ahead] = account_events(page, "account-events")
    assert (ahead.attrs["data-kind"], ahead.attrs["data-status"]) == ("retirement", "upcoming")
    assert ahead.attrs["data-event"] == "i-0abc:instance-event-1"
    text = ahead.text
    assert text.startswith("retirement upcoming starts ")
    assert "(in 14 d)" in text
    assert "instance-retirement" in text  # the provider's words: its title and its detail
    assert "The instance is running on degraded hardware" in text
    assert "aws · i-0abc:instance-event-1" in text  # the provider's key
    assert "ec2_events · via poll" in text
    assert "gpu-7" in text
    [closed] = account_events(page, "account-events-closed")
    assert closed.attrs["data-event"] == "i-0abc:maint-done"
    assert closed.text.startswith("maintenance closed ")
    assert "[Completed] Scheduled system reboot" in closed.text
    assert "Old maintenance" not in page  # closed last month
    assert "i-0ther" not in page  # another instance's
    assert "azure-1" not in page
    # the events explain; they never change what the page says of the target
    assert elements(page, "header", "data-target")["gpu-7"].attrs["data-state"] == "unknown"


def test_a_target_page_shows_a_pushed_provider_issue_once_however_often_delivered(
    api: ApiClient, sessions: sessionmaker[Session]
) -> None:
    now = utcnow()
    with sessions() as session:
        seed_account_events(session, now)
    page = api.get("/targets/gpu-8").text

    [issue] = account_events(page, "account-events")
    # AWS's sample has no statusCode and starts after its delivery's time: upcoming, long due
    assert (issue.attrs["data-kind"], issue.attrs["data-status"]) == ("issue", "upcoming")
    assert issue.attrs["data-event"] == ARN
    assert "was due 2016-06-05 15:10 UTC" in issue.text
    assert "EC2 instance store drive performance degraded" in issue.text
    assert "A description of the event will be provided here" in issue.text
    assert "via push · read 2 times" in issue.text
    assert account_events(page, "account-events-closed") == []
    assert "None closed this month." in page


def test_a_target_page_without_account_events_says_so(
    api: ApiClient, sessions: sessionmaker[Session]
) -> None:
    with sessions() as session:
        add_target(session, "quiet-box")
        session.commit()
    page = api.get("/targets/quiet-box").text

    assert account_events(page, "account-events") == []
    assert "No maintenance, retirement, preemption or issue upcoming or open on it." in page
    assert "None closed this month." in page


def test_a_provider_page_lists_its_account_events_with_the_targets_each_names(
    api: ApiClient, sessions: sessionmaker[Session]
) -> None:
    now = utcnow()
    with sessions() as session:
        add_provider(session, "aws", "Amazon Web Services")
        add_provider(session, "azure", "Microsoft Azure")
        seed_account_events(session, now)
        region = add_target(session, "gpu-east")  # aws, us-east-1
        region.external_id = "i-0east"
        record(
            session,
            [
                replace(
                    retirement(now),
                    key="regional",
                    kind="issue",
                    status="open",
                    starts_at=now - timedelta(hours=2),
                    entities=(),
                    title="EC2 API errors",
                ),
                replace(
                    retirement(now),
                    key="billing",
                    kind="issue",
                    region="global",
                    entities=(),
                    title="Your bill",
                ),
            ],
            now,
        )
        session.commit()
    page = api.get("/providers/aws").text
    base = "http://testserver/providers/aws"

    rows = account_events(page, "account-events")
    # open ones first, then upcoming ones, soonest (here: long overdue) first
    assert [r.attrs["data-event"] for r in rows[:2]] == ["regional", ARN]
    assert {r.attrs["data-event"] for r in rows[2:]} == {
        "i-0abc:instance-event-1",
        "i-0ther:instance-event-1",
        "billing",
    }
    by_key = {r.attrs["data-event"]: r.text for r in rows}
    assert "its region us-east-1: gpu-7, gpu-8, gpu-east" in by_key["regional"]
    assert "the whole account (names no target)" in by_key["billing"]
    assert "no target of yours" in by_key["i-0ther:instance-event-1"]
    assert "azure-1" not in page  # another provider's
    links = [h for h, a in elements(page, "a", "href").items() if a.text == "gpu-7"]
    assert links == ["../targets/gpu-7"]
    assert urljoin(base, links[0]) == "http://testserver/targets/gpu-7"
    [closed] = account_events(page, "account-events-closed")
    assert closed.attrs["data-event"] == "i-0abc:maint-done"
    assert api.get("/providers/azure").text.count('data-event="azure-1"') == 1


def test_a_provider_page_tells_its_account_event_sources_and_never_calls_silence_fine(
    api: ApiClient, sessions: sessionmaker[Session]
) -> None:
    now = utcnow()
    with sessions() as session:
        add_provider(session, "aws", "Amazon Web Services")
        add_provider(session, "azure", "Microsoft Azure")
        add_provider(session, "gcp", "Google Cloud")
        session.add(
            AccountSource(
                name="ec2",
                kind="ec2_events",
                last_polled_at=now,
                last_success_at=now - timedelta(hours=3),
                consecutive_failures=12,
                last_error="ec2_events us-east-1: AuthFailure",
            )
        )
        session.commit()
    api.app.state.slamon.config = parse_config(  # type: ignore[attr-defined]
        "account_events:\n"
        "  - {name: health, kind: aws_health}\n"
        "  - {name: ec2, kind: ec2_events, regions: [us-east-1]}\n"
        "  - {name: vms, kind: azure_resource_health, subscription: s-1}\n"
    )
    page = api.get("/providers/aws").text

    sources = elements(page, "li", "data-account-source")
    assert {name: s.attrs["data-state"] for name, s in sources.items()} == {
        "health": "unknown",
        "ec2": "failing",
    }
    assert "never polled yet" in sources["health"].text
    assert "12 failed polls in a row" in sources["ec2"].text
    assert "AuthFailure" in sources["ec2"].text
    assert "that slamon could read (a source above is not polling cleanly)" in page
    azure = api.get("/providers/azure").text
    assert list(elements(azure, "li", "data-account-source")) == ["vms"]
    gcp = api.get("/providers/gcp").text  # no source of it: only a push could have told
    assert elements(gcp, "li", "data-account-source") == {}
    assert "that was pushed or reported (no account event source of it is configured)" in gcp


def test_account_event_words_are_escaped_on_the_pages(
    api: ApiClient, sessions: sessionmaker[Session]
) -> None:
    now = utcnow()
    with sessions() as session:
        add_provider(session, "aws", "Amazon Web Services")
        box = add_target(session, "gpu-7")
        box.external_id = "i-0abc"
        session.flush()
        record(session, [replace(retirement(now), title=EVIL, detail=EVIL, key=EVIL)], now)
        session.commit()
    for path in ("/targets/gpu-7", "/providers/aws", "/"):
        page = api.get(path).text
        assert EVIL not in page, path
        assert "&lt;script&gt;" in page, path
