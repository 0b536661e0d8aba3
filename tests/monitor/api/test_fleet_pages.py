"""The status page grouped by provider and pool, and where its groups drill down to
(/pools/NAME, /fleet), at a thousand targets on SQLite and PostgreSQL: the front page lists
groups and the targets in trouble, not a thousand rows; every target is one click from it; a
pool's page lists its members as the front page drew them."""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime, timedelta
from html import unescape

import pytest
from sqlalchemy import insert, select
from sqlalchemy.orm import Session, sessionmaker

from monitor.config import Config
from monitor.config.models import PoolConfig
from monitor.db.base import utcnow
from monitor.db.models import ObservedWindow, Outage, Target, TargetState
from monitor.status.groups import FRONT_PAGE_TARGETS
from tests.monitor.api.test_status_page import add_provider, elements
from tests.support import ApiClient

FLEET = 1000
POOL_SIZE = 8
UNPOOLED = 8  # the last eight targets, at aws, in no pool
PROVIDERS = ("aws", "gcp", "coreweave")
DOWN, UNUSABLE, NEVER_PROBED = {73}, {500}, {900, 901, 902}  # aws, coreweave, gcp
TROUBLE = DOWN | UNUSABLE | NEVER_PROBED


def name(i: int) -> str:
    return f"gpu-{i:04d}"


def pool_of(i: int) -> str | None:
    return None if i >= FLEET - UNPOOLED else f"pool-{i // POOL_SIZE:03d}"


