"""Status and impact words, from each provider's vocabulary to the normalized incident's."""

from __future__ import annotations

import re

from monitor.feeds.model import Impact, Status

_STATUS_WORDS: dict[str, Status] = {
    "investigating": "investigating",
    "identified": "identified",
    "monitoring": "monitoring",
    "resolved": "resolved",
    "postmortem": "postmortem",
    "post-incident report": "postmortem",
    "scheduled": "scheduled",
    "in progress": "in_progress",
    "in_progress": "in_progress",
    "active": "in_progress",
    "verifying": "verifying",
    "completed": "completed",
    "complete": "completed",
    "closed": "resolved",
    "mitigated": "monitoring",
    "degraded": "investigating",
}


def normalize_status(word: str | None) -> Status | None:
    """The normalized status for a feed's status word, or None when the word is not a state
    (e.g. Statuspage's "Update", which means the previous state carries on)."""
    if not word:
        return None
    return _STATUS_WORDS.get(word.strip().lower().replace("_", " "))


# Statuses re-read for the other kind of item, so a maintenance only ever carries maintenance
# statuses (the contract in docs/DESIGN.md) and an incident only incident ones.
_AS_MAINTENANCE: dict[str, Status] = {
    "investigating": "in_progress",
    "identified": "in_progress",
    "monitoring": "verifying",
    "resolved": "completed",
    "postmortem": "completed",
}
_AS_INCIDENT: dict[str, Status] = {
    "scheduled": "investigating",
    "in_progress": "identified",
    "verifying": "monitoring",
    "completed": "resolved",
}


def as_kind(status: Status, maintenance: bool) -> Status:
    """``status`` re-read as a maintenance status or an incident status, as the item is."""
    table = _AS_MAINTENANCE if maintenance else _AS_INCIDENT
    return table.get(status, status)


def opening_status(maintenance: bool) -> Status:
    """The state of an item before any update says otherwise."""
    return "scheduled" if maintenance else "investigating"


def closed_status(maintenance: bool) -> Status:
    """The state of an item that has ended."""
    return "completed" if maintenance else "resolved"


_IMPACT_WORDS: dict[str, Impact] = {
    "none": "none",
    "minor": "minor",
    "major": "major",
    "critical": "critical",
    "maintenance": "maintenance",
    "low": "minor",
    "medium": "major",
    "high": "critical",
    "degraded": "minor",
    "degradedperformance": "minor",
    "partialoutage": "major",
    "majoroutage": "critical",
}


def normalize_impact(word: str | None, default: Impact = "none") -> Impact:
    """The normalized impact for a feed's impact/severity word; ``default`` when unknown."""
    if not word:
        return default
    return _IMPACT_WORDS.get(re.sub(r"[\s_-]", "", word.lower()), default)
