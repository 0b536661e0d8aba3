"""``azure``: a subscription's virtual machines, as Azure Resource Manager lists them.

One listing per sweep: ``GET /subscriptions/{id}/providers/Microsoft.Compute/virtualMachines
?statusOnly=true`` (``virtual_machines.list_all(status_only="true")`` of azure-mgmt-compute),
page after page by ``nextLink``, which answers each VM's model with its instance view's
statuses (its power state) in one call. The per-resource-group list cannot carry the instance
view without a ``$filter``, so ``resource_groups`` and ``tags`` are held to on slamon's side.
A VM's private address lives on its network interface, another resource (a call per VM), so
it is not a field: a template names the VM by ``{name}`` (its DNS name) instead.

Credentials come from ``DefaultAzureCredential``; ``token`` is a bearer token minted elsewhere
(a test's, a pipeline's). ``endpoint`` replaces the ARM base URL (a private endpoint, a test's
local server); azure-core refuses to send a bearer token over plain http unless a request
says ``enforce_https=False``, which the listing says for an ``http://`` endpoint only (one the
config names explicitly: a local server), so a real token is never sent in the clear to Azure.

ARM does not tell a Spot eviction from the account deallocating a Spot VM: a Spot VM
deallocated is counted ``preempted`` (an eviction with ``evictionPolicy: Deallocate``); one
evicted with ``Delete`` is gone, and is retired as missing.
"""

from __future__ import annotations

import re
import time
from collections.abc import Iterator, Mapping, Sequence
from contextlib import ExitStack, contextmanager
from datetime import UTC, datetime
from typing import Any

from pydantic import Field

from monitor.discovery.kind import DiscoveryKind, SourceOptions, SweepContext
from monitor.discovery.model import Capacity, EndedBy, Instance, InstanceState
from monitor.errors import SweepFailed

RUNNING = frozenset({"running"})
ENDED = frozenset({"deallocated", "stopped"})  # the rest: starting, stopping, deallocating …
SPOT_PRIORITIES = frozenset({"spot", "low"})
_ERRNO = re.compile(r"\[Errno -?\d+\] ([^'\"\)]+)")


class AzureOptions(SourceOptions):
    subscription: str = Field(min_length=1)
    resource_groups: tuple[str, ...] = ()  # empty: the whole subscription
    tags: dict[str, str] = Field(default_factory=dict)  # every one must match
    endpoint: str | None = Field(default=None, pattern=r"^https?://")  # the ARM base URL
    token: str | None = Field(default=None, repr=False)  # a bearer token, else the default chain


def list_instances(options: AzureOptions, context: SweepContext) -> Sequence[Instance]:
    # loaded by a process that sweeps azure, no other
    from azure.mgmt.compute import ComputeManagementClient

    groups = {group.lower() for group in options.resource_groups}
    found: dict[str, Instance] = {}
    with _failing_as_one_line(options.subscription), ExitStack() as closing:
        credential = closing.enter_context(_credential(options))
        client = closing.enter_context(
            ComputeManagementClient(
                credential,
                options.subscription,
                base_url=options.endpoint.rstrip("/") if options.endpoint else None,
                retry_total=0,  # the next sweep is the retry
                connection_timeout=context.timeout_s,
                read_timeout=context.timeout_s,
            )
        )
        plain_http = bool(options.endpoint and options.endpoint.startswith("http://"))
        call: dict[str, Any] = {"enforce_https": False} if plain_http else {}
        for vm in client.virtual_machines.list_all(status_only="true", **call):
            instance = instance_from(vm.as_dict())
            if groups and str(instance.fields.get("resource_group", "")).lower() not in groups:
                continue
            if all(instance.tags.get(key) == value for key, value in options.tags.items()):
                found.setdefault(instance.external_id, instance)
    return list(found.values())


class _StaticToken:
    """A ``TokenCredential`` of one bearer token, minted elsewhere."""

    def __init__(self, token: str) -> None:
        self.token = token

    def get_token(self, *scopes: str, **kwargs: Any) -> Any:
        from azure.core.credentials import AccessToken

        return AccessToken(self.token, int(time.time()) + 3600)

    def __enter__(self) -> _StaticToken:
        return self

    def __exit__(self, *exc: object) -> None:
        return None


def _credential(options: AzureOptions) -> Any:
    if options.token:
        return _StaticToken(options.token)
    from azure.identity import DefaultAzureCredential

    return DefaultAzureCredential()


@contextmanager
def _failing_as_one_line(subscription: str) -> Iterator[None]:
    """Turn what the Azure SDK raises into ``SweepFailed`` with one line naming ``azure``, the
    subscription, and what Azure said."""
    try:
        yield
    except SweepFailed:
        raise
    except Exception as exc:
        raise SweepFailed(f"azure subscription {subscription}: {_said(exc)}"[:300]) from None