def provider_of(i: int) -> str:
    return "aws" if i >= FLEET - UNPOOLED else PROVIDERS[(i // POOL_SIZE) % len(PROVIDERS)]


def seed_fleet(session: Session, now: datetime) -> None:
    """A thousand targets watched for two days, in pools of eight each at one provider (the
    last eight in none), one down an hour ago, one unusable, three never probed; the rest up."""
    add_provider(session, "aws", "Amazon Web Services")
    session.execute(
        insert(Target),
        [
            {
                "name": name(i),
                "kind": "dcgm" if i in UNUSABLE else "tcp",
                "url": f"tcp://10.0.{i // 250}.{i % 250}:22",
                "provider": provider_of(i),
                "pool": pool_of(i),
                "created_at": now - timedelta(days=10),
            }
            for i in range(FLEET)
        ],
    )
    ids = {row.name: row.id for row in session.execute(select(Target.name, Target.id))}
    session.execute(insert(TargetState), list(_states(ids, now)))
    session.execute(
        insert(ObservedWindow),
        [
            {"target_id": ids[name(i)], "start": now - timedelta(days=2), "end": now}
            for i in range(FLEET)
            if i not in NEVER_PROBED
        ],
    )
    session.execute(
        insert(Outage),
        [
            {"target_id": ids[name(i)], "series": "reachable", "start": now - timedelta(hours=1)}
            for i in DOWN
        ]
        + [
            {"target_id": ids[name(i)], "series": "usable", "start": now - timedelta(hours=1)}
            for i in UNUSABLE
        ],
    )
    session.commit()


def _states(ids: dict[str, int], now: datetime) -> Iterator[dict[str, object]]:
    for i in range(FLEET):
        if i in NEVER_PROBED:
            continue
        reachable = "down" if i in DOWN else "up"
        usable = "down" if i in UNUSABLE else reachable
        for series, state in (("reachable", reachable), ("usable", usable)):
            for vantage, probed in (("*", None), ("eu-west", now)):
                yield {
                    "target_id": ids[name(i)],
                    "vantage": vantage,
                    "series": series,
                    "state": state,
                    "last_probe_at": probed,
                    "detail": {},
                }


@dataclass(frozen=True)
class Front:
    page: str
    targets: dict[str, str]  # listed target -> its state
    pools: dict[str, str]  # pool row -> its link
    links: list[str]  # every group's drill-down link


@pytest.fixture
def front(api: ApiClient, sessions: sessionmaker[Session]) -> Front:
    with sessions() as session:
        seed_fleet(session, utcnow())
    answer = api.get("/")
    assert answer.status_code == 200  # type: ignore[attr-defined]
    page = answer.text  # type: ignore[attr-defined]
    groups = page[
        page.index('<table id="pools"') : page.index("</table>", page.index('id="pools"'))
    ]
    return Front(
        page,
        {n: row.attrs["data-state"] for n, row in elements(page, "tr", "data-target").items()},
        dict(re.findall(r'data-pool="([^"]+)".*?<a class="name" href="([^"]+)"', groups, re.S)),
        [unescape(h) for h in re.findall(r'href="((?:pools/|fleet\?)[^"]*)"', groups)],
    )


def test_the_front_page_at_a_thousand_targets_lists_groups_and_trouble_not_every_target(
    front: Front,
) -> None:
    assert len(front.page.encode()) < 250_000  # every target listed made about a megabyte
    assert front.page.count('<tr class="target"') == len(TROUBLE) < FRONT_PAGE_TARGETS
    assert front.targets == {
        **{name(i): "down" for i in DOWN},
        **{name(i): "unusable" for i in UNUSABLE},
        **{name(i): "unknown" for i in NEVER_PROBED},
    }
    assert f"Targets not up: {len(TROUBLE)} of {FLEET}" in front.page
    assert len(front.pools) == (FLEET - UNPOOLED) // POOL_SIZE
    providers = elements(front.page, "tr", "data-group")
    assert {slug: row.attrs["data-state"] for slug, row in providers.items()} == {
        "aws": "degraded",  # gpu-0073 down in pool-009
        "gcp": "degraded",  # three never probed in pool-112
        "coreweave": "degraded",  # gpu-0500 unusable in pool-062
    }
    aws = providers["aws"].text
    assert aws.startswith("Amazon Web Services 344 targets degraded 343 / 344 1 down")
    assert providers["gcp"].text.startswith("gcp 328 targets degraded 325 / 328 3 unknown")


def test_a_problem_pool_comes_first_under_its_provider(front: Front) -> None:
    aws = front.page[front.page.index('data-provider-group="aws"') :]
    aws = aws[: aws.index("</tbody>")]
    first_pool = re.search(
        r'data-pool="([^"]+)" data-state="([^"]+)" data-group-state="([^"]+)"', aws
    )
    assert first_pool is not None
    assert first_pool.groups() == ("pool-009", "up", "degraded")  # 7 of 8 up, needs 1


def test_every_target_is_one_click_from_the_front_page(api: ApiClient, front: Front) -> None:
    """Follow each group's link: the pools' pages and the provider's targets in no pool list
    every target of the thousand exactly once, and each row as the front page drew it."""
    seen: list[str] = []
    for link in front.links:
        if link.startswith("fleet?provider=") and not link.endswith("&pool="):
            continue  # a provider's whole list: its pools and its unpooled, listed below too
        answer = api.get("/" + link)
        assert answer.status_code == 200, link  # type: ignore[attr-defined]
        rows = elements(answer.text, "tr", "data-target")  # type: ignore[attr-defined]
        for target, row in rows.items():
            if target in front.targets:
                assert row.attrs["data-state"] == front.targets[target]
        seen.extend(rows)
    assert sorted(seen) == [name(i) for i in range(FLEET)]


def test_a_pool_s_page_lists_its_members_trouble_first_with_its_pooled_figures(
    api: ApiClient, front: Front
) -> None:
    page = api.get("/" + front.pools["pool-112"]).text  # type: ignore[attr-defined]
    header = elements(page, "header", "data-pool")["pool-112"]
    assert header.attrs["data-state"] == "up"  # 5 usable, needs 1
    assert header.attrs["data-group-state"] == "degraded"
    assert "5 of 8 members usable, needs 1" in header.text
    members = list(elements(page, "tr", "data-target"))
    assert members[:3] == [name(900), name(901), name(902)]  # unknown before up
    assert len(members) == POOL_SIZE
    assert '<a href="../">← slamon status</a>' in page
    assert f'href="../targets/{name(900)}"' in page
    counts = {k: row.text for k, row in elements(page, "li", "data-count").items()}
    assert counts == {
        "up": "5 up",
        "unusable": "0 unusable",
        "down": "0 down",
        "unknown": "3 unknown",
    }
    uptime = re.search(r'data-label="24 h" data-pct="([\d.]+)"', page)
    assert uptime is not None
    assert float(uptime.group(1)) == 100.0


def test_a_pool_s_min_up_from_the_config_judges_it_on_the_front_page_and_its_own(
    api: ApiClient, sessions: sessionmaker[Session]
) -> None:
    with sessions() as session:
        seed_fleet(session, utcnow())
    api.app.state.slamon.config = Config(pools=[PoolConfig(name="pool-112", min_up=6)])  # type: ignore[attr-defined]
    front_row = elements(api.get("/").text, "tr", "data-pool")["pool-112"]  # type: ignore[attr-defined]
    page = api.get("/pools/pool-112").text  # type: ignore[attr-defined]
    header = elements(page, "header", "data-pool")["pool-112"]
    # five usable, three unknown: the unknown could make up the sixth
    assert front_row.attrs["data-state"] == header.attrs["data-state"] == "unknown"
    assert "needs 6" in front_row.text


def test_the_fleet_page_selects_and_a_pool_nobody_names_is_a_404(
    api: ApiClient, front: Front
) -> None:
    unpooled = api.get("/fleet", params={"provider": "aws", "pool": ""}).text  # type: ignore[attr-defined]
    assert list(elements(unpooled, "tr", "data-target")) == [
        name(i) for i in range(FLEET - UNPOOLED, FLEET)
    ]
    assert "provider aws, no pool" in unpooled
    trouble = api.get("/fleet", params=[("state", "down"), ("state", "unknown")]).text  # type: ignore[attr-defined]
    assert set(elements(trouble, "tr", "data-target")) == {name(i) for i in DOWN | NEVER_PROBED}
    missing = api.get("/pools/no-such-pool")
    assert missing.status_code == 404  # type: ignore[attr-defined]
    assert "No pool named" in missing.text  # type: ignore[attr-defined]
    assert api.get("/fleet", params={"state": "sideways"}).status_code == 422  # type: ignore[attr-defined]
