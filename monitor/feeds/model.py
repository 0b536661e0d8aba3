"""The normalized incident every feed parser returns (the contract in docs/DESIGN.md)."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Literal

Status = Literal[
    "investigating",
    "identified",
    "monitoring",
    "resolved",
    "postmortem",
    "scheduled",
    "in_progress",
    "verifying",
    "completed",
]
Impact = Literal["none", "minor", "major", "critical", "maintenance"]

STATUSES: tuple[str, ...] = Status.__args__  # type: ignore[attr-defined]
IMPACTS: tuple[str, ...] = Impact.__args__  # type: ignore[attr-defined]


@dataclass(frozen=True, slots=True)
class IncidentUpdate:
    """One public update the provider posted; ``body`` is plain text."""

    at: datetime
    status: Status
    body: str


@dataclass(frozen=True, slots=True)
class Incident:
    """One provider incident or maintenance, normalized. Times are aware UTC."""

    provider: str
    source_id: str
    title: str
    status: Status
    impact: Impact
    is_maintenance: bool
    started_at: datetime | None
    resolved_at: datetime | None
    url: str | None
    components: tuple[str, ...] = ()
    regions: tuple[str, ...] = ()
    updates: tuple[IncidentUpdate, ...] = field(default=())

    def to_json(self) -> dict[str, Any]:
        """The JSON object `slamon feeds parse --json` prints (docs/DESIGN.md field names)."""
        return {
            "provider": self.provider,
            "source_id": self.source_id,
            "title": self.title,
            "status": self.status,
            "impact": self.impact,
            "is_maintenance": self.is_maintenance,
            "started_at": _iso(self.started_at),
            "resolved_at": _iso(self.resolved_at),
            "url": self.url,
            "components": list(self.components),
            "regions": list(self.regions),
            "updates": [
                {"at": _iso(u.at), "status": u.status, "body": u.body} for u in self.updates
            ],
        }


def _iso(value: datetime | None) -> str | None:
    return value.isoformat().replace("+00:00", "Z") if value is not None else None


def stable_id(*parts: str | None) -> str:
    """A stable source id for feeds that give none: a hash of e.g. link and title."""
    joined = "\x1f".join(p or "" for p in parts)
    return hashlib.sha256(joined.encode("utf-8")).hexdigest()[:24]
