"""The built-in SLA policies: each provider's published terms as data, one module per provider
(``aws``, ``gcp``, ``azure``) and one line each in ``BUILTIN_POLICIES``.

Each policy carries the URL and the date of the version read, and the comment above it says
what could and could not be confirmed. Looked up on 2026-11-30 through stored copies of public
pages and of public repositories that quote them; no live page was fetched. Where a number could
only be read in a secondary copy, the comment says so.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType

from monitor.sla.policy import SlaPolicy
from monitor.sla.terms import aws, azure, gcp

BUILTIN_POLICIES: Mapping[str, SlaPolicy] = MappingProxyType(
    {
        policy.name: policy
        for policy in (
            aws.EC2_INSTANCE,
            aws.EC2_REGION,
            gcp.COMPUTE_SINGLE_VM,
            gcp.COMPUTE_MULTIZONE,
            azure.VM_SINGLE_PREMIUM,
            azure.VM_AVAILABILITY_SET,
            azure.VM_ZONES,
        )
    }
)
