"""The status page at `/`: seeded state shows up as it is (reachable told from usable, unknown
never shown as up), escaped, without a token, on SQLite and PostgreSQL."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from html.parser import HTMLParser

import pytest
from sqlalchemy import event
from sqlalchemy.orm import Session, sessionmaker

from monitor.api.status_page import (
    accepts_gzip,
    bar_label,
    duration,
    render,
    segment,
    uptime_text,
    window,
)
from monitor.config import Config
from monitor.config.models import PoolConfig, TargetConfig
from monitor.db.base import utcnow
from monitor.db.models import (
    Alert,
    Feed,
    Incident,
    ObservedWindow,
    Outage,
    ProbeRollup,
    Provider,
    Target,
    TargetState,
    Vantage,
)
from monitor.sla.months import month_period
from monitor.status.history import Bucket
from monitor.status.view import SlaView, StatusView, build_view
from monitor.targets import upsert_target
from tests.support import ApiClient

EVIL = '<script>alert("pwned")</script>'
HALF_HOUR = timedelta(minutes=30)


# --------------------------------------------------------------------------- reading the page


@dataclass
class Element:
    attrs: dict[str, str]
    text: str = ""
    children: list[dict[str, str]] = field(default_factory=list)  # attributes of inner <i>s


class _Grab(HTMLParser):
    """Every element named in ``tags`` (carrying ``attr``, when given), in document order: its
    attributes, text and inner ``<i>``s."""

    def __init__(self, tags: tuple[str, ...], attr: str | None) -> None:
        super().__init__()
        self.tags, self.attr = tags, attr
        self.found: list[Element] = []
        self.open: list[tuple[str, Element, int]] = []  # (tag, element, depth) being read
        self.parts: dict[int, list[str]] = {}

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        values = {k: v or "" for k, v in attrs}
        for i, (open_tag, element, depth) in enumerate(self.open):
            if tag == open_tag:
                self.open[i] = (open_tag, element, depth + 1)
            if tag == "i":
                element.children.append(values)
        if tag in self.tags and (self.attr is None or self.attr in values):
            element = Element(values)
            self.found.append(element)
            self.open.append((tag, element, 1))
            self.parts[id(element)] = []

    def handle_endtag(self, tag: str) -> None:
        still = []
        for open_tag, element, depth in self.open:
            if tag == open_tag and depth == 1:
                element.text = " ".join("".join(self.parts.pop(id(element))).split())
            else:
                still.append((open_tag, element, depth - (tag == open_tag)))
        self.open = still

    def handle_data(self, data: str) -> None:
        for _, element, _ in self.open:
            self.parts[id(element)].append(data)


def elements(page: str, tag: str, attr: str) -> dict[str, Element]:
    """``tag`` elements with ``attr``, by that attribute's value."""
    grab = _Grab((tag,), attr)
    grab.feed(page)
    return {e.attrs[attr]: e for e in grab.found}


def first_row(page: str, starting: str, tags: tuple[str, ...] = ("tr",)) -> str:
    """The text of the first ``tags`` element whose text (or text after its first word: a row
    may lead with its state) starts with ``starting``. Read by text alone, so that it reads
    the page before and after it carried data attributes."""
    grab = _Grab(tags, None)
    grab.feed(page)
    for element in grab.found:
        text = element.text
        if text.startswith(starting) or text.partition(" ")[2].startswith(starting):
            return text
    raise AssertionError(f"no {tags} row starts with {starting!r}")


def fleet(page: str) -> dict[str, Element]:
    return elements(page, "tr", "data-target")


def bar(row: Element) -> list[tuple[str, int]]:
    """A fleet row's history bar as (state, buckets) segments, left to right."""
    return [(i["data-state"], int(i["data-buckets"])) for i in row.children]


def when(at: datetime) -> str:
    return at.strftime("%Y-%m-%d %H:%M UTC")


# --------------------------------------------------------------------------- seeding


