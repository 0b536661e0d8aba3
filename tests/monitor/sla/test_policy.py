"""Tests for SLA policies as data (monitor/sla/policy.py), the built-in terms (sla/terms/) and
the user's own read from config (sla/policy_config.py)."""

from __future__ import annotations

import dataclasses
from datetime import date
from typing import Any

import pytest

from monitor.sla.policy import ClaimRule, CreditTier, SlaPolicy
from monitor.sla.policy_config import policy_from_config
from monitor.sla.terms import BUILTIN_POLICIES

# The published numbers, one row per built-in: scope, target %, measurement, minimum downtime
# period, region rule, tiers as (below %, credit %), claim rule. Sources: comments in sla/terms/.
TERMS = {
    "aws-ec2-instance": (
        "instance", 99.5, "continuous", 0, None,
        [(99.5, 10), (99.0, 30), (95.0, 100)], "end_of_month_after_incident:2",
    ),
    "aws-ec2-region": (
        "region", 99.99, "continuous", 0, 2,
        [(99.99, 10), (99.0, 30), (95.0, 100)], "end_of_month_after_incident:2",
    ),
    "gcp-compute-single-vm": (
        "instance", 99.9, "whole_minutes", 60, None,
        [(99.9, 10), (95.0, 25), (90.0, 100)], "days_after_period:30",
    ),
    "gcp-compute-multizone": (
        "region", 99.99, "whole_minutes", 60, None,
        [(99.99, 10), (99.0, 25), (95.0, 50)], "days_after_period:30",
    ),
    "azure-vm-single-premium": (
        "instance", 99.9, "whole_minutes", 0, None,
        [(99.9, 10), (99.0, 25), (95.0, 100)], "end_of_month_after_incident:2",
    ),
    "azure-vm-availability-set": (
        "pool", 99.95, "whole_minutes", 0, None,
        [(99.95, 10), (99.0, 25), (95.0, 100)], "end_of_month_after_incident:2",
    ),
    "azure-vm-zones": (
        "region", 99.99, "whole_minutes", 0, None,
        [(99.99, 10), (99.0, 25), (95.0, 100)], "end_of_month_after_incident:2",
    ),
}  # fmt: skip


def user_config(**overrides: Any) -> dict[str, Any]:
    base: dict[str, Any] = {
        "name": "lambda-h100",
        "provider": "lambda",
        "target_pct": 99.5,
        "tiers": [{"below_pct": 99.5, "credit_pct": 10}, {"below_pct": 95, "credit_pct": 50}],
    }
    return {**base, **overrides}


# --- built-ins -------------------------------------------------------------------------------


def test_the_built_in_names_are_the_ones_the_config_accepts() -> None:
    assert set(BUILTIN_POLICIES) == set(TERMS)


@pytest.mark.parametrize("name", sorted(TERMS))
def test_each_built_in_states_the_published_terms(name: str) -> None:
    scope, target, measurement, min_s, zones, tiers, claim = TERMS[name]
    policy = BUILTIN_POLICIES[name]
    assert policy.name == name
    assert (policy.scope, policy.target_pct, policy.measurement) == (scope, target, measurement)
    assert (policy.min_downtime_s, policy.region_min_zones) == (min_s, zones)
    assert [(t.below_pct, t.credit_pct) for t in policy.tiers] == tiers
    assert str(policy.claim_deadline) == claim
    assert policy.exclude_maintenance
    assert policy.exclude_user_initiated  # the terms exclude downtime the customer caused


@pytest.mark.parametrize("name", sorted(TERMS))
def test_each_built_in_cites_its_source_and_the_date_of_its_terms(name: str) -> None:
    policy = BUILTIN_POLICIES[name]
    assert policy.source_url is not None
    assert policy.source_url.startswith("https://")
    assert isinstance(policy.terms_date, date)
    assert policy.provider == name.split("-")[0]


@pytest.mark.parametrize("name", sorted(TERMS))
def test_each_built_in_owes_its_first_credit_just_below_its_target(name: str) -> None:
    policy = BUILTIN_POLICIES[name]
    assert policy.tiers[0].below_pct == policy.target_pct
    credits = [t.credit_pct for t in policy.tiers]
    assert credits == sorted(credits)


@pytest.mark.parametrize("name", sorted(TERMS))
def test_a_built_in_reads_back_from_its_json(name: str) -> None:
    policy = BUILTIN_POLICIES[name]
    assert policy_from_config(policy.to_json()) == policy
    assert policy_from_config(policy.to_json()).policy_hash() == policy.policy_hash()


