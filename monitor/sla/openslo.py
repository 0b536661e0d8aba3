"""SLA policies as OpenSLO v1 documents, and back: SLOs that leave slamon and return unchanged.

What one SLO says. slamon judges a target against its policy's uptime objective over each
calendar month in UTC, counting downtime exactly from its probes. In OpenSLO v1
(https://github.com/OpenSLO/OpenSLO, README "SLO" and "Objectives") that is, per target:

- ``timeWindow: [{duration: 1M, isRolling: false, calendar: {startTime: "2020-01-01 00:00:00",
  timeZone: Etc/UTC}}]``: calendar months from a month's first midnight, in UTC. The zone is
  written ``Etc/UTC`` (the IANA name of UTC) because the published schema's ``timeZone`` pattern
  wants an ``Area/Location`` name; ``UTC`` and its other IANA aliases are read back too.
- ``budgetingMethod: Timeslices``: good time over all time, as slamon budgets downtime. One time
  slice is one probe interval, the finest time slamon can judge; a slice is good when the target
  was available for at least half of it (``timeSliceTarget: 0.5``), which counts an outage of k
  probe intervals as k bad slices whatever the slices' phase against the probes. The slice is
  written in the spec's duration shorthand when it is whole minutes (``2m``) and otherwise as a
  number of minutes (``0.25`` for 15 s), which the spec reads as minutes.
- ``objectives: [{target: 0.995, ...}]``: the policy's ``target_pct`` as a fraction. OpenSLO's
  targets lie below 1, so a 100 % policy has no OpenSLO form and is left out (``Unexportable``).
- ``indicator``: a ratio of two counters slamon serves on ``/metrics`` (``counter: true``): bad =
  ``slamon_target_downtime_seconds_total``, total = ``slamon_target_observed_seconds_total``,
  selected by the ``target`` label, so availability = 1 - increase(downtime) / increase(observed).
- ``service``: the policy's provider (one ``Service`` document per provider).

What OpenSLO cannot say (credit tiers, exclusions of maintenance and of the user's own doing,
scope, measurement, minimum downtime, the claim deadline, the terms' source and date) travels in
``metadata.annotations`` under ``slamon.dev/``, with the exact policy name, provider, title, the
target and its probe interval, so reading the documents back gives the same ``SlaPolicy``
(``read_documents``). Annotation values are strings, as the spec's text has them ("a dashboard
url" is its own example) and the OpenSLO Go SDK checks only their keys.

Reading back, an objective is refused (``OpenSloError``, one line) when slamon cannot measure
what it asks: a time slice shorter than the target's probe interval, a window other than the
calendar month in UTC, occurrence budgeting, more than one objective per SLO, or a policy two
SLOs describe differently.

Pure: dicts in, dicts out; the command line reads and writes the YAML (``monitor/cli``).
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from monitor.sla.policy import SlaPolicy
from monitor.sla.policy_config import policy_from_config

API_VERSION = "openslo/v1"
DOWNTIME_METRIC = "slamon_target_downtime_seconds_total"
OBSERVED_METRIC = "slamon_target_observed_seconds_total"
TARGET_LABEL = "target"
MONTH = "1M"
CALENDAR_START = "2020-01-01 00:00:00"
TIME_ZONE = "Etc/UTC"
BUDGETING_METHOD = "Timeslices"
TIME_SLICE_TARGET = 0.5
PREFIX = "slamon.dev/"

# The IANA names of UTC itself (tzdata's "backward" links to Etc/UTC and Etc/GMT).
UTC_ZONES = frozenset(
    {
        "UTC",
        "Etc/UTC",
        "Etc/UCT",
        "UCT",
        "Etc/Universal",
        "Universal",
        "Etc/Zulu",
        "Zulu",
        "GMT",
        "Etc/GMT",
        "Etc/GMT0",
        "Etc/GMT+0",
        "Etc/GMT-0",
        "GMT0",
        "GMT+0",
        "GMT-0",
        "Etc/Greenwich",
        "Greenwich",
    }
)

# metadata.annotations: the key under slamon.dev/, and the policy field it carries (None: the
# target's own facts).
ANNOTATIONS: Mapping[str, str | None] = {
    "policy": "name",
    "provider": "provider",
    "title": "title",
    "scope": "scope",
    "measurement": "measurement",
    "min-downtime-s": "min_downtime_s",
    "region-min-zones": "region_min_zones",
    "exclude-maintenance": "exclude_maintenance",
    "exclude-user-initiated": "exclude_user_initiated",
    "credit-tiers": "tiers",
    "claim-deadline": "claim_deadline",
    "source-url": "source_url",
    "terms-date": "terms_date",
    "target": None,
    "probe-interval": None,
}

_DNS_LABEL = re.compile(r"^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$")
_SHORTHAND = re.compile(r"^([1-9][0-9]*)([mhdwMQY])$")
# The OpenSLO Go SDK's lengths for the shorthand's units (DurationShorthand.Duration).
_SHORTHAND_SECONDS = {
    "m": 60,
    "h": 3600,
    "d": 86400,
    "w": 7 * 86400,
    "M": 30 * 86400,
    "Q": 90 * 86400,
    "Y": 365 * 86400,
}
_MAX_DESCRIPTION = 1050
# A slice written as minutes (0.25) reads back to the microsecond, not to the last bit.
_SLACK_S = 1e-6
_MAX_DISPLAY_NAME = 63


class OpenSloError(ValueError):
    """A document slamon cannot read, or an objective it cannot measure: one line, naming it."""


@dataclass(frozen=True, slots=True)
class TargetObjective:
    """One target judged by one SLA policy, probed every ``interval_s``: what one SLO says."""

    target: str
    policy: SlaPolicy
    interval_s: float


@dataclass(frozen=True, slots=True)
class ReadObjective:
    """One SLO read back: its name, the policy it states, the target it names (if any), its
    time slice, and the probe interval the file states (``slamon.dev/probe-interval``)."""

    slo: str
    policy: SlaPolicy
    target: str | None
    time_slice_s: float
    interval_s: float | None


def exportable(policy: SlaPolicy) -> bool:
    """Whether OpenSLO can state the policy's objective (its targets lie below 1)."""
    return policy.target_pct < 100