def add_target(
    session: Session, name: str, pool: str | None = "h100", kind: str = "tcp", provider="aws"
) -> Target:  # type: ignore[no-untyped-def]
    url = "tcp://h:22" if kind == "tcp" else "http://h:9400/metrics"
    row = upsert_target(
        session,
        TargetConfig(name=name, kind=kind, url=url, provider=provider, pool=pool),  # type: ignore[arg-type]
        "config",
    )
    row.region = "us-east-1"
    row.created_at = utcnow() - timedelta(days=60)
    session.flush()
    return row


def add_states(
    session: Session,
    target: Target,
    reachable: str,
    usable: str | None,
    probed_at: datetime,
    vantage: str = "eu-west",
) -> None:
    """The quorum's verdict (vantage ``*``) and one vantage's matching rows, as the probe path
    writes them."""
    series = [("reachable", reachable)] + ([("usable", usable)] if usable else [])
    for name, state in series:
        session.add_all(
            [
                TargetState(target_id=target.id, vantage="*", series=name, state=state, detail={}),
                TargetState(
                    target_id=target.id,
                    vantage=vantage,
                    series=name,
                    state=state,
                    last_probe_at=probed_at,
                    detail={},
                ),
            ]
        )


def add_provider(session: Session, slug: str, name: str, *feeds: dict[str, object]) -> Provider:
    provider = Provider(slug=slug, name=name, regions=[], components=[])
    session.add(provider)
    session.flush()
    for i, values in enumerate(feeds):
        session.add(
            Feed(provider_id=provider.id, kind="statuspage", url=f"https://{slug}/{i}", **values)
        )
    return provider


def seed(session: Session, now: datetime | None = None) -> None:
    """A small deployment as of ``now``: providers in every feed condition, a usable, an
    unusable, a stale and a never-probed target in pool h100, two vantages (one blind) and
    alerts."""
    now = now or utcnow()
    aws = add_provider(
        session,
        "aws",
        "Amazon Web Services",
        {
            "last_polled_at": now - timedelta(minutes=2),
            "last_success_at": now - timedelta(minutes=2),
        },
    )
    add_provider(session, "quietcloud", "Quiet Cloud")
    add_provider(session, "lambda", "Lambda Labs", {})
    add_provider(
        session,
        "coreweave",
        "CoreWeave",
        {
            "last_polled_at": now - timedelta(minutes=1),
            "last_success_at": now - timedelta(hours=3),
            "consecutive_failures": 90,
            "last_error": "ConnectTimeout: status.coreweave.com",
        },
    )
    add_provider(
        session,
        "finecloud",
        "Fine Cloud",
        {
            "last_polled_at": now - timedelta(minutes=1),
            "last_success_at": now - timedelta(minutes=1),
        },
    )
    session.add_all(
        [
            _incident(aws.id, "open-1", "EC2 p5 capacity degraded", "https://status.aws/1", now),
            _incident(aws.id, "open-2", "Link that is not http", "javascript:alert(1)", now),
            _incident(aws.id, "done", "Old resolved thing", None, now, resolved=True),
        ]
    )
    up = add_target(session, "gpu-h100-0")
    add_states(session, up, "up", "up", now)
    unusable = add_target(session, "gpu-h100-1", kind="dcgm")
    add_states(session, unusable, "up", "down", now)
    stale = add_target(session, "gpu-h100-2")
    add_states(session, stale, "up", "up", now - timedelta(hours=2))
    add_target(session, EVIL)
    edge = _edge(now)
    session.add_all(
        [
            ObservedWindow(target_id=up.id, start=now - timedelta(days=3), end=now, source="probe"),
            Outage(
                target_id=up.id,
                series="reachable",
                start=edge - 4 * HALF_HOUR,
                end=edge - 2 * HALF_HOUR,
            ),
            Outage(
                target_id=up.id,
                series="usable",
                start=edge - 4 * HALF_HOUR,
                end=edge - 2 * HALF_HOUR,
            ),
            ObservedWindow(
                target_id=unusable.id, start=now - timedelta(days=2), end=now, source="probe"
            ),
            Outage(target_id=unusable.id, series="usable", start=edge - 2 * HALF_HOUR, end=None),
            *(
                _rollup(up.id, "hour", edge.replace(minute=0) - timedelta(hours=h), p50)
                for h, p50 in ((1, 38.0), (2, 42.0), (3, 45.0))
            ),
            Vantage(
                name="eu-west", last_probe_at=now, targets=3, disagreeing=0, last_agreed_at=now
            ),
            Vantage(
                name="us-east",
                last_probe_at=now,
                targets=3,
                disagreeing=3,
                last_agreed_at=now - timedelta(minutes=20),
                disagreeing_since=now - timedelta(minutes=15),
                blind_since=now - timedelta(minutes=12),
            ),
            Alert(
                fingerprint="f1",
                rule="target_down",
                severity="critical",
                labels={},
                summary="gpu-h100-9 unreachable for 3 minutes",
                state="firing",
                started_at=now - timedelta(minutes=3),
            ),
            Alert(
                fingerprint="f2",
                rule="target_down",
                severity="critical",
                labels={},
                summary="already resolved alert",
                state="resolved",
                started_at=now - timedelta(hours=3),
                resolved_at=now - timedelta(hours=2),
            ),
        ]
    )
    session.commit()


