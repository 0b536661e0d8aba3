"""Microsoft Azure Virtual Machines' SLA: a single instance, an Availability Set and
Availability Zones."""

from __future__ import annotations

from datetime import date

from monitor.sla.policy import ClaimRule, CreditTier, Scope, SlaPolicy

_URL = (
    "https://www.microsoft.com/licensing/docs/view/Service-Level-Agreements-SLA-for-Online-Services"
)
# Microsoft: "For a claim related to Microsoft Azure, we must receive the claim within two
# months of the end of the billing month in which the Incident … occurred" (Online Services SLA
# general terms, quoted in the MicrosoftDocs azure-docs billing article).
_CLAIM = ClaimRule("end_of_month_after_incident", 2)
# The three Azure VM policies: Service Level Agreements for Online Services, "Virtual Machines",
# September 2026 edition (document dated 2026-09-01), read in a transcription of Microsoft's
# English DOCX. Downtime = "total accumulated minutes … that have no Virtual Machine
# Connectivity": we count whole minutes of each downtime period. Pro-rating to the "Maximum
# Available Minutes" (only while the VMs are deployed) is the caller's period/unknown time.
_TERMS = date(2026, 9, 1)
# Downtime Resource Health marks UserInitiated (the customer stopped, restarted or resized the
# VM) is not counted: the Online Services SLA excludes downtime the customer caused.
# Paraphrased: the exclusions' exact wording was not re-read for this setting.
_EXCLUDE_USER_INITIATED = True


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
        exclude_user_initiated=_EXCLUDE_USER_INITIATED,
        tiers=(CreditTier(target_pct, 10), CreditTier(99.0, 25), CreditTier(95.0, 100)),
        claim_deadline=_CLAIM,
        source_url=_URL,
        terms_date=_TERMS,
    )


# Single-Instance VM with Premium SSD (or Premium SSD v2 / Ultra Disk) for all disks: 99.9 %;
# credits 10 % below 99.9, 25 % below 99, 100 % below 95 — confirmed.
VM_SINGLE_PREMIUM = _azure_vm(
    name="azure-vm-single-premium",
    title="Azure Virtual Machines — single instance, Premium SSD / Ultra Disk",
    scope="instance",
    target_pct=99.9,
)

# Two or more VMs in one Availability Set (or Dedicated Host Group): connectivity to at least
# one of them 99.95 % (a pool with min_up = 1); credits 10 % below 99.95, 25 % below 99,
# 100 % below 95 — confirmed.
VM_AVAILABILITY_SET = _azure_vm(
    name="azure-vm-availability-set",
    title="Azure Virtual Machines — two or more instances in an Availability Set",
    scope="pool",
    target_pct=99.95,
)

# Two or more VMs across two or more Availability Zones of a region: 99.99 %; Downtime = no VM
# connectivity in the region (every zone down at once: region_min_zones=None); credits 10 %
# below 99.99, 25 % below 99, 100 % below 95 — confirmed.
VM_ZONES = _azure_vm(
    name="azure-vm-zones",
    title="Azure Virtual Machines — instances across two or more Availability Zones",
    scope="region",
    target_pct=99.99,
)