def dns_label(text: str) -> str:
    """An RFC 1123 label (OpenSLO's ``metadata.name``) for ``text``: the text itself when it is
    one, else its lower-cased letters, digits and dashes with a short hash of the original, so
    two names that clean to the same label still get two."""
    if _DNS_LABEL.fullmatch(text):
        return text
    cleaned = re.sub(r"-{2,}", "-", re.sub(r"[^a-z0-9-]", "-", text.lower())).strip("-")
    digest = hashlib.sha256(text.encode("utf-8")).hexdigest()[:6]
    return f"{cleaned[:56].rstrip('-')}-{digest}" if cleaned else digest


def promql_string(value: str) -> str:
    """``value`` as a PromQL string literal (Go's escapes: a JSON string is one)."""
    return json.dumps(value, ensure_ascii=False)


def selector(metric: str, target: str) -> str:
    """The series of ``metric`` for one target."""
    return f"{metric}{{{TARGET_LABEL}={promql_string(target)}}}"


def seconds_text(seconds: float) -> str:
    """``15s``, ``1.5s``: a duration as the config writes it."""
    return f"{int(seconds)}s" if float(seconds).is_integer() else f"{seconds!r}s"


def time_slice_window(seconds: float) -> str | float:
    """A probe interval as ``timeSliceWindow``: shorthand for whole minutes or hours, else the
    number of minutes (the spec's default unit for a number)."""
    if seconds % 3600 == 0:
        return f"{int(seconds // 3600)}h"
    if seconds % 60 == 0:
        return f"{int(seconds // 60)}m"
    return seconds / 60


