"""SLA policies as data: what a provider promises, how downtime is counted, what a miss earns.

The providers' own terms are in ``terms/`` (one module per provider, ``BUILTIN_POLICIES``);
users describe their own (GPU clouds) in config, read by ``policy_config.policy_from_config``.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from datetime import date
from typing import Any, Literal, cast, get_args

Scope = Literal["instance", "region", "pool"]
Measurement = Literal["continuous", "whole_minutes"]
ClaimKind = Literal["end_of_month_after_incident", "days_after_period"]

SCOPES: tuple[str, ...] = get_args(Scope)
MEASUREMENTS: tuple[str, ...] = get_args(Measurement)
CLAIM_KINDS: tuple[str, ...] = get_args(ClaimKind)

# Spellings of the providers' own phrases, accepted wherever a claim rule is read.
_CLAIM_ALIASES = {
    "end_of_second_billing_cycle": "end_of_month_after_incident:2",
    "end_of_second_month_after_incident": "end_of_month_after_incident:2",
}


@dataclass(frozen=True, slots=True)
class CreditTier:
    """Monthly uptime strictly below ``below_pct`` earns ``credit_pct`` of the month's bill."""

    below_pct: float
    credit_pct: float

    def __post_init__(self) -> None:
        if not 0 < self.below_pct <= 100:
            raise ValueError(f"tiers: below_pct: must be in (0, 100], got {self.below_pct!r}")
        if not 0 <= self.credit_pct <= 100:
            raise ValueError(f"tiers: credit_pct: must be in [0, 100], got {self.credit_pct!r}")
        # Floats throughout, so 10 and 10.0 give the same JSON and the same policy hash.
        object.__setattr__(self, "below_pct", float(self.below_pct))
        object.__setattr__(self, "credit_pct", float(self.credit_pct))


@dataclass(frozen=True, slots=True)
class ClaimRule:
    """When a credit claim must reach the provider.

    ``end_of_month_after_incident:N`` — by the end of the N-th calendar month after the month
    of the incident (AWS: "end of the second billing cycle after which the incident occurred";
    Azure: "within two months of the end of the billing month in which the Incident occurred").
    ``days_after_period:N`` — within N days after the measured period (month) ends (Google).
    """

    kind: ClaimKind
    count: int

    def __post_init__(self) -> None:
        if self.kind not in CLAIM_KINDS:
            raise ValueError(
                f"claim_deadline: kind must be one of {CLAIM_KINDS}, got {self.kind!r}"
            )
        if isinstance(self.count, bool) or not isinstance(self.count, int) or self.count < 0:
            raise ValueError(f"claim_deadline: count must be an integer ≥ 0, got {self.count!r}")

    @classmethod
    def parse(cls, text: str) -> ClaimRule:
        """Read ``"kind:N"`` or one of the aliases; ``ValueError`` names the field."""
        spec = _CLAIM_ALIASES.get(text.strip(), text.strip())
        kind, sep, count = spec.partition(":")
        if not sep or kind not in CLAIM_KINDS or not count.isdigit():
            raise ValueError(
                f"claim_deadline: expected one of {', '.join(f'{k}:N' for k in CLAIM_KINDS)} "
                f"or {', '.join(_CLAIM_ALIASES)}, got {text!r}"
            )
        return cls(cast(ClaimKind, kind), int(count))

    def __str__(self) -> str:
        return f"{self.kind}:{self.count}"


