"""The badges at /badges/{targets|pools|providers}/{name}/{metric}.svg, through the real app on
SQLite and PostgreSQL: public SVG documents whose values are the status page's and the API's for
the same rows, unknown in grey, cacheable briefly with an ETag, 404 for what slamon does not
know."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from dataclasses import dataclass
from datetime import timedelta

import pytest
from markupsafe import escape
from sqlalchemy.orm import Session, sessionmaker

from monitor.config.models import TargetConfig
from monitor.db.base import utcnow
from monitor.db.models import ObservedWindow, Outage, TargetState
from monitor.sla.months import month_period
from monitor.status.badge_svg import COLOURS
from monitor.status.badges import badge_path
from monitor.status.history import uptime_text
from monitor.targets import upsert_target
from tests.monitor.api.test_status_page import EVIL, add_states, seed
from tests.support import ApiClient

SVG = "{http://www.w3.org/2000/svg}"
WINDOW_LABELS = {"uptime-24h": "24 h", "uptime-7d": "7 d", "uptime-30d": "30 d"}


@dataclass(frozen=True)
class Drawn:
    status: int
    label: str
    value: str
    colour: str  # the value box's fill
    title: str
    width: int


def drawn(api: ApiClient, kind: str, name: str, metric: str, **kwargs: object) -> Drawn:
    answer = api.get(badge_path(kind, name, metric), **kwargs)
    assert answer.headers["content-type"] == "image/svg+xml; charset=utf-8"  # type: ignore[attr-defined]
    root = ET.fromstring(answer.content)  # type: ignore[attr-defined]
    assert root.tag == f"{SVG}svg"
    width, height = int(root.get("width", "0")), int(root.get("height", "0"))
    assert root.get("viewBox") == f"0 0 {width} {height}"
    texts = [t.text or "" for t in root.iter(f"{SVG}text") if t.get("aria-hidden") != "true"]
    fills = [r.get("fill") for r in root.iter(f"{SVG}rect")]
    return Drawn(
        answer.status_code,  # type: ignore[attr-defined]
        texts[0],
        texts[1],
        fills[2] or "",
        root.findtext(f"{SVG}title") or "",
        width,
    )


def row(page: str, attr: str, value: str) -> str:
    """The HTML of the ``<tr>`` whose ``attr`` is ``value``."""
    start = page.index(f'<tr class="{_row_class(attr)}" {attr}="{escape(value)}"')
    return page[start : page.index("</tr>", start)]


def _row_class(attr: str) -> str:
    return {"data-target": "target", "data-pool": "pool", "data-group": "provider"}[attr]


def uptime_cells(tr: str) -> dict[str, str]:
    """A row's uptime cells: window label -> the text shown (the reachable figure)."""
    found = re.findall(
        r'<td class="num uptime" data-label="([^"]+)" data-pct="[^"]*" title="[^"]*">([^<]*)', tr
    )
    return dict(found)


def state_of(tr: str, attr: str = "data-state") -> str:
    match = re.search(rf'{attr}="([^"]+)"', tr)
    assert match is not None
    return match.group(1)


# --------------------------------------------------------------------------- the same truth


def test_a_target_s_badges_say_what_its_status_page_row_says_unknown_in_grey(
    api: ApiClient, sessions: sessionmaker[Session]
) -> None:
    with sessions() as session:
        seed(session)
    page = api.get("/").text  # type: ignore[attr-defined]
    expected_states = {
        "gpu-h100-0": ("up", "green"),
        "gpu-h100-1": ("unusable", "orange"),
        "gpu-h100-2": ("unknown", "grey"),  # a verdict no vantage renewed
        EVIL: ("unknown", "grey"),  # never probed
    }
    for name, (state, colour) in expected_states.items():
        tr = row(page, "data-target", name)
        assert state_of(tr) == state
        badge = drawn(api, "targets", name, "state")
        assert (badge.status, badge.label, badge.value) == (200, name, state)
        assert badge.colour == COLOURS[colour]
        shown = uptime_cells(tr)
        for metric, label in WINDOW_LABELS.items():
            uptime = drawn(api, "targets", name, metric)
            assert uptime.value == shown[label], (name, metric)
    assert drawn(api, "targets", "gpu-h100-0", "uptime-24h").value == "95.83%"
    never = drawn(api, "targets", EVIL, "uptime-30d")
    assert (never.value, never.colour) == ("no data", COLOURS["grey"])  # never green