def _edge(now: datetime) -> datetime:
    """The start of the half hour holding ``now``: the history bar's last bucket."""
    epoch = int(now.timestamp())
    start = datetime.fromtimestamp(epoch - epoch % 1800, tz=UTC)
    return start if start < now else start - HALF_HOUR


def _incident(provider_id, source_id, title, url, now, *, resolved=False):  # type: ignore[no-untyped-def]
    return Incident(
        provider_id=provider_id,
        source_id=source_id,
        title=title,
        status="resolved" if resolved else "investigating",
        impact="major",
        started_at=now - timedelta(hours=1),
        resolved_at=now if resolved else None,
        url=url,
        relevant=True,
        content_hash=source_id,
    )


# --------------------------------------------------------------------------- the page over HTTP


def test_status_page_shows_fleet_alerts_incidents_and_sla_without_a_token(
    api: ApiClient, sessions: sessionmaker[Session]
) -> None:
    with sessions() as session:
        seed(session)
    response = api.get("/")
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("text/html")
    assert response.headers["cache-control"] == "no-store"
    page = response.text
    assert '<meta http-equiv="refresh" content="30">' in page
    assert "gpu-h100-0" in fleet(page)
    assert "us-east-1" in fleet(page)["gpu-h100-0"].text
    alerts = page[page.index('<table id="alerts"') :]
    assert "gpu-h100-9 unreachable for 3 minutes" in alerts
    assert "already resolved alert" not in page
    providers = elements(page, "article", "data-provider")
    assert '<a href="https://status.aws/1"' in page
    assert "EC2 p5 capacity degraded" in providers["aws"].text
    assert "Link that is not http" in providers["aws"].text
    assert "Old resolved thing" not in page
    assert "Quiet Cloud" in providers["quietcloud"].text
    sla = page[page.index('<table id="sla"') :]
    assert "no data" in sla