# ---------------------------------------------------------------------------------- export


def export_documents(objectives: Sequence[TargetObjective]) -> list[dict[str, Any]]:
    """One ``Service`` per provider (sorted), then one ``SLO`` per objective, in order.

    Raises ``ValueError`` for a policy OpenSLO cannot state (see ``exportable``); the caller
    leaves those out first.
    """
    providers = sorted({o.policy.provider for o in objectives})
    return [*map(service_document, providers), *map(slo_document, objectives)]


def service_document(provider: str) -> dict[str, Any]:
    """The provider as an OpenSLO ``Service``: what its SLOs are grouped under."""
    return {
        "apiVersion": API_VERSION,
        "kind": "Service",
        "metadata": {
            "name": dns_label(provider),
            "displayName": _display(provider),
            "annotations": {PREFIX + "provider": provider},
        },
        "spec": {"description": f"Instances rented from {provider}, as slamon probes them."},
    }


def slo_document(objective: TargetObjective) -> dict[str, Any]:
    """One target's objective under its policy as an OpenSLO ``SLO`` (see the module's notes)."""
    policy = objective.policy
    if not exportable(policy):
        raise ValueError(
            f"policy {policy.name!r}: a {policy.target_pct} % target has no OpenSLO form "
            "(objectives' targets lie below 1)"
        )
    name = dns_label(objective.target)
    description = (
        f"{objective.target} under {policy.title}: uptime over each calendar month (UTC), "
        "downtime counted from slamon's probes."
    )
    return {
        "apiVersion": API_VERSION,
        "kind": "SLO",
        "metadata": {
            "name": name,
            "displayName": _display(objective.target),
            "annotations": _annotations(objective),
        },
        "spec": {
            "description": description[:_MAX_DESCRIPTION],
            "service": dns_label(policy.provider),
            "indicator": {
                "metadata": {"name": name, "displayName": "Availability"},
                "spec": {
                    "description": "Downtime over observed time, from slamon's probes.",
                    "ratioMetric": {
                        "counter": True,
                        "bad": _metric_source(selector(DOWNTIME_METRIC, objective.target)),
                        "total": _metric_source(selector(OBSERVED_METRIC, objective.target)),
                    },
                },
            },
            "timeWindow": [
                {
                    "duration": MONTH,
                    "isRolling": False,
                    "calendar": {"startTime": CALENDAR_START, "timeZone": TIME_ZONE},
                }
            ],
            "budgetingMethod": BUDGETING_METHOD,
            "objectives": [
                {
                    "displayName": _display(f"{policy.name} {policy.target_pct:g} %"),
                    "target": _fraction(policy.target_pct),
                    "timeSliceTarget": TIME_SLICE_TARGET,
                    "timeSliceWindow": time_slice_window(objective.interval_s),
                }
            ],
        },
    }


def _metric_source(query: str) -> dict[str, Any]:
    return {"metricSource": {"type": "Prometheus", "spec": {"query": query}}}


def _display(text: str) -> str:
    """A ``displayName`` (the Go SDK allows 63 characters)."""
    return text if len(text) <= _MAX_DISPLAY_NAME else text[: _MAX_DISPLAY_NAME - 1] + "…"


def _fraction(pct: float) -> float:
    """99.95 -> 0.9995, through the decimal the percentage was written as (no 0.99949999…)."""
    return float(Decimal(repr(pct)) / 100)


def _percent(fraction: float) -> float:
    return float(Decimal(repr(fraction)) * 100)