def test_a_pool_s_and_a_provider_s_badges_say_what_their_group_rows_say(
    api: ApiClient, sessions: sessionmaker[Session]
) -> None:
    """Pool h100 has one usable member of four (one unusable, two unknown): it meets its
    min_up of 1, so it is degraded, not up; so is aws, whose targets they are."""
    with sessions() as session:
        seed(session)
    page = api.get("/").text  # type: ignore[attr-defined]
    pool_row = row(page, "data-pool", "h100")
    assert state_of(pool_row, "data-group-state") == "degraded"
    provider_row = row(page, "data-group", "aws")
    assert state_of(provider_row) == "degraded"
    for kind, name, tr in (("pools", "h100", pool_row), ("providers", "aws", provider_row)):
        state = drawn(api, kind, name, "state")
        assert (state.value, state.colour) == ("degraded", COLOURS["yellow"])
        shown = uptime_cells(tr)
        for metric, label in WINDOW_LABELS.items():
            assert drawn(api, kind, name, metric).value == shown[label], (kind, metric)
    # gpu-h100-0's 1 h down in 24 h observed and gpu-h100-1's 24 h up, pooled over 48 h
    assert drawn(api, "pools", "h100", "uptime-24h").value == uptime_text(100 * (1 - 1 / 48))


def test_sla_badges_are_the_api_s_month_to_date_against_the_policy_s_objective(
    api: ApiClient, reader: dict[str, str], sessions: sessionmaker[Session]
) -> None:
    """Two targets under AWS's instance SLA (99.5 %) this month: one never down (green), one
    down 2 % of the month so far (red); one nobody watched (grey, no data); their pool's
    availability has no objective (blue)."""
    now = utcnow()
    month = month_period(now.strftime("%Y-%m"))
    elapsed = now - month.start
    with sessions() as session:
        for name in ("sla-ok", "sla-bad", "sla-unwatched"):
            target = upsert_target(
                session,
                TargetConfig(
                    name=name,
                    kind="tcp",
                    url="tcp://h:22",
                    provider="aws",
                    pool="sla",
                    sla="aws-ec2-instance",
                ),  # type: ignore[call-arg]
                "config",
            )
            target.created_at = now - timedelta(days=60)
            session.flush()
            if name != "sla-unwatched":
                session.add(ObservedWindow(target_id=target.id, start=month.start, end=now))
                add_states(session, target, "up", None, now)
            if name == "sla-bad":
                down_from = month.start + elapsed / 4
                session.add(
                    Outage(target_id=target.id, start=down_from, end=down_from + elapsed * 0.02)
                )
        session.commit()
    sla = api.get("/api/v1/sla", headers=reader).json()  # type: ignore[attr-defined]
    targets = {t["name"]: t for t in sla["targets"]}
    pools = {p["name"]: p for p in sla["pools"]}
    ok = drawn(api, "targets", "sla-ok", "sla")
    assert targets["sla-ok"]["target_pct"] == 99.5
    assert ok.value == f"{targets['sla-ok']['uptime_pct']:.3f}% / 99.5%"
    assert ok.colour == COLOURS["green"]
    assert ok.label == f"SLA {sla['month']}"
    bad = drawn(api, "targets", "sla-bad", "sla")
    assert bad.value == f"{targets['sla-bad']['uptime_pct']:.3f}% / 99.5%"
    assert targets["sla-bad"]["uptime_pct"] == pytest.approx(98.0, abs=0.002)
    assert bad.colour == COLOURS["red"]
    assert "missed" in bad.title
    unwatched = drawn(api, "targets", "sla-unwatched", "sla")
    assert targets["sla-unwatched"]["uptime_pct"] is None
    assert (unwatched.value, unwatched.colour) == ("no data", COLOURS["grey"])
    pool = drawn(api, "pools", "sla", "sla")
    assert pool.value == f"{pools['sla']['availability_pct']:.3f}%"
    assert pool.colour == COLOURS["blue"]
    provider = drawn(api, "providers", "aws", "sla")
    [aws] = [p for p in sla["providers"] if p["slug"] == "aws"]
    page = api.get("/").text  # type: ignore[attr-defined]
    sla_table = page[page.index('<table id="sla"') :]
    assert f"{aws['uptime_pct']:.3f}%" in sla_table  # the page's SLA table says the same
    assert provider.value.startswith(f"{aws['uptime_pct']:.3f}%")