def test_a_reachable_box_whose_gpu_fell_off_the_bus_is_unusable_and_not_counted_in_its_pool(
    api: ApiClient, sessions: sessionmaker[Session]
) -> None:
    """The quorum says reachable up, usable down: the fleet says ``unusable``, not ``up``, and
    the pool has 1 usable member of 2, short of its 2."""
    with sessions() as session:
        now = utcnow()
        ok = add_target(session, "gpu-a", pool="train")
        add_states(session, ok, "up", "up", now)
        broken = add_target(session, "gpu-b", pool="train", kind="dcgm")
        add_states(session, broken, "up", "down", now)
        session.commit()
    api.app.state.slamon.config = Config(pools=[PoolConfig(name="train", min_up=2)])  # type: ignore[attr-defined]
    page = api.get("/").text
    broken_row = first_row(page, "gpu-b").split()
    assert "unusable" in broken_row
    assert "up" not in broken_row
    assert "up" in first_row(page, "gpu-a").split()
    pool_row = first_row(page, "train ")
    assert "1 / 2" in pool_row  # one usable member of two
    assert "1 unusable" in pool_row
    assert fleet(page)["gpu-b"].attrs["data-state"] == "unusable"
    assert elements(page, "tr", "data-pool")["train"].attrs["data-state"] == "down"
    summary = elements(page, "section", "data-state")["unusable"]
    assert "1 of 2 targets reachable but not usable" in summary.text


def test_a_verdict_no_vantage_has_renewed_is_unknown_not_up(
    api: ApiClient, sessions: sessionmaker[Session]
) -> None:
    with sessions() as session:
        now = utcnow()
        add_states(session, add_target(session, "fresh"), "up", "up", now)
        add_states(session, add_target(session, "stale"), "up", "up", now - timedelta(hours=1))
        add_states(
            session, add_target(session, "gone-quiet"), "down", "down", now - timedelta(hours=1)
        )
        add_target(session, "never-probed")
        session.commit()
    page = api.get("/").text
    for name, state in (("fresh", "up"), ("stale", "unknown"), ("gone-quiet", "unknown")):
        row = first_row(page, name).split()
        assert {"up", "down", "unknown"} & set(row) == {state}
    states = {name: row.attrs["data-state"] for name, row in fleet(page).items()}
    assert states == {
        "fresh": "up",
        "stale": "unknown",
        "gone-quiet": "unknown",
        "never-probed": "unknown",
    }
    pool = first_row(page, "h100 ")
    assert "1 / 4" in pool
    assert elements(page, "tr", "data-pool")["h100"].attrs["data-state"] == "up"


def test_providers_show_their_feed_health_and_unknown_is_never_operational(
    api: ApiClient, sessions: sessionmaker[Session]
) -> None:
    with sessions() as session:
        seed(session)
    page = api.get("/").text
    cards = ("tr", "article")  # read by text: the provider list was a table before it was cards
    lambda_labs = first_row(page, "Lambda Labs", cards)
    assert "unknown — feed never polled" in lambda_labs
    assert "operational" not in lambda_labs
    assert "unknown — no public feed" in first_row(page, "Quiet Cloud", cards)
    coreweave = first_row(page, "CoreWeave", cards)
    assert re.search(r"unknown — feed unreachable since \d{4}-\d\d-\d\d \d\d:\d\d UTC", coreweave)
    assert "90 failed polls in a row" in coreweave
    assert "ConnectTimeout: status.coreweave.com" in coreweave
    assert re.search(
        r"operational — polled \d{4}-\d\d-\d\d \d\d:\d\d UTC",
        first_row(page, "Fine Cloud", cards),
    )
    assert "EC2 p5 capacity degraded" in first_row(page, "Amazon Web Services", cards)
    states = {
        slug: card.attrs["data-state"]
        for slug, card in elements(page, "article", "data-provider").items()
    }
    assert states == {
        "aws": "incident",
        "coreweave": "unknown",
        "finecloud": "operational",
        "lambda": "unknown",
        "quietcloud": "unknown",
    }
    feeds = {
        slug: card.attrs["data-feed-state"]
        for slug, card in elements(page, "article", "data-provider").items()
    }
    assert feeds == {
        "aws": "fresh",  # an open incident, read from a feed that answers
        "coreweave": "unreachable",
        "finecloud": "fresh",
        "lambda": "never-polled",
        "quietcloud": "none",
    }


# ------------------------------------------------------------------------ the view, read directly