def test_policies_are_frozen() -> None:
    policy = BUILTIN_POLICIES["aws-ec2-instance"]
    with pytest.raises(dataclasses.FrozenInstanceError):
        policy.target_pct = 99.0  # type: ignore[misc]


# --- hash ------------------------------------------------------------------------------------


def test_the_policy_hash_is_pinned_for_a_fixed_policy() -> None:
    # A changed canonical form would silently change the hash every old report recorded.
    # Changed once on purpose: exclude_user_initiated (issue 31) is a setting the numbers
    # depend on, so it is in the canonical form (before it: 9764502d…be076ae0).
    policy = policy_from_config(user_config())
    assert policy.policy_hash() == (
        "a6fb60a3d4bcbc012bcecdf36bcb6a3db296e98cd5cb381d496672dfb41790ad"
    )


def test_the_hash_ignores_the_order_tiers_were_written_in() -> None:
    tiers = user_config()["tiers"]
    forward = policy_from_config(user_config(tiers=tiers))
    backward = policy_from_config(user_config(tiers=list(reversed(tiers))))
    assert forward == backward
    assert forward.policy_hash() == backward.policy_hash()


@pytest.mark.parametrize(
    "change",
    [
        pytest.param({"target_pct": 99.6}, id="target"),
        pytest.param({"measurement": "whole_minutes"}, id="measurement"),
        pytest.param({"min_downtime_s": 60}, id="min-downtime"),
        pytest.param({"exclude_maintenance": False}, id="maintenance"),
        pytest.param({"exclude_user_initiated": False}, id="user-initiated"),
        pytest.param({"tiers": [{"below_pct": 99.5, "credit_pct": 25}]}, id="tiers"),
        pytest.param({"claim_deadline": "days_after_period:30"}, id="claim"),
        pytest.param({"scope": "region", "region_min_zones": 2}, id="scope"),
        pytest.param({"title": "Lambda H100"}, id="title"),
        pytest.param({"terms_date": "2026-01-01"}, id="terms-date"),
    ],
)
def test_the_hash_changes_with_every_setting(change: dict[str, Any]) -> None:
    before = policy_from_config(user_config())
    assert policy_from_config(user_config(**change)).policy_hash() != before.policy_hash()


def test_the_built_ins_have_distinct_hashes() -> None:
    hashes = {p.policy_hash() for p in BUILTIN_POLICIES.values()}
    assert len(hashes) == len(BUILTIN_POLICIES)


# --- user policies ---------------------------------------------------------------------------


def test_a_minimal_user_policy_takes_the_defaults() -> None:
    policy = policy_from_config({"name": "runpod", "provider": "runpod", "target_pct": 99})
    assert policy == SlaPolicy(
        name="runpod",
        provider="runpod",
        title="runpod",
        scope="instance",
        target_pct=99.0,
        measurement="continuous",
        min_downtime_s=0.0,
        region_min_zones=None,
        exclude_maintenance=True,
        tiers=(),
        claim_deadline=None,
        source_url=None,
        terms_date=None,
        exclude_user_initiated=True,
    )


def test_a_full_user_policy_is_read_with_yaml_native_types() -> None:
    policy = policy_from_config(
        user_config(
            title="Lambda GPU Cloud — H100 instances",
            scope="pool",
            measurement="whole_minutes",
            min_downtime_s=300,
            exclude_maintenance=False,
            exclude_user_initiated=False,
            claim_deadline="end_of_second_billing_cycle",
            source_url="https://lambda.example/sla",
            terms_date=date(2026, 6, 1),
        )
    )
    assert policy.tiers == (CreditTier(99.5, 10), CreditTier(95.0, 50))
    assert policy.claim_deadline == ClaimRule("end_of_month_after_incident", 2)
    assert policy.terms_date == date(2026, 6, 1)
    assert policy.to_json()["terms_date"] == "2026-06-01"
    assert (policy.exclude_maintenance, policy.exclude_user_initiated) == (False, False)