@dataclass(frozen=True, slots=True)
class SlaPolicy:
    """One SLA: its scope, target, how downtime is measured, exclusions and credit tiers.

    ``region_min_zones`` (region scope only): the region counts as down while at least this many
    of the zones holding the user's instances are down at once; ``None`` means all of them.
    ``min_downtime_s``: a downtime period shorter than this is not counted (0 counts all).
    ``tiers`` are kept sorted by ``below_pct``, highest first. ``claim_deadline`` is ``None``
    when the terms state no claim window.

    Exclusions: ``exclude_maintenance`` leaves out planned maintenance, the windows in config
    and the provider's own maintenance the user scheduled or accepted (an accepted
    ``scheduled_maintenance`` account event); ``exclude_user_initiated`` leaves out downtime
    the provider's record marks as the user's own doing (a ``user_initiated`` account event:
    a restart, a resize, a stop).
    """

    name: str
    provider: str
    title: str
    scope: Scope
    target_pct: float
    measurement: Measurement
    min_downtime_s: float
    region_min_zones: int | None
    exclude_maintenance: bool
    tiers: tuple[CreditTier, ...]
    claim_deadline: ClaimRule | None
    source_url: str | None
    terms_date: date | None
    exclude_user_initiated: bool = True

    def __post_init__(self) -> None:
        for field in ("name", "provider", "title"):
            if not isinstance(getattr(self, field), str) or not getattr(self, field).strip():
                raise ValueError(f"{field}: must be a non-empty string")
        if self.scope not in SCOPES:
            raise ValueError(f"scope: must be one of {SCOPES}, got {self.scope!r}")
        if self.measurement not in MEASUREMENTS:
            raise ValueError(
                f"measurement: must be one of {MEASUREMENTS}, got {self.measurement!r}"
            )
        if not 0 < self.target_pct <= 100:
            raise ValueError(f"target_pct: must be in (0, 100], got {self.target_pct!r}")
        if not self.min_downtime_s >= 0:
            raise ValueError(f"min_downtime_s: must be ≥ 0, got {self.min_downtime_s!r}")
        self._check_region_rule()
        self._check_tiers()
        object.__setattr__(self, "target_pct", float(self.target_pct))
        object.__setattr__(self, "min_downtime_s", float(self.min_downtime_s))

    def _check_region_rule(self) -> None:
        zones = self.region_min_zones
        if zones is None:
            return
        if self.scope != "region":
            raise ValueError(f"region_min_zones: only a region-scope policy has one ({self.scope})")
        if isinstance(zones, bool) or not isinstance(zones, int) or zones < 1:
            raise ValueError(f"region_min_zones: must be an integer ≥ 1 or null, got {zones!r}")

    def _check_tiers(self) -> None:
        tiers = tuple(sorted(self.tiers, key=lambda t: t.below_pct, reverse=True))
        if len({t.below_pct for t in tiers}) != len(tiers):
            raise ValueError("tiers: two tiers share a below_pct")
        if tiers and tiers[0].below_pct > self.target_pct:
            raise ValueError(
                f"tiers: below_pct {tiers[0].below_pct} is above target_pct {self.target_pct}: "
                "meeting the target cannot earn a credit"
            )
        object.__setattr__(self, "tiers", tiers)

    def to_json(self) -> dict[str, Any]:
        """Every setting, as JSON-ready values; ``policy_from_config`` reads it back."""
        return {
            "name": self.name,
            "provider": self.provider,
            "title": self.title,
            "scope": self.scope,
            "target_pct": self.target_pct,
            "measurement": self.measurement,
            "min_downtime_s": self.min_downtime_s,
            "region_min_zones": self.region_min_zones,
            "exclude_maintenance": self.exclude_maintenance,
            "exclude_user_initiated": self.exclude_user_initiated,
            "tiers": [{"below_pct": t.below_pct, "credit_pct": t.credit_pct} for t in self.tiers],
            "claim_deadline": None if self.claim_deadline is None else str(self.claim_deadline),
            "source_url": self.source_url,
            "terms_date": None if self.terms_date is None else self.terms_date.isoformat(),
        }

    def policy_hash(self) -> str:
        """sha256 (hex) of the canonical JSON of ``to_json()``: sorted keys, no spaces, UTF-8.

        Reports store it beside the settings so their numbers can be reproduced; it changes
        whenever any setting does, and never otherwise.
        """
        canonical = json.dumps(
            self.to_json(), sort_keys=True, separators=(",", ":"), ensure_ascii=False
        )
        return hashlib.sha256(canonical.encode("utf-8")).hexdigest()