def test_history_bar_colours_each_half_hour_from_outages_and_observed_windows(
    session: Session,
) -> None:
    """gpu-h100-0: watched for 3 days, down (and so not usable) for the two half hours before
    the last hour. gpu-h100-1: reachable all along, GPUs gone for the last hour and counting.
    The never-probed target's bar is unknown from end to end."""
    now = utcnow()
    seed(session, now)
    page = render(build_view(session, Config(), now))
    rows = fleet(page)
    assert bar(rows["gpu-h100-0"]) == [("up", 43), ("down", 2), ("up", 3)]
    assert bar(rows["gpu-h100-1"]) == [("up", 45), ("unusable", 3)]
    assert bar(rows[EVIL]) == [("unknown", 48)]
    down = rows["gpu-h100-0"].children[1]
    assert "down 1 h" in down["title"]
    assert down["title"].startswith(f"{(_edge(now) - 2 * HALF_HOUR - HALF_HOUR * 2):%H:%M}–")


def test_uptime_counts_observed_time_only_and_says_no_data_when_nobody_watched(
    session: Session,
) -> None:
    """Down 1 h: over 24 h that is 95.83 %; over 7 and 30 days, of which only 3 were watched,
    98.61 % (counting the unwatched days as up would say 99.40 % and 99.86 %)."""
    now = utcnow()
    seed(session, now)
    page = render(build_view(session, Config(), now))
    rows = fleet(page)
    text = rows["gpu-h100-0"].text
    month = re.search(r'data-uptime-pct="([\d.]*)"', page[page.index('data-target="gpu-h100-0"') :])
    assert month is not None  # this month's figure: the report's, over observed time too
    text = text.replace(uptime_text(float(month.group(1))), "", 1) if month.group(1) else text
    assert "95.83%" in text
    assert text.count("98.61%") == 2
    assert "99.40%" not in text
    assert rows[EVIL].text.count("no data") == 4  # three windows and this month
    assert "100.00%" not in rows[EVIL].text
    # gpu-h100-1: reachable all along; usable but for the time since its GPUs went, over the
    # day and over the two days (of 7 and 30) it was watched
    gone = (now - (_edge(now) - 2 * HALF_HOUR)) / timedelta(hours=1)
    shown = re.findall(r"100\.00%usable ([\d.]+)%", rows["gpu-h100-1"].text)
    assert [float(pct) for pct in shown] == [
        pytest.approx(100 * (1 - gone / 24), abs=0.011),
        pytest.approx(100 * (1 - gone / 48), abs=0.011),
        pytest.approx(100 * (1 - gone / 48), abs=0.011),
    ]


def test_fleet_lists_trouble_first(session: Session) -> None:
    seed(session)
    page = render(build_view(session, Config(), utcnow()))
    assert list(fleet(page)) == ["gpu-h100-1", EVIL, "gpu-h100-2", "gpu-h100-0"]


def test_median_latency_over_the_last_day_comes_from_rollups(session: Session) -> None:
    now = utcnow()
    target = add_target(session, "gpu-lat")
    hour = now.replace(minute=0, second=0, microsecond=0)
    session.add_all(
        [
            _rollup(target.id, "hour", hour - timedelta(hours=30), 900.0),  # older than a day
            _rollup(target.id, "hour", hour - timedelta(hours=3), 40.0),
            _rollup(target.id, "hour", hour - timedelta(hours=2), 44.0),
            _rollup(target.id, "hour", hour - timedelta(hours=1), 42.0),
            _rollup(target.id, "minute", hour, 41.0, count=2),
            _rollup(target.id, "minute", hour - timedelta(minutes=90), 5000.0),  # in an hour row
        ]
    )
    session.flush()
    page = render(build_view(session, Config(), now))
    assert fleet(page)["gpu-lat"].text.endswith("42 ms")