def _annotations(objective: TargetObjective) -> dict[str, str]:
    raw = objective.policy.to_json()
    found: dict[str, str] = {}
    for key, field in ANNOTATIONS.items():
        if field is None:
            continue
        value = raw[field]
        if value is None or value == []:
            continue
        if isinstance(value, bool):
            found[PREFIX + key] = "true" if value else "false"
        elif isinstance(value, list):
            found[PREFIX + key] = json.dumps(value, separators=(",", ":"))
        else:
            found[PREFIX + key] = str(value)
    found[PREFIX + "target"] = objective.target
    found[PREFIX + "probe-interval"] = seconds_text(objective.interval_s)
    return found


# ------------------------------------------------------------------------------------ import


def read_documents(documents: Iterable[Any]) -> list[ReadObjective]:
    """Every ``SLO`` among the documents, read as a slamon objective; other kinds (``Service``,
    ``SLI``, ``DataSource``…) are skipped. Raises ``OpenSloError`` naming the document and what
    slamon cannot take; an input without any SLO is one too."""
    found = []
    for number, document in enumerate(documents, 1):
        if document is None:
            continue
        where = f"document {number}"
        if not isinstance(document, Mapping):
            raise OpenSloError(f"{where}: expected a mapping, got {type(document).__name__}")
        if document.get("apiVersion") != API_VERSION:
            raise OpenSloError(
                f"{where}: apiVersion must be {API_VERSION}, got {document.get('apiVersion')!r}"
            )
        if document.get("kind") == "SLO":
            found.append(read_slo(document, where))
    if not found:
        raise OpenSloError(f"no SLO documents (kind: SLO, apiVersion: {API_VERSION})")
    return found


def read_slo(document: Mapping[str, Any], where: str = "SLO") -> ReadObjective:
    """One ``SLO`` document as a slamon objective; ``OpenSloError`` otherwise."""
    metadata = _mapping(document.get("metadata"), f"{where}: metadata")
    name = metadata.get("name")
    if not isinstance(name, str) or not name:
        raise OpenSloError(f"{where}: metadata.name: required")
    label = f"SLO {name!r}"
    spec = _mapping(document.get("spec"), f"{label}: spec")
    annotations = _slamon_annotations(metadata.get("annotations"), label)
    _check_window(spec, label)
    objective = _one_objective(spec, label)
    time_slice = _time_slice(objective, label)
    raw = _policy_fields(annotations, metadata, spec, name, objective, label)
    try:
        policy = policy_from_config(raw)
    except ValueError as exc:
        raise OpenSloError(f"{label}: {exc}") from None
    interval = annotations.get("probe-interval")
    return ReadObjective(
        slo=name,
        policy=policy,
        target=annotations.get("target"),
        time_slice_s=time_slice,
        interval_s=None if interval is None else _interval(interval, label),
    )


def _mapping(value: Any, where: str) -> Mapping[str, Any]:
    if not isinstance(value, Mapping):
        raise OpenSloError(f"{where}: expected a mapping, got {type(value).__name__}")
    return value


def _slamon_annotations(value: Any, label: str) -> dict[str, str]:
    """The ``slamon.dev/`` annotations by their short key; others are someone else's."""
    if value is None:
        return {}
    annotations = _mapping(value, f"{label}: metadata.annotations")
    found = {}
    for key, text in annotations.items():
        if not isinstance(key, str) or not key.startswith(PREFIX):
            continue
        short = key.removeprefix(PREFIX)
        if short not in ANNOTATIONS:
            known = ", ".join(PREFIX + k for k in ANNOTATIONS)
            raise OpenSloError(f"{label}: annotation {key}: unknown (known: {known})")
        if not isinstance(text, str):
            raise OpenSloError(f"{label}: annotation {key}: must be a string, got {text!r}")
        found[short] = text
    return found


