"""The pages alerts link to (monitor/api/pages.py): ``/targets/NAME`` with its 30-day history
bars and its outages, newest first, with their causes; ``/providers/SLUG`` with its incidents,
open and recent. Public like the status page, escaped, 404 for an unknown name, unknown never
shown as up; the status page links to them. On SQLite and PostgreSQL."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from urllib.parse import quote, urljoin

from sqlalchemy.orm import Session, sessionmaker

from monitor.alerts.links import alert_url
from monitor.db.base import utcnow
from monitor.db.models import Incident, ObservedWindow, Outage, Target
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
