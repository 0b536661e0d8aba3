from __future__ import annotations

import re
from pathlib import Path
from typing import get_args

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from monitor.config.models import FeedKind
from monitor.errors import FeedParseError, SlamonError
from monitor.feeds.kinds import REGISTRY, feed_kind, is_snapshot
from tests.support import FIXTURES as SHARED_FIXTURES

FEEDS = SHARED_FIXTURES / "feeds"
# One real capture per kind (the same pairs the outside contract check uses).
CAPTURES = {
    "statuspage": "statuspage/ai-status-cloudflare-summary-trimmed.json",
    "gcp": "gcp/gcp-incidents-excerpt-2022-07.json",
    "aws-health": "aws-health/ai-status-aws-currentevents.json",
    "aws-rss": "aws-rss/checkmk-aws-all-rss-2023-02.rss",
    "azure-rss": "azure-rss/checkmk-azure-status-feed-2022-11-edited.rss",
    "rss": "statuspage-history/github-history-2026-08.atom",
    "statusio": "statusio/coreweave-statusio-rss-2026-09.xml",
    "betterstack": "betterstack/ai-status-together-index.json",
    "instatus": "instatus/ai-status-perplexity-summary.json",
}


DESIGN = Path(__file__).resolve().parents[4] / "docs" / "DESIGN.md"


def test_every_feed_kind_of_the_design_is_registered() -> None:
    assert set(REGISTRY) == set(CAPTURES)


def test_the_config_accepts_exactly_the_registered_feed_kinds() -> None:
    """The config sits below feeds and cannot read REGISTRY: its ``FeedKind`` names are kept
    equal to the registry's here (a kind registered but not accepted, or the reverse, fails)."""
    assert sorted(get_args(FeedKind)) == sorted(REGISTRY)


def design_feed_kinds(text: str) -> list[str]:
    """The kinds DESIGN.md's "Feed kinds:" paragraph names, each in backticks."""
    paragraph = re.search(r"^Feed kinds: (.*?)(?:\n\n|\Z)", text, re.S | re.M)
    assert paragraph, "docs/DESIGN.md has no 'Feed kinds:' paragraph"
    return re.findall(r"`([a-z][a-z0-9-]*)`", paragraph.group(1))


def test_the_design_names_exactly_the_registered_feed_kinds() -> None:
    assert sorted(design_feed_kinds(DESIGN.read_text(encoding="utf-8"))) == sorted(REGISTRY)


def test_the_design_check_sees_a_kind_left_out() -> None:
    text = DESIGN.read_text(encoding="utf-8").replace("`instatus`", "instatus")
    assert "instatus" not in design_feed_kinds(text)


@pytest.mark.parametrize("kind", sorted(CAPTURES))
def test_every_kind_reads_its_capture_into_utc_incidents_twice_the_same(kind: str) -> None:
    raw = (FEEDS / CAPTURES[kind]).read_bytes()
    first, second = REGISTRY[kind].parse(raw, None), REGISTRY[kind].parse(raw, None)
    assert first == second
    for incident in first:
        times = [incident.started_at, incident.resolved_at, *(u.at for u in incident.updates)]
        assert all(t is None or t.utcoffset().total_seconds() == 0 for t in times)  # type: ignore[union-attr]
        assert [u.at for u in incident.updates] == sorted(u.at for u in incident.updates)


@pytest.mark.parametrize("kind", sorted(CAPTURES))
@settings(max_examples=60, deadline=None)
@given(raw=st.binary(max_size=300))
def test_garbage_raises_only_the_typed_error(kind: str, raw: bytes) -> None:
    try:
        REGISTRY[kind].parse(raw, None)
    except FeedParseError as exc:
        error = exc
    else:
        return
    assert error.kind == kind


def test_an_unknown_kind_names_the_known_ones() -> None:
    with pytest.raises(SlamonError, match=r"unknown feed kind 'nagios' \(known: aws-health, "):
        feed_kind("nagios")


@pytest.mark.parametrize(
    ("kind", "url", "snapshot"),
    [
        ("statuspage", "https://s.example/api/v2/incidents.json", False),
        ("statuspage", "https://s.example/api/v2/summary.json", True),
        ("statuspage", "https://s.example/api/v2/incidents/unresolved.json", True),
        ("azure-rss", "https://azure.status.microsoft/en-us/status/feed/", True),
        ("gcp", "https://status.cloud.google.com/incidents.json", False),
    ],
)
def test_snapshot_feeds_are_those_listing_only_open_incidents(
    kind: str, url: str, snapshot: bool
) -> None:
    assert is_snapshot(kind, url) is snapshot
