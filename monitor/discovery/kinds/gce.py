"""``gce``: Google Compute Engine's instances, per project, in the zones named (or every zone,
through the aggregated list).

The listing asks Compute Engine's REST API (``instances.list`` or ``instances.aggregatedList``)
through google-cloud-compute, with Application Default Credentials; ``endpoint`` points it at
another base URL (a private endpoint, a test's local server), which is then called without
credentials. Each answer is turned into an :class:`Instance` by :func:`instance_from`, a pure
function of the published JSON shape (``networkInterfaces``, ``scheduling``, ``status`` …).

A spot or preemptible VM that Compute Engine stopped (``TERMINATED``) was preempted: the list
does not tell a preemption from a stop by the account, and a spot VM's stop is nearly always
the market's. A standard VM stopped is the account's own end.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from datetime import UTC, datetime
from typing import Annotated, Any

from pydantic import Field, StringConstraints

from monitor.discovery.kind import DiscoveryKind, SourceOptions, SweepContext
from monitor.discovery.model import Capacity, EndedBy, Instance, InstanceState
from monitor.errors import SweepFailed

RUNNING = frozenset({"RUNNING"})
ENDED = frozenset({"TERMINATED", "STOPPED", "SUSPENDED"})  # the rest: PROVISIONING, STAGING …
LabelKey = Annotated[str, StringConstraints(pattern=r"^[a-z][a-z0-9_-]{0,62}$")]
LabelValue = Annotated[str, StringConstraints(pattern=r"^[a-z0-9_-]{0,63}$")]


class GceOptions(SourceOptions):
    projects: tuple[str, ...] = Field(min_length=1)
    zones: tuple[str, ...] = ()  # empty: every zone (the aggregated list)
    label_filter: dict[LabelKey, LabelValue] = Field(default_factory=dict)
    endpoint: str | None = Field(default=None, pattern=r"^https?://")  # base URL, no credentials


def list_instances(options: GceOptions, context: SweepContext) -> Sequence[Instance]:
    from google.cloud import compute_v1  # loaded by a process that sweeps gce, no other

    found: dict[str, Instance] = {}
    with _client(options, compute_v1) as client:  # closes its HTTP session
        for project in options.projects:
            for zone in options.zones or [None]:
                with _failing_as_one_line(f"{project}/{zone or 'all zones'}"):
                    listed = _listed(client, compute_v1, project, zone, options, context)
                    for listed_zone, item in listed:
                        instance = instance_from(item, project, listed_zone)
                        if _labelled(instance, options.label_filter):
                            found.setdefault(instance.external_id, instance)
    return list(found.values())


def _client(options: GceOptions, compute_v1: Any) -> Any:
    with _failing_as_one_line(", ".join(options.projects)):
        if options.endpoint is None:
            return compute_v1.InstancesClient()  # Application Default Credentials
        from google.api_core.client_options import ClientOptions
        from google.auth.credentials import AnonymousCredentials

        # the REST transport keeps the scheme an endpoint names (http for a local server)
        return compute_v1.InstancesClient(
            credentials=AnonymousCredentials(),  # type: ignore[no-untyped-call]
            transport="rest",
            client_options=ClientOptions(api_endpoint=options.endpoint.rstrip("/")),
        )


def _listed(
    client: Any,
    compute_v1: Any,
    project: str,
    zone: str | None,
    options: GceOptions,
    context: SweepContext,
) -> Iterator[tuple[str | None, Mapping[str, Any]]]:
    """Each instance's JSON (its published field names) and the zone it was listed in, page
    after page. No retries here: the next sweep is the retry."""
    call = {"retry": None, "timeout": context.timeout_s}
    conditions = " AND ".join(f'(labels.{k} = "{v}")' for k, v in options.label_filter.items())
    query = {"project": project, **({"filter": conditions} if conditions else {})}
    as_json = compute_v1.Instance.to_dict
    if zone is not None:
        request = compute_v1.ListInstancesRequest(zone=zone, **query)
        for instance in client.list(request=request, **call):
            yield zone, as_json(instance, preserving_proto_field_name=False)
        return
    request = compute_v1.AggregatedListInstancesRequest(**query)
    for scope, scoped in client.aggregated_list(request=request, **call):
        scope_zone = scope.removeprefix("zones/") if scope.startswith("zones/") else None
        for instance in scoped.instances:
            yield scope_zone, as_json(instance, preserving_proto_field_name=False)


@contextmanager
def _failing_as_one_line(where: str) -> Iterator[None]:
    """Turn what google-cloud-compute raises into ``SweepFailed`` with one line naming
    ``gce``, the project and zone, and what Google said."""
    try:
        yield
    except SweepFailed:
        raise
    except Exception as exc:
        raise SweepFailed(f"gce {where}: {_said(exc)}"[:300]) from None


def _said(exc: Exception) -> str:
    """What Google said, in one line: the HTTP status and message of an API error, the cause
    of a network failure, or why an answer could not be read."""
    from google.api_core import exceptions as api
    from google.auth import exceptions as auth
    from google.protobuf.json_format import ParseError

    first = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
    if isinstance(exc, api.GoogleAPICallError):
        message = str(exc.message or "").strip().splitlines()
        text = message[0] if message else type(exc).__name__
        text = text.split(": ", 1)[1] if text.startswith(("GET ", "POST ")) else text
        return f"HTTP {exc.code} {type(exc).__name__}: {text}"
    if isinstance(exc, OSError):  # the transport's (requests') errors: a timeout, a refusal
        if any(cls.__name__.endswith("Timeout") for cls in type(exc).__mro__):
            return f"timed out: {first}"
        return f"unreachable: {_root(exc)}"
    if isinstance(exc, auth.GoogleAuthError):
        return f"no credentials: {first}"
    if isinstance(exc, KeyError):
        return f"malformed answer: an instance without {exc.args[0]!r}"
    if isinstance(exc, (ParseError, ValueError, TypeError)):
        return f"malformed answer: {first}"
    return f"{type(exc).__name__}: {first}"


def _root(exc: BaseException) -> str:
    """The innermost reason of a chained network error (``Connection refused``)."""
    while exc.__cause__ is not None or exc.__context__ is not None:
        exc = exc.__cause__ or exc.__context__  # type: ignore[assignment]
    text = str(exc).strip().splitlines()
    reason = text[-1] if text else type(exc).__name__
    return reason.rsplit("] ", 1)[-1] if "Errno" in reason else reason


def instance_from(
    item: Mapping[str, Any], project: str, listed_zone: str | None = None
) -> Instance:
    """One instance as Compute Engine's JSON describes it (pure); ``listed_zone``, the zone it
    was listed in, stands in where its own zone URL does not name one."""
    name = str(item["name"])
    zone = _named(item.get("zone"), "zones") or listed_zone
    machine_type = _named(item.get("machineType"), "machineTypes")
    capacity = _capacity(item.get("scheduling") or {})
    status = str(item.get("status") or "")
    fields: dict[str, Any] = {
        "instance_id": str(item["id"]),
        "name": name,
        "project": project,
        **({"zone": zone, "region": _region(zone)} if zone else {}),
        **({"machine_type": machine_type} if machine_type else {}),
        **_addresses(item.get("networkInterfaces") or []),
    }
    accelerators = item.get("guestAccelerators") or []
    gpus = sum(int(a.get("acceleratorCount") or 0) for a in accelerators) if accelerators else None
    state, ended_by = _state(status, capacity)
    message = str(item.get("statusMessage") or "")
    return Instance(
        external_id=str(item["id"]),
        name=name,
        state=state,
        fields=fields,
        tags={str(k): str(v) for k, v in (item.get("labels") or {}).items()},
        provider="gcp",
        region=_region(zone) if zone else None,
        zone=zone,
        instance_type=machine_type,
        gpus=gpus,
        capacity=capacity,
        ended_by=ended_by,
        ended_at=_when(item.get("lastStopTimestamp")) if state == "ended" else None,
        end_detail=(f"{status}: {message}" if message else status) if state == "ended" else "",
    )


def _capacity(scheduling: Mapping[str, Any]) -> Capacity:
    spot = scheduling.get("provisioningModel") == "SPOT" or bool(scheduling.get("preemptible"))
    return "spot" if spot else "on-demand"


def _state(status: str, capacity: Capacity) -> tuple[InstanceState, EndedBy | None]:
    if status in RUNNING:
        return "running", None
    if status not in ENDED:
        return "other", None
    if capacity == "spot" and status != "SUSPENDED":  # the market stops; it never suspends
        return "ended", "preempted"
    return "ended", "user"


def _addresses(interfaces: Sequence[Mapping[str, Any]]) -> dict[str, str]:
    if not interfaces:
        return {}
    first = interfaces[0]
    found = {"private_ip": first.get("networkIP")}
    for config in first.get("accessConfigs") or []:
        if config.get("natIP"):
            found["public_ip"] = config["natIP"]
            break
    return {key: str(value) for key, value in found.items() if value}


def _labelled(instance: Instance, wanted: Mapping[str, str]) -> bool:
    """The label filter, once more on our side (an endpoint that ignores ``filter``)."""
    return all(instance.tags.get(key) == value for key, value in wanted.items())


def _named(url: Any, collection: str) -> str | None:
    """The name after ``/<collection>/`` in a resource URL (``.../zones/us-central1-a``), or a
    bare name; None where the URL names no such resource (a scrubbed ``.../v1/projects``)."""
    if not url:
        return None
    text = str(url).rstrip("/")
    if "/" not in text:
        return text
    _, marker, after = text.rpartition(f"/{collection}/")
    return after if marker and "/" not in after else None


def _region(zone: str) -> str:
    """``us-central1-a`` -> ``us-central1``."""
    return zone.rsplit("-", 1)[0] if zone.count("-") >= 2 else zone


def _when(stamp: Any) -> datetime | None:
    if not stamp:
        return None
    try:
        when = datetime.fromisoformat(str(stamp).replace("Z", "+00:00"))
    except ValueError:
        return None
    return when.astimezone(UTC) if when.tzinfo else when.replace(tzinfo=UTC)


KIND = DiscoveryKind(
    name="gce",
    options=GceOptions,
    list_instances=list_instances,
    requires=("google.cloud.compute_v1",),
    extra="gcp",
)