# --------------------------------------------------------------------------- HTTP


@pytest.mark.parametrize(
    "path",
    [
        pytest.param(badge_path("targets", "no-such-target", "state"), id="unknown-target"),
        pytest.param(badge_path("pools", "no-such-pool", "uptime-7d"), id="unknown-pool"),
        pytest.param(badge_path("providers", "nobody", "sla"), id="unknown-provider"),
        pytest.param(badge_path("targets", "gpu-h100-0", "latency"), id="unknown-metric"),
        pytest.param(badge_path("vantages", "eu-west", "state"), id="unknown-kind"),
        pytest.param("/badges/targets/gpu-h100-0/state.png", id="not-svg"),
    ],
)
def test_what_slamon_does_not_know_is_a_404_with_a_grey_badge(
    api: ApiClient, sessions: sessionmaker[Session], path: str
) -> None:
    with sessions() as session:
        seed(session)
    answer = api.get(path)
    assert answer.status_code == 404  # type: ignore[attr-defined]
    if path.endswith(".svg"):
        root = ET.fromstring(answer.content)  # type: ignore[attr-defined]
        texts = [t.text for t in root.iter(f"{SVG}text") if t.get("aria-hidden") != "true"]
        assert texts == ["slamon", "not found"]
        assert [r.get("fill") for r in root.iter(f"{SVG}rect")][2] == COLOURS["grey"]


def test_a_badge_is_public_cached_briefly_and_revalidated_by_its_etag(
    api: ApiClient, sessions: sessionmaker[Session]
) -> None:
    with sessions() as session:
        seed(session)
    path = badge_path("targets", "gpu-h100-0", "state")
    first = api.get(path)  # no token: public like the status page
    assert first.status_code == 200  # type: ignore[attr-defined]
    assert first.headers["cache-control"] == "max-age=30"  # type: ignore[attr-defined]
    assert "default-src 'none'" in first.headers["content-security-policy"]  # type: ignore[attr-defined]
    tag = first.headers["etag"]  # type: ignore[attr-defined]
    again = api.get(path, headers={"If-None-Match": tag})
    assert again.status_code == 304  # type: ignore[attr-defined]
    assert again.content == b""  # type: ignore[attr-defined]
    assert again.headers["etag"] == tag  # type: ignore[attr-defined]
    assert api.get(path, headers={"If-None-Match": '"other"'}).status_code == 200  # type: ignore[attr-defined]


def test_a_badge_changes_with_the_next_write_to_what_happened(
    api: ApiClient, sessions: sessionmaker[Session]
) -> None:
    """The verdict turns down: the next request draws it, under a new ETag."""
    with sessions() as session:
        seed(session)
    path = badge_path("targets", "gpu-h100-0", "state")
    before = api.get(path)
    with sessions() as session:
        from sqlalchemy import select, update

        from monitor.db.models import Target

        target_id = session.scalar(select(Target.id).where(Target.name == "gpu-h100-0"))
        session.execute(
            update(TargetState)
            .where(TargetState.target_id == target_id, TargetState.series == "reachable")
            .values(state="down")
        )
        session.commit()
    after = api.get(path, headers={"If-None-Match": before.headers["etag"]})  # type: ignore[attr-defined]
    assert after.status_code == 200  # type: ignore[attr-defined]
    assert b">down</text>" in after.content  # type: ignore[attr-defined]
    assert after.headers["etag"] != before.headers["etag"]  # type: ignore[attr-defined]


def test_a_name_is_escaped_in_the_badge_and_a_label_may_replace_it(
    api: ApiClient, sessions: sessionmaker[Session]
) -> None:
    with sessions() as session:
        seed(session)
    evil = api.get(badge_path("targets", EVIL, "state"))
    assert b"<script" not in evil.content  # type: ignore[attr-defined]
    assert drawn(api, "targets", EVIL, "state").label == EVIL  # drawn as text
    relabelled = drawn(api, "targets", "gpu-h100-0", "state", params={"label": "train box"})
    assert (relabelled.label, relabelled.value) == ("train box", "up")
