"""A user's SLA policy read from config (``sla_policies``), and the policies a config names:
the built-ins with the user's own over them."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from datetime import date
from types import MappingProxyType
from typing import Any, cast

from monitor.sla.policy import (
    MEASUREMENTS,
    SCOPES,
    ClaimRule,
    CreditTier,
    Measurement,
    Scope,
    SlaPolicy,
)
from monitor.sla.terms import BUILTIN_POLICIES

_REQUIRED = ("name", "provider", "target_pct")
_DEFAULTS: Mapping[str, Any] = MappingProxyType(
    {
        "title": None,  # the name
        "scope": "instance",
        "measurement": "continuous",
        "min_downtime_s": 0,
        "region_min_zones": None,
        "exclude_maintenance": True,
        "exclude_user_initiated": True,
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
    ``region_min_zones`` (null = all zones), ``exclude_maintenance`` (true),
    ``exclude_user_initiated`` (true), ``tiers`` (a list of ``{below_pct, credit_pct}``),
    ``claim_deadline`` (e.g. "days_after_period:30"), ``source_url``, ``terms_date``
    (YYYY-MM-DD).

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
        exclude_user_initiated=_flag(values, "exclude_user_initiated"),
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


def policies_for(user_policies: Iterable[Mapping[str, Any]]) -> dict[str, SlaPolicy]:
    """The built-in SLA policies plus the user's own (config ``sla_policies``), which may take a
    built-in's name and so replace it."""
    return {**BUILTIN_POLICIES, **{p["name"]: policy_from_config(p) for p in user_policies}}