@pytest.mark.parametrize(
    ("change", "field", "detail"),
    [
        pytest.param({"name": None}, "name", "required", id="no-name"),
        pytest.param({"target_pct": None}, "target_pct", "required", id="no-target"),
        pytest.param({"provider": ""}, "provider", "non-empty string", id="empty-provider"),
        pytest.param({"target_pct": "99.9%"}, "target_pct", "must be a number", id="text-target"),
        pytest.param({"target_pct": True}, "target_pct", "must be a number", id="bool-target"),
        pytest.param({"target_pct": 0}, "target_pct", "(0, 100]", id="zero-target"),
        pytest.param({"target_pct": 100.5}, "target_pct", "(0, 100]", id="target-above-100"),
        pytest.param({"target": 99.9}, "target", "unknown field", id="typo-field"),
        pytest.param({"scope": "zone"}, "scope", "must be one of", id="bad-scope"),
        pytest.param({"measurement": "minutes"}, "measurement", "must be one of", id="bad-measure"),
        pytest.param({"min_downtime_s": -1}, "min_downtime_s", "≥ 0", id="negative-minimum"),
        pytest.param({"min_downtime_s": "1m"}, "min_downtime_s", "number", id="text-minimum"),
        pytest.param({"region_min_zones": 2}, "region_min_zones", "region-scope", id="zones-inst"),
        pytest.param(
            {"scope": "region", "region_min_zones": 0}, "region_min_zones", "≥ 1", id="zero-zones"
        ),
        pytest.param(
            {"scope": "region", "region_min_zones": 1.5}, "region_min_zones", "integer", id="zones"
        ),
        pytest.param(
            {"exclude_maintenance": "yes"}, "exclude_maintenance", "true or false", id="f"
        ),
        pytest.param({"tiers": {"99": 10}}, "tiers", "must be a list", id="tiers-not-a-list"),
        pytest.param({"tiers": [{"below_pct": 99}]}, "tiers[0]", "credit_pct", id="tier-half"),
        pytest.param(
            {"tiers": [{"below_pct": 99, "credit_pct": "10%"}]},
            "tiers[0].credit_pct",
            "number",
            id="tier-text-credit",
        ),
        pytest.param(
            {"tiers": [{"below_pct": 99, "credit_pct": 150}]},
            "tiers[0].credit_pct",
            "[0, 100]",
            id="tier-credit-above-100",
        ),
        pytest.param(
            {"tiers": [{"below_pct": 99.9, "credit_pct": 10}]},
            "tiers",
            "above target_pct",
            id="tier-above-target",
        ),
        pytest.param(
            {"tiers": [{"below_pct": 99, "credit_pct": 10}, {"below_pct": 99, "credit_pct": 20}]},
            "tiers",
            "share a below_pct",
            id="duplicate-tiers",
        ),
        pytest.param(
            {"claim_deadline": "30 days"}, "claim_deadline", "days_after_period:N", id="bad-claim"
        ),
        pytest.param({"claim_deadline": 30}, "claim_deadline", "string", id="number-claim"),
        pytest.param({"terms_date": "June 2026"}, "terms_date", "YYYY-MM-DD", id="bad-date"),
    ],
)
def test_a_bad_user_policy_names_the_policy_and_the_field(
    change: dict[str, Any], field: str, detail: str
) -> None:
    with pytest.raises(ValueError, match=r"^sla policy") as caught:
        policy_from_config(user_config(**change))
    message = str(caught.value)
    if change.get("name", "") is not None:
        assert "'lambda-h100'" in message
    assert f": {field}: " in message
    assert detail in message


def test_a_policy_that_is_not_a_mapping_is_refused() -> None:
    with pytest.raises(ValueError, match="expected a mapping, got list"):
        policy_from_config([("name", "x")])  # type: ignore[arg-type]


# --- claim rules -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "rule"),
    [
        pytest.param("end_of_second_billing_cycle", ("end_of_month_after_incident", 2), id="aws"),
        pytest.param(
            "end_of_second_month_after_incident", ("end_of_month_after_incident", 2), id="azure"
        ),
        pytest.param("days_after_period:30", ("days_after_period", 30), id="google"),
        pytest.param(
            " end_of_month_after_incident:1 ", ("end_of_month_after_incident", 1), id="ws"
        ),
    ],
)
def test_claim_rules_read_the_providers_phrases(text: str, rule: tuple[str, int]) -> None:
    parsed = ClaimRule.parse(text)
    assert (parsed.kind, parsed.count) == rule
    assert ClaimRule.parse(str(parsed)) == parsed


@pytest.mark.parametrize("text", ["days_after_period", "days_after_period:-1", "weeks:2", ""])
def test_a_malformed_claim_rule_is_refused(text: str) -> None:
    with pytest.raises(ValueError, match="claim_deadline"):
        ClaimRule.parse(text)