def _rollup(
    target_id: int, resolution: str, start: datetime, p50: float, count: int = 100
) -> ProbeRollup:
    return ProbeRollup(
        target_id=target_id,
        resolution=resolution,
        bucket_start=start,
        count=count,
        failures=0,
        unknown=0,
        latency_p50_ms=p50,
        latency_p95_ms=p50,
        latency_max_ms=p50,
    )


def test_vantages_show_last_probe_disagreement_and_blindness(session: Session) -> None:
    now = utcnow()
    seed(session, now)
    page = render(build_view(session, Config(), now))
    rows = elements(page, "tr", "data-vantage")
    assert rows["eu-west"].attrs["data-state"] == "agrees"
    assert rows["us-east"].attrs["data-state"] == "blind"
    blind_since = session.get_one(Vantage, "us-east").blind_since
    assert blind_since is not None
    assert f"blind since {when(blind_since)}" in rows["us-east"].text
    assert " 3 3 " in f" {rows['us-east'].text} "  # targets, disagreeing on


def test_page_reads_the_same_number_of_statements_for_three_targets_or_thirty(
    session: Session,
) -> None:
    now = utcnow()

    def statements() -> int:
        seen: list[str] = []
        connection = session.connection()
        listener = lambda *args: seen.append(args[2])  # noqa: E731
        event.listen(connection, "before_cursor_execute", listener)
        try:
            render(build_view(session, Config(), now))
        finally:
            event.remove(connection, "before_cursor_execute", listener)
        return len(seen)

    made: list[Target] = []

    def grow(count: int) -> None:
        for _ in range(count):
            target = add_target(session, f"gpu-{len(made)}")
            made.append(target)
            add_states(session, target, "up", "up", now)
            session.add_all(
                [
                    ObservedWindow(target_id=target.id, start=now - timedelta(days=1), end=now),
                    Outage(
                        target_id=target.id,
                        start=now - timedelta(hours=2),
                        end=now - timedelta(hours=1),
                    ),
                    _rollup(target.id, "hour", now - timedelta(hours=2), 10.0),
                ]
            )
        session.flush()

    grow(3)
    few = statements()
    grow(27)
    assert statements() == few
    assert few <= 25  # the account events, on the page and in the month's report, are 2 each;
    # the notices 1


# --------------------------------------------------------------------------- escaping and shape


def test_status_page_escapes_names_and_drops_non_http_links(
    api: ApiClient, sessions: sessionmaker[Session]
) -> None:
    with sessions() as session:
        seed(session)
    page = api.get("/").text
    assert EVIL not in page
    assert "&lt;script&gt;alert(&#34;pwned&#34;)&lt;/script&gt;" in page
    assert "javascript:" not in page
    assert "<script" not in page


def test_status_page_renders_an_empty_deployment(api: ApiClient) -> None:
    page = api.get("/").text
    assert "No targets." in page
    assert "No alerts firing." in page
    assert "No targets to watch yet" in page
    assert "<script" not in page
    assert "src=" not in page  # nothing to load: inline CSS only
    assert "http://" not in page
    assert "https://" not in page


def test_sla_rows_show_uptime_against_target_and_credit() -> None:
    now = utcnow()
    view = StatusView(
        now=now,
        month=now.strftime("%Y-%m"),
        providers=(),
        fleet=(),
        pools=(),
        alerts=(),
        sla=(SlaView("aws", "AWS", 99.5, 99.9, 10.0), SlaView("gcp", "GCP", 100.0, 99.9, 0.0)),
    )
    page = render(view)
    assert '<span class="badge breach">99.500%</span>' in page
    assert '<span class="badge ok">100.000%</span>' in page
    assert "99.900%" in page
    assert "10.0%" in page


