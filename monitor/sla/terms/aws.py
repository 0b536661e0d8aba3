"""Amazon EC2's SLA (the Amazon Compute SLA): an instance-level and a region-level policy."""

from __future__ import annotations

from datetime import date

from monitor.sla.policy import ClaimRule, CreditTier, Scope, SlaPolicy

_INSTANCE_TIERS = (CreditTier(99.5, 10), CreditTier(99.0, 30), CreditTier(95.0, 100))
_REGION_TIERS = (CreditTier(99.99, 10), CreditTier(99.0, 30), CreditTier(95.0, 100))
_CLAIM = ClaimRule("end_of_month_after_incident", 2)
_URL = "https://aws.amazon.com/compute/sla/"
# Downtime the account's record marks as its own doing (the user stopped, rebooted or resized
# the instance) is not counted: the Compute SLA's exclusions leave out unavailability that
# results from the customer's own actions. Paraphrased: the exclusions' exact wording was not
# re-read for this setting.
_EXCLUDE_USER_INITIATED = True


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
        exclude_user_initiated=_EXCLUDE_USER_INITIATED,
        tiers=tiers,
        claim_deadline=_CLAIM,
        source_url=_URL,
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
EC2_INSTANCE = _aws_ec2(
    name="aws-ec2-instance",
    title="Amazon EC2 — Instance-Level SLA (single instance)",
    scope="instance",
    target_pct=99.5,
    tiers=_INSTANCE_TIERS,
)

# Amazon Compute SLA, Region-Level SLA — https://aws.amazon.com/compute/sla/ (2022-05-05, as
# above). Monthly Uptime Percentage ≥ 99.99 % for instances deployed across two or more AZs of a
# region; credits 10 % below 99.99, 30 % below 99.0, 100 % below 95.0. "Region Unavailable" =
# more than one AZ in which you run instances is unavailable at once (region_min_zones=2): the
# definition read in AWS's 2008 text; the 2022 text could not be read as far as its definition.
# Same claim rule.
EC2_REGION = _aws_ec2(
    name="aws-ec2-region",
    title="Amazon EC2 — Region-Level SLA (instances in two or more AZs)",
    scope="region",
    target_pct=99.99,
    tiers=_REGION_TIERS,
    region_min_zones=2,
)
