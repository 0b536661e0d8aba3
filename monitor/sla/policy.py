"""SLA policies as data: what a provider promises, how downtime is counted, what a miss earns.

The built-in policies transcribe the providers' published terms; each carries the URL and the
date of the version read, and the comment above it says what could and could not be confirmed.
Users describe their own (GPU clouds) in config, read by ``policy_from_config``.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import date
from types import MappingProxyType
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


# --- Reading user policies -------------------------------------------------------------------

_REQUIRED = ("name", "provider", "target_pct")
_DEFAULTS: Mapping[str, Any] = MappingProxyType(
    {
        "title": None,  # the name
        "scope": "instance",
        "measurement": "continuous",
        "min_downtime_s": 0,
        "region_min_zones": None,
        "exclude_maintenance": True,
        "tiers": [],
        "claim_deadline": None,
        "source_url": None,
        "terms_date": None,
    }
)


def policy_from_config(raw: Mapping[str, Any]) -> SlaPolicy:
    """Build a user policy from a config mapping (or from ``SlaPolicy.to_json()`` output).

    Required: ``name``, ``provider``, ``target_pct``. Optional, with defaults: ``title`` (the
    name), ``scope`` ("instance"), ``measurement`` ("continuous"), ``min_downtime_s`` (0),
    ``region_min_zones`` (null = all zones), ``exclude_maintenance`` (true), ``tiers`` (a list
    of ``{below_pct, credit_pct}``), ``claim_deadline`` (e.g. "days_after_period:30"),
    ``source_url``, ``terms_date`` (YYYY-MM-DD).

    Raises ``ValueError`` whose message starts with the policy and the field at fault, e.g.
    ``sla policy 'lambda-h100': target_pct: must be a number, got '99.9%'``.
    """
    if not isinstance(raw, Mapping):
        raise ValueError(f"sla policy: expected a mapping, got {type(raw).__name__}")
    label = f"sla policy {raw.get('name')!r}" if "name" in raw else "sla policy"
    try:
        return _build(raw)
    except ValueError as exc:
        raise ValueError(f"{label}: {exc}") from None


def _build(raw: Mapping[str, Any]) -> SlaPolicy:
    unknown = sorted(set(raw) - set(_REQUIRED) - set(_DEFAULTS))
    if unknown:
        known = ", ".join((*_REQUIRED, *_DEFAULTS))
        raise ValueError(f"{unknown[0]}: unknown field (known fields: {known})")
    missing = [key for key in _REQUIRED if raw.get(key) is None]
    if missing:
        raise ValueError(f"{missing[0]}: required")
    values = {**_DEFAULTS, **raw}
    return SlaPolicy(
        name=_text(values, "name"),
        provider=_text(values, "provider"),
        title=_text(values, "title") if values["title"] is not None else _text(values, "name"),
        scope=cast(Scope, _choice(values, "scope", SCOPES)),
        target_pct=_number(values, "target_pct"),
        measurement=cast(Measurement, _choice(values, "measurement", MEASUREMENTS)),
        min_downtime_s=_number(values, "min_downtime_s"),
        region_min_zones=_optional_int(values, "region_min_zones"),
        exclude_maintenance=_flag(values, "exclude_maintenance"),
        tiers=_tiers(values["tiers"]),
        claim_deadline=_claim(values["claim_deadline"]),
        source_url=None if values["source_url"] is None else _text(values, "source_url"),
        terms_date=_date(values["terms_date"]),
    )


def _text(values: Mapping[str, Any], key: str) -> str:
    value = values[key]
    if not isinstance(value, str) or not value.strip():
        raise ValueError(f"{key}: must be a non-empty string, got {value!r}")
    return value


def _choice(values: Mapping[str, Any], key: str, allowed: tuple[str, ...]) -> str:
    value = values[key]
    if value not in allowed:
        raise ValueError(f"{key}: must be one of {', '.join(allowed)}, got {value!r}")
    return cast(str, value)


def _number(values: Mapping[str, Any], key: str) -> float:
    value = values[key]
    if isinstance(value, bool) or not isinstance(value, int | float) or value != value:
        raise ValueError(f"{key}: must be a number, got {value!r}")
    return float(value)


def _optional_int(values: Mapping[str, Any], key: str) -> int | None:
    value = values[key]
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int):
        raise ValueError(f"{key}: must be an integer or null, got {value!r}")
    return value


def _flag(values: Mapping[str, Any], key: str) -> bool:
    value = values[key]
    if not isinstance(value, bool):
        raise ValueError(f"{key}: must be true or false, got {value!r}")
    return value


def _tiers(value: Any) -> tuple[CreditTier, ...]:
    if not isinstance(value, list | tuple):
        raise ValueError(f"tiers: must be a list of {{below_pct, credit_pct}}, got {value!r}")
    tiers = []
    for i, item in enumerate(value):
        if not isinstance(item, Mapping) or set(item) != {"below_pct", "credit_pct"}:
            raise ValueError(f"tiers[{i}]: must be {{below_pct: …, credit_pct: …}}, got {item!r}")
        try:
            tiers.append(
                CreditTier(_number(item, "below_pct"), _number(item, "credit_pct")),
            )
        except ValueError as exc:
            raise ValueError(f"tiers[{i}].{str(exc).removeprefix('tiers: ')}") from None
    return tuple(tiers)


def _claim(value: Any) -> ClaimRule | None:
    if value is None or isinstance(value, ClaimRule):
        return value
    if not isinstance(value, str):
        raise ValueError(
            f"claim_deadline: must be a string like 'days_after_period:30', got {value!r}"
        )
    return ClaimRule.parse(value)


def _date(value: Any) -> date | None:
    if value is None or isinstance(value, date):
        return value
    try:
        return date.fromisoformat(value)
    except (TypeError, ValueError):
        raise ValueError(f"terms_date: must be a date YYYY-MM-DD, got {value!r}") from None


# --- Built-in policies -----------------------------------------------------------------------
# Looked up on 2026-11-30 through stored copies of public pages and of public repositories that
# quote them; no live page was fetched. Where a number could only be read in a secondary copy,
# the comment says so.

_AWS_INSTANCE_TIERS = (CreditTier(99.5, 10), CreditTier(99.0, 30), CreditTier(95.0, 100))
_AWS_REGION_TIERS = (CreditTier(99.99, 10), CreditTier(99.0, 30), CreditTier(95.0, 100))
_AWS_CLAIM = ClaimRule("end_of_month_after_incident", 2)
_AWS_URL = "https://aws.amazon.com/compute/sla/"


def _aws_ec2(
    name: str,
    title: str,
    scope: Scope,
    target_pct: float,
    tiers: tuple[CreditTier, ...],
    region_min_zones: int | None = None,
) -> SlaPolicy:
    """An Amazon Compute SLA policy: continuous measurement, the 2022-05-05 terms."""
    return SlaPolicy(
        name=name,
        provider="aws",
        title=title,
        scope=scope,
        target_pct=target_pct,
        measurement="continuous",
        min_downtime_s=0,
        region_min_zones=region_min_zones,
        exclude_maintenance=True,
        tiers=tiers,
        claim_deadline=_AWS_CLAIM,
        source_url=_AWS_URL,
        terms_date=date(2022, 5, 5),
    )


# Amazon Compute SLA, Instance-Level SLA — https://aws.amazon.com/compute/sla/
# Terms: the version of 2022-05-05 (now on /compute/sla/historical/, the newest whose date we
# could read); every quotation of the current page we found gives the same numbers:
# Instance-Level Uptime Percentage ≥ 99.5 %; credits 10 % below 99.5, 30 % below 99.0,
# 100 % below 95.0; Unavailable = the Single EC2 Instance has no external connectivity; claim
# "by the end of the second billing cycle after which the incident occurred" (billing cycles
# taken as UTC calendar months). Not modelled: the automatic non-charge for an hour with more
# than six minutes of unavailability (applied by AWS without a claim). Measurement: AWS counts
# time in the Unavailable state; we count it continuously (exact to the probe).
AWS_EC2_INSTANCE = _aws_ec2(
    name="aws-ec2-instance",
    title="Amazon EC2 — Instance-Level SLA (single instance)",
    scope="instance",
    target_pct=99.5,
    tiers=_AWS_INSTANCE_TIERS,
)

# Amazon Compute SLA, Region-Level SLA — https://aws.amazon.com/compute/sla/ (2022-05-05, as
# above). Monthly Uptime Percentage ≥ 99.99 % for instances deployed across two or more AZs of a
# region; credits 10 % below 99.99, 30 % below 99.0, 100 % below 95.0. "Region Unavailable" =
# more than one AZ in which you run instances is unavailable at once (region_min_zones=2): the
# definition read in AWS's 2008 text; the 2022 text could not be read as far as its definition.
# Same claim rule.
AWS_EC2_REGION = _aws_ec2(
    name="aws-ec2-region",
    title="Amazon EC2 — Region-Level SLA (instances in two or more AZs)",
    scope="region",
    target_pct=99.99,
    tiers=_AWS_REGION_TIERS,
    region_min_zones=2,
)

_GCP_URL = "https://cloud.google.com/compute/sla"
# Google's claim form says a notification "must be submitted within 30 days from the time the
# customer becomes eligible … The eligibility window begins at the close of the month"
# (support.google.com/cloud/contact/cloud_platform_sla). Secondary copies of the current SLA
# text read "within 60 days"; we could not read Google's page that far, so we keep the earlier,
# safer date: a claim filed by day 30 is in time under either reading.
_GCP_CLAIM = ClaimRule("days_after_period", 30)


def _gcp_compute(
    name: str,
    title: str,
    scope: Scope,
    target_pct: float,
    tiers: tuple[CreditTier, ...],
    terms_date: date,
) -> SlaPolicy:
    """A Compute Engine SLA policy: whole Downtime Periods of at least one minute."""
    return SlaPolicy(
        name=name,
        provider="gcp",
        title=title,
        scope=scope,
        target_pct=target_pct,
        measurement="whole_minutes",
        min_downtime_s=60,
        region_min_zones=None,
        exclude_maintenance=True,
        tiers=tiers,
        claim_deadline=_GCP_CLAIM,
        source_url=_GCP_URL,
        terms_date=terms_date,
    )


# Compute Engine SLA, "A Single Instance of all other families" (Premium Tier, regions other
# than Mexico and Stockholm) — https://cloud.google.com/compute/sla (current page, undated in the
# stored copy; 2023-08-29 is the newest dated version seen). SLO ≥ 99.9 % — confirmed on Google's
# page (memory-optimized single instances: 99.95 %, not shipped). Credits 10 % below 99.9,
# 25 % below 95.0, 100 % below 90.0 — NOT confirmed on Google's page: read in a 2021 copy of the
# single-instance table (95–<99.5 → 10, 90–<95 → 25, <90 → 100) and in secondary copies of the
# current one. "Downtime Period" = one or more consecutive minutes of Downtime; partial minutes
# are not counted (whole_minutes, min 60 s) — read in verbatim copies of Google's 2020 text.
GCP_COMPUTE_SINGLE_VM = _gcp_compute(
    name="gcp-compute-single-vm",
    title="Compute Engine — a single instance (all other families)",
    scope="instance",
    target_pct=99.9,
    tiers=(CreditTier(99.9, 10), CreditTier(95.0, 25), CreditTier(90.0, 100)),
    terms_date=date(2023, 8, 29),
)

# Compute Engine SLA, "Instances in Multiple Zones" (Premium Tier) —
# https://cloud.google.com/compute/sla. SLO ≥ 99.99 % — confirmed on Google's page (current and
# the 2020-04-07 version). Downtime = loss of external connectivity or persistent disk access
# for all applicable running instances (region_min_zones=None: every zone down at once).
# Credits 10 % below 99.99, 25 % below 99.0, 50 % below 95.0 — from the 2020 text (a verbatim
# copy, and secondary summaries); NOT confirmed for the current page, whose lowest tier may be
# 100 % now that its 50 % cap on credits reads differently. terms_date is that 2020 version.
GCP_COMPUTE_MULTIZONE = _gcp_compute(
    name="gcp-compute-multizone",
    title="Compute Engine — instances in multiple zones",
    scope="region",
    target_pct=99.99,
    tiers=(CreditTier(99.99, 10), CreditTier(99.0, 25), CreditTier(95.0, 50)),
    terms_date=date(2020, 4, 7),
)

_AZURE_URL = (
    "https://www.microsoft.com/licensing/docs/view/Service-Level-Agreements-SLA-for-Online-Services"
)
# Microsoft: "For a claim related to Microsoft Azure, we must receive the claim within two
# months of the end of the billing month in which the Incident … occurred" (Online Services SLA
# general terms, quoted in the MicrosoftDocs azure-docs billing article).
_AZURE_CLAIM = ClaimRule("end_of_month_after_incident", 2)
# The three Azure VM policies: Service Level Agreements for Online Services, "Virtual Machines",
# September 2026 edition (document dated 2026-09-01), read in a transcription of Microsoft's
# English DOCX. Downtime = "total accumulated minutes … that have no Virtual Machine
# Connectivity": we count whole minutes of each downtime period. Pro-rating to the "Maximum
# Available Minutes" (only while the VMs are deployed) is the caller's period/unknown time.
_AZURE_TERMS = date(2026, 9, 1)


def _azure_vm(name: str, title: str, scope: Scope, target_pct: float) -> SlaPolicy:
    """An Azure VM policy: credits 10 % below the target, 25 % below 99, 100 % below 95."""
    return SlaPolicy(
        name=name,
        provider="azure",
        title=title,
        scope=scope,
        target_pct=target_pct,
        measurement="whole_minutes",
        min_downtime_s=0,
        region_min_zones=None,
        exclude_maintenance=True,
        tiers=(CreditTier(target_pct, 10), CreditTier(99.0, 25), CreditTier(95.0, 100)),
        claim_deadline=_AZURE_CLAIM,
        source_url=_AZURE_URL,
        terms_date=_AZURE_TERMS,
    )


# Single-Instance VM with Premium SSD (or Premium SSD v2 / Ultra Disk) for all disks: 99.9 %;
# credits 10 % below 99.9, 25 % below 99, 100 % below 95 — confirmed.
AZURE_VM_SINGLE_PREMIUM = _azure_vm(
    name="azure-vm-single-premium",
    title="Azure Virtual Machines — single instance, Premium SSD / Ultra Disk",
    scope="instance",
    target_pct=99.9,
)

# Two or more VMs in one Availability Set (or Dedicated Host Group): connectivity to at least
# one of them 99.95 % (a pool with min_up = 1); credits 10 % below 99.95, 25 % below 99,
# 100 % below 95 — confirmed.
AZURE_VM_AVAILABILITY_SET = _azure_vm(
    name="azure-vm-availability-set",
    title="Azure Virtual Machines — two or more instances in an Availability Set",
    scope="pool",
    target_pct=99.95,
)

# Two or more VMs across two or more Availability Zones of a region: 99.99 %; Downtime = no VM
# connectivity in the region (every zone down at once: region_min_zones=None); credits 10 %
# below 99.99, 25 % below 99, 100 % below 95 — confirmed.
AZURE_VM_ZONES = _azure_vm(
    name="azure-vm-zones",
    title="Azure Virtual Machines — instances across two or more Availability Zones",
    scope="region",
    target_pct=99.99,
)

BUILTIN_POLICIES: Mapping[str, SlaPolicy] = MappingProxyType(
    {
        policy.name: policy
        for policy in (
            AWS_EC2_INSTANCE,
            AWS_EC2_REGION,
            GCP_COMPUTE_SINGLE_VM,
            GCP_COMPUTE_MULTIZONE,
            AZURE_VM_SINGLE_PREMIUM,
            AZURE_VM_AVAILABILITY_SET,
            AZURE_VM_ZONES,
        )
    }
)


def policies_for(user_policies: Iterable[Mapping[str, Any]]) -> dict[str, SlaPolicy]:
    """The built-in SLA policies plus the user's own (config ``sla_policies``), which may take a
    built-in's name and so replace it."""
    return {**BUILTIN_POLICIES, **{p["name"]: policy_from_config(p) for p in user_policies}}