def _check_window(spec: Mapping[str, Any], label: str) -> None:
    method = spec.get("budgetingMethod")
    if method not in ("Timeslices", "RatioTimeslices"):
        raise OpenSloError(
            f"{label}: budgetingMethod must be Timeslices (slamon budgets time, not events), "
            f"got {method!r}"
        )
    windows = spec.get("timeWindow")
    if windows is None:
        return  # optional in the spec: slamon's month
    wanted = f"a calendar month in UTC (duration {MONTH}, isRolling false, calendar in UTC)"
    if not isinstance(windows, list) or len(windows) != 1 or not isinstance(windows[0], Mapping):
        raise OpenSloError(f"{label}: timeWindow must be one item, {wanted}")
    window = windows[0]
    calendar = window.get("calendar")
    if (
        window.get("duration") != MONTH
        or window.get("isRolling", False) is not False
        or not isinstance(calendar, Mapping)
        or calendar.get("timeZone") not in UTC_ZONES
        or not _month_start(calendar.get("startTime"))
    ):
        raise OpenSloError(
            f"{label}: timeWindow must be {wanted}, starting on a month's first midnight, "
            f"got {dict(window)!r}"
        )


def _month_start(value: Any) -> bool:
    return isinstance(value, str) and bool(
        re.fullmatch(r"\d{4}-(0[1-9]|1[0-2])-01 00:00:00", value)
    )


def _one_objective(spec: Mapping[str, Any], label: str) -> Mapping[str, Any]:
    objectives = spec.get("objectives")
    if not isinstance(objectives, list) or not objectives:
        raise OpenSloError(f"{label}: objectives: required")
    if len(objectives) > 1:
        raise OpenSloError(
            f"{label}: {len(objectives)} objectives; a slamon policy has one target "
            "(write one SLO per objective)"
        )
    return _mapping(objectives[0], f"{label}: objectives[0]")


def _policy_fields(
    annotations: Mapping[str, str],
    metadata: Mapping[str, Any],
    spec: Mapping[str, Any],
    name: str,
    objective: Mapping[str, Any],
    label: str,
) -> dict[str, Any]:
    """The policy's config fields: the annotations where slamon wrote them, else the SLO's own
    name, service and display name, with the objective's target."""
    raw: dict[str, Any] = {"name": name, "provider": spec.get("service")}
    if isinstance(metadata.get("displayName"), str):
        raw["title"] = metadata["displayName"]
    for key, field in ANNOTATIONS.items():
        if field is None or key not in annotations:
            continue
        raw[field] = _annotation_value(field, annotations[key], f"{label}: {PREFIX}{key}")
    raw["target_pct"] = _target_pct(objective, label)
    return raw


def _annotation_value(field: str, text: str, where: str) -> Any:
    if field in ("exclude_maintenance", "exclude_user_initiated"):
        if text not in ("true", "false"):
            raise OpenSloError(f"{where}: must be true or false, got {text!r}")
        return text == "true"
    if field == "min_downtime_s":
        return _number(text, where)
    if field == "region_min_zones":
        if not text.isdigit():
            raise OpenSloError(f"{where}: must be a whole number, got {text!r}")
        return int(text)
    if field == "tiers":
        try:
            tiers = json.loads(text)
        except json.JSONDecodeError:
            tiers = None
        if not isinstance(tiers, list):
            raise OpenSloError(
                f'{where}: must be a JSON list like [{{"below_pct":99.5,"credit_pct":10}}], '
                f"got {text!r}"
            )
        return tiers
    return text


def _number(text: str, where: str) -> float:
    try:
        return float(text)
    except ValueError:
        raise OpenSloError(f"{where}: must be a number, got {text!r}") from None


def _target_pct(objective: Mapping[str, Any], label: str) -> float:
    target, percent = objective.get("target"), objective.get("targetPercent")
    if target is not None and percent is not None:
        raise OpenSloError(f"{label}: objective: target and targetPercent are exclusive")
    if target is None and percent is None:
        raise OpenSloError(f"{label}: objective: target (or targetPercent) required")
    value = target if target is not None else percent
    ceiling = 1 if target is not None else 100
    field = "target" if target is not None else "targetPercent"
    if isinstance(value, bool) or not isinstance(value, int | float) or not 0 < value < ceiling:
        raise OpenSloError(f"{label}: objective: {field} must be in (0, {ceiling}), got {value!r}")
    return _percent(value) if target is not None else float(value)