def test_status_page_shows_month_to_date_uptime_target_and_credit_from_outages(
    api: ApiClient, sessions: sessionmaker[Session]
) -> None:
    """A target under AWS's instance SLA was down for 2 % of the month so far: the SLA row
    shows ~98 % against 99.5 %, as a breach, with the 30 % credit tier (below 99.0)."""
    now = utcnow()
    month = month_period(now.strftime("%Y-%m"))
    elapsed = now - month.start
    with sessions() as session:
        session.add(Provider(slug="aws", name="Amazon Web Services", regions=[], components=[]))
        row = upsert_target(
            session,
            TargetConfig(
                name="gpu-0", kind="tcp", url="tcp://h:22", provider="aws", sla="aws-ec2-instance"
            ),
            "config",
        )
        row.created_at = now - timedelta(days=60)
        session.flush()
        down_from = month.start + elapsed / 4
        session.add_all(
            [
                ObservedWindow(target_id=row.id, start=month.start, end=now + timedelta(days=1)),
                Outage(target_id=row.id, start=down_from, end=down_from + elapsed * 0.02),
            ]
        )
        session.commit()
    page = api.get("/").text
    sla_table = page[page.index('<table id="sla"') :]
    aws_row = sla_table[sla_table.index("Amazon Web Services") :].split("</tr>")[0]
    uptime = float(re.search(r'class="badge breach">([\d.]+)%', aws_row).group(1))  # type: ignore[union-attr]
    assert uptime == pytest.approx(98.0, abs=0.002)
    assert "99.500%" in aws_row
    assert "30.0%" in aws_row


# --------------------------------------------------------------------------- formatting


@pytest.mark.parametrize(
    ("value", "shown"),
    [
        pytest.param(None, "no data", id="nothing-observed"),
        pytest.param(100.0, "100.00%", id="earned-100"),
        pytest.param(99.9999, "99.99%", id="never-rounded-up-to-100"),
        pytest.param(99.99, "99.99%", id="exact-two-decimals-kept"),
        pytest.param(95.8333, "95.83%", id="truncated"),
        pytest.param(0.0, "0.00%", id="zero"),
    ],
)
def test_uptime_is_shown_truncated_to_two_decimals(value: float | None, shown: str) -> None:
    assert uptime_text(value) == shown


@pytest.mark.parametrize(
    ("value", "shown"),
    [
        pytest.param(timedelta(seconds=45), "45 s", id="seconds"),
        pytest.param(timedelta(minutes=30), "30 min", id="minutes"),
        pytest.param(timedelta(hours=4, minutes=30, seconds=9), "4 h 30 min", id="hours"),
        pytest.param(timedelta(hours=2), "2 h", id="whole-hours"),
        pytest.param(timedelta(days=2, hours=3, minutes=5), "2 d 3 h", id="days"),
        pytest.param(timedelta(days=7), "7 d", id="whole-days"),
    ],
)
def test_durations_read_in_two_units_at_most(value: timedelta, shown: str) -> None:
    assert duration(value) == shown


@pytest.mark.parametrize(
    ("value", "shown"),
    [
        pytest.param(timedelta(days=1), "24 h", id="a-day-in-hours"),
        pytest.param(timedelta(days=7), "7 d", id="a-week"),
        pytest.param(timedelta(days=30), "30 d", id="a-month"),
    ],
)
def test_uptime_windows_are_labelled_as_people_say_them(value: timedelta, shown: str) -> None:
    assert window(value) == shown


START = datetime(2026, 5, 4, 10, 0, tzinfo=UTC)


def test_a_bar_segment_says_what_was_seen_in_it() -> None:
    down = Bucket(
        START,
        START + 2 * HALF_HOUR,
        "down",
        HALF_HOUR + timedelta(minutes=20),
        timedelta(minutes=12),
        timedelta(minutes=3),
        2,
    )
    assert segment(down) == (
        "10:00–11:00 UTC: down (observed 50 min, down 12 min, unusable 3 min, unwatched 10 min)"
    )
    unwatched = Bucket(
        START, START + HALF_HOUR, "unknown", timedelta(0), timedelta(0), timedelta(0)
    )
    assert segment(unwatched) == "10:00–10:30 UTC: unknown, not watched by any vantage"


