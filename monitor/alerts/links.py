"""Where an alert links to (pure): the page of slamon's for what it is about, under the public
URL people reach slamon at (``SLAMON_PUBLIC_URL``).

The most specific page that exists: a target's page (``/targets/NAME``: its history bars and its
outages) for an alert naming a target (``target_down``, ``gpu_health``, ``heartbeat_stalled``,
``training_slowdown``, ``sla_burn``, ``sla_breach``); a provider's page (``/providers/SLUG``: its
incidents) for one naming a provider and no target (``provider_incident``, ``feed_stale``,
``credit_claim_due``); the status page itself otherwise (``vantage_blind``, ``monthly_report``).
The API serves these paths (``monitor/api/pages.py`` takes its routes from here), so a link and
its page cannot drift apart.
"""

from __future__ import annotations

from collections.abc import Mapping
from urllib.parse import quote

TARGET_PAGE = "/targets/{name:path}"  # a route template: names may hold any character
PROVIDER_PAGE = "/providers/{slug}"
STATUS_PAGE = "/"


def target_path(name: str) -> str:
    return "/targets/" + quote(name, safe="")


def provider_path(slug: str) -> str:
    return "/providers/" + quote(slug, safe="")


def page_path(labels: Mapping[str, str]) -> str:
    """The path of the most specific page for an alert with ``labels``."""
    if labels.get("target"):
        return target_path(labels["target"])
    if labels.get("provider"):
        return provider_path(labels["provider"])
    return STATUS_PAGE


def alert_url(public_url: str | None, labels: Mapping[str, str]) -> str | None:
    """The link an alert with ``labels`` carries; None without a public URL (``public_url`` as
    ``Settings.public_url`` keeps it: http(s), no trailing slash)."""
    if not public_url:
        return None
    return public_url + page_path(labels)
