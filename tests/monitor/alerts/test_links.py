"""Where an alert links (monitor/alerts/links.py): the most specific page that exists, under
the public URL; nothing without one."""

from __future__ import annotations

import pytest

from monitor.alerts.links import alert_url, page_path

PUBLIC = "https://slamon.example.com"


@pytest.mark.parametrize(
    ("labels", "path"),
    [
        pytest.param({"target": "gpu-0", "provider": "aws"}, "/targets/gpu-0", id="target_down"),
        pytest.param(
            {"target": "gpu-0", "sla": "p", "month": "2026-12"}, "/targets/gpu-0", id="sla_breach"
        ),
        pytest.param({"provider": "aws", "incident": "i-1"}, "/providers/aws", id="incident"),
        pytest.param({"provider": "aws", "feed": "https://x/"}, "/providers/aws", id="feed_stale"),
        pytest.param({"provider": "aws", "month": "2026-11"}, "/providers/aws", id="credit_claim"),
        pytest.param({"vantage": "east"}, "/", id="vantage_blind"),
        pytest.param({"month": "2026-11", "policy_hash": "ab"}, "/", id="monthly_report"),
    ],
)
def test_an_alert_links_to_the_most_specific_page(labels: dict[str, str], path: str) -> None:
    assert page_path(labels) == path
    assert alert_url(PUBLIC, labels) == PUBLIC + path


def test_a_name_is_quoted_whole_so_it_stays_one_path_segment() -> None:
    assert page_path({"target": "gpu 0/a?b#c"}) == "/targets/gpu%200%2Fa%3Fb%23c"


@pytest.mark.parametrize("public", [None, ""])
def test_without_a_public_url_there_is_no_link(public: str | None) -> None:
    assert alert_url(public, {"target": "gpu-0"}) is None