def _said(exc: Exception) -> str:
    """What Azure said, in one line: the HTTP status and ARM error of a refusal, the cause of a
    network failure, or why an answer could not be read."""
    from azure.core import exceptions as az

    first = _first_line(exc)
    if isinstance(exc, az.DecodeError):
        return f"malformed answer: {first}"
    if isinstance(exc, az.ClientAuthenticationError) and exc.status_code is None:
        return f"no credentials: {first}"  # the credential failed before any request
    if isinstance(exc, az.HttpResponseError) and exc.status_code is not None:
        return f"HTTP {exc.status_code} {exc.reason or ''}: {first}".replace(" :", ":")
    if isinstance(exc, az.ServiceResponseError):
        return f"no answer: {_errno(first)}"  # a read timed out, or the connection dropped
    if isinstance(exc, az.ServiceRequestError):
        return f"unreachable: {_errno(first)}"
    if isinstance(exc, KeyError):
        return f"malformed answer: a VM without {exc.args[0]!r}"
    if isinstance(exc, (ValueError, TypeError, AttributeError)):
        return f"malformed answer: {type(exc).__name__}: {first}"
    return f"{type(exc).__name__}: {first}"


def _first_line(exc: BaseException) -> str:
    lines = [line.strip() for line in str(exc).splitlines() if line.strip()]
    return lines[0] if lines else type(exc).__name__


def _errno(text: str) -> str:
    """``Connection refused`` out of urllib3's long sentence, where it says so."""
    found = _ERRNO.search(text)
    return found.group(1).strip() if found else text


def instance_from(item: Mapping[str, Any]) -> Instance:
    """One VM as ARM's JSON describes it, with its instance view's statuses (pure)."""
    props = item.get("properties") or {}
    arm_id = str(item["id"])
    name = str(item["name"])
    vm_size = (props.get("hardwareProfile") or {}).get("vmSize")
    location = item.get("location")
    zones = item.get("zones") or []
    statuses = (props.get("instanceView") or {}).get("statuses") or []
    capacity: Capacity = (
        "spot" if str(props.get("priority") or "").lower() in SPOT_PRIORITIES else "on-demand"
    )
    power = _power(statuses)
    state, ended_by = _state(power, capacity)
    tags = {str(k): str(v) for k, v in (item.get("tags") or {}).items()}
    fields: dict[str, Any] = {
        "name": name,
        "vm_id": props.get("vmId"),
        "resource_group": _resource_group(arm_id),
        "location": location,
        "vm_size": vm_size,
    }
    return Instance(
        external_id=str(props.get("vmId") or arm_id),
        name=name,
        state=state,
        fields={key: value for key, value in fields.items() if value},
        tags=tags,
        provider="azure",
        region=str(location) if location else None,
        zone=str(zones[0]) if zones else None,
        instance_type=str(vm_size) if vm_size else None,
        capacity=capacity,
        ended_by=ended_by,
        ended_at=_last_operation(statuses) if state == "ended" else None,
        end_detail="; ".join(_displayed(statuses)) if state == "ended" else "",
    )


def _power(statuses: Sequence[Mapping[str, Any]]) -> str | None:
    """``running`` of ``PowerState/running``; None where the instance view says nothing."""
    for status in statuses:
        code = str(status.get("code") or "")
        if code.startswith("PowerState/"):
            return code.removeprefix("PowerState/").lower()
    return None


def _state(power: str | None, capacity: Capacity) -> tuple[InstanceState, EndedBy | None]:
    if power in RUNNING:
        return "running", None
    if power not in ENDED:
        return "other", None  # starting, stopping, deallocating, unknown, or not said
    if capacity == "spot" and power == "deallocated":  # an eviction deallocates
        return "ended", "preempted"
    return "ended", "user"


def _displayed(statuses: Sequence[Mapping[str, Any]]) -> list[str]:
    return [str(s.get("displayStatus") or s.get("code")) for s in statuses if s.get("code")]


def _last_operation(statuses: Sequence[Mapping[str, Any]]) -> datetime | None:
    """When the VM's last operation (the deallocation, the stop) completed, where ARM says."""
    for status in statuses:
        if str(status.get("code") or "").startswith("ProvisioningState/") and status.get("time"):
            try:
                when = datetime.fromisoformat(str(status["time"]).replace("Z", "+00:00"))
            except ValueError:
                return None
            return when.astimezone(UTC) if when.tzinfo else when.replace(tzinfo=UTC)
    return None


def _resource_group(arm_id: str) -> str | None:
    """``ml`` of ``/subscriptions/…/resourceGroups/ml/providers/…``."""
    parts = arm_id.strip("/").split("/")
    lowered = [part.lower() for part in parts]
    if "resourcegroups" in lowered:
        at = lowered.index("resourcegroups") + 1
        return parts[at] if at < len(parts) else None
    return None


KIND = DiscoveryKind(
    name="azure",
    options=AzureOptions,
    list_instances=list_instances,
    requires=("azure.mgmt.compute", "azure.identity"),
    extra="azure",
)