def _time_slice(objective: Mapping[str, Any], label: str) -> float:
    window = objective.get("timeSliceWindow")
    where = f"{label}: objective: timeSliceWindow"
    if window is None:
        raise OpenSloError(f"{where}: required with budgetingMethod Timeslices")
    if isinstance(window, str):
        match = _SHORTHAND.fullmatch(window)
        if match is None:
            raise OpenSloError(f"{where}: {window!r} is not a duration shorthand like 1m or 2h")
        return int(match[1]) * _SHORTHAND_SECONDS[match[2]]
    if isinstance(window, bool) or not isinstance(window, int | float) or not window > 0:
        raise OpenSloError(f"{where}: must be a duration like 1m or minutes > 0, got {window!r}")
    return round(float(window) * 60, 6)  # 0.25 minutes is 15 s, not 15.000000000000002


def _interval(text: str, label: str) -> float:
    where = f"{label}: {PREFIX}probe-interval"
    seconds = _number(text.removesuffix("s"), where)
    if not seconds > 0:
        raise OpenSloError(f"{where}: must be a positive duration like 15s, got {text!r}")
    return seconds


# ------------------------------------------------------------------------ what import keeps


def check_time_slices(
    objectives: Iterable[ReadObjective],
    config_intervals: Mapping[str, float],
    default_interval_s: float,
) -> None:
    """Refuse an objective whose time slice is shorter than its target's probe interval: the
    config's interval for a target it has, else the interval the file states, else a new
    target's default. slamon has no verdict between two probes."""
    for read in objectives:
        interval, source = probe_interval(read, config_intervals, default_interval_s)
        if read.time_slice_s < interval - _SLACK_S:
            raise OpenSloError(
                f"SLO {read.slo!r}: time slice {seconds_text(read.time_slice_s)} is shorter "
                f"than the probe interval {seconds_text(interval)} ({source}); slamon cannot "
                "judge a slice it does not probe"
            )


def probe_interval(
    read: ReadObjective, config_intervals: Mapping[str, float], default_interval_s: float
) -> tuple[float, str]:
    """The interval an objective's target is probed at, and where that figure comes from."""
    if read.target is not None and read.target in config_intervals:
        return config_intervals[read.target], f"target {read.target!r} in the config"
    if read.interval_s is not None:
        return read.interval_s, f"{PREFIX}probe-interval"
    return default_interval_s, "a target's default interval"


def policies_of(objectives: Iterable[ReadObjective]) -> list[SlaPolicy]:
    """The policies the objectives state, once each in first-seen order; ``OpenSloError`` when
    two SLOs state one policy differently, or give one target two policies."""
    policies: dict[str, tuple[SlaPolicy, str]] = {}
    targets: dict[str, tuple[str, str]] = {}
    for read in objectives:
        seen = policies.setdefault(read.policy.name, (read.policy, read.slo))
        if seen[0] != read.policy:
            raise OpenSloError(
                f"policy {read.policy.name!r}: SLOs {seen[1]!r} and {read.slo!r} state it "
                f"differently ({_first_difference(seen[0], read.policy)})"
            )
        if read.target is not None:
            policy, slo = targets.setdefault(read.target, (read.policy.name, read.slo))
            if policy != read.policy.name:
                raise OpenSloError(
                    f"target {read.target!r}: SLOs {slo!r} and {read.slo!r} give it two "
                    f"policies ({policy!r} and {read.policy.name!r})"
                )
    return [policy for policy, _ in policies.values()]


def _first_difference(a: SlaPolicy, b: SlaPolicy) -> str:
    left, right = a.to_json(), b.to_json()
    field = next(k for k in left if left[k] != right[k])
    return f"{field}: {left[field]!r} and {right[field]!r}"