def test_the_bar_is_labelled_for_screen_readers_worst_first() -> None:
    bar = [
        Bucket(START, START, "up", HALF_HOUR, timedelta(0), timedelta(0), 40),
        Bucket(START, START, "down", HALF_HOUR, HALF_HOUR, timedelta(0), 3),
        Bucket(START, START, "unknown", timedelta(0), timedelta(0), timedelta(0), 5),
    ]
    assert bar_label(bar) == "last 24 h in 30 min slots: 3 down, 5 unknown, 40 up"


@pytest.mark.parametrize(
    ("header", "gzip"),
    [
        pytest.param("gzip, deflate, br", True, id="browser"),
        pytest.param("br, gzip;q=0.5", True, id="weighted"),
        pytest.param("*", True, id="anything"),
        pytest.param("gzip;q=0", False, id="refused"),
        pytest.param("gzip;q=x", False, id="unreadable-weight"),
        pytest.param("identity", False, id="identity"),
        pytest.param("", False, id="none"),
    ],
)
def test_accept_encoding_is_read_for_gzip(header: str, gzip: bool) -> None:
    assert accepts_gzip(header) is gzip


def test_the_page_is_gzipped_for_clients_that_take_it(
    api: ApiClient, sessions: sessionmaker[Session]
) -> None:
    with sessions() as session:
        seed(session)
    zipped = api.get("/", headers={"Accept-Encoding": "gzip"})
    plain = api.get("/", headers={"Accept-Encoding": "identity"})
    assert zipped.headers["content-encoding"] == "gzip"
    assert "content-encoding" not in plain.headers
    assert zipped.headers["vary"] == "Accept-Encoding"
    assert int(zipped.headers["content-length"]) < len(plain.content) / 3
    assert "gpu-h100-1" in fleet(zipped.text)
    assert zipped.text.count("<tr") == plain.text.count("<tr")


def test_the_page_shows_the_price_per_unit_of_work_of_the_worked_example(
    session: Session,
) -> None:
    """The report's worked example (tests/monitor/reports/test_work.py), read on the last
    instant of November: $1,440 for 2,584.8 M samples, $0.5571 per million against $0.5556."""
    from monitor.config import parse_config
    from tests.monitor.reports.test_work import DEC, JUDGED_OVER_SIX_HOURS, worked_example

    worked_example(session)
    config = parse_config(JUDGED_OVER_SIX_HOURS)
    view = build_view(session, config, DEC - timedelta(microseconds=1))
    [work] = view.work
    assert (work.provider, work.instance_type, work.unit) == ("runpod", "A100-80G", "samples")
    assert (work.hours_lost, work.slow_hours) == (3.0, 2.0)
    page = render(view)
    table = page[page.index('<table id="work"') :]
    table = table[: table.index("</table>")]
    assert "A100-80G" in table
    assert "2,584.8 M samples" in table
    assert "0.5556" in table
    assert "0.5571" in table


def test_the_page_shows_the_interruption_ledger_of_the_worked_example(
    session: Session,
) -> None:
    """The report's ledger example (tests/monitor/reports/test_ledger.py), read on the last
    instant of November: aws p5.48xlarge spot at 1.961 per 1,000 h, a small sample."""
    from monitor.config import parse_config
    from tests.monitor.reports.test_ledger import DEC, known_lives

    known_lives(session)
    view = build_view(session, parse_config(""), DEC - timedelta(microseconds=1))
    assert [(r.provider, r.capacity, r.small_sample) for r in view.ledger] == [
        ("aws", "on-demand", True),
        ("aws", "spot", True),
        ("gcp", "spot", False),
    ]
    page = render(view)
    table = page[page.index('<table id="ledger"') :]
    table = table[: table.index("</table>")]
    assert "p5.48xlarge" in table
    assert "1,020.0 h" in table
    assert "1.961" in table
    assert "0.237 – 7.083 (small sample)" in table
    assert "1.046" in table
    assert table.count('class="muted"') == 2
