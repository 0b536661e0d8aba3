"""SLA policies as OpenSLO v1 and back: the documents carry what the published spec requires,
export then import gives the same policy, and an objective slamon cannot measure is refused."""

from __future__ import annotations

import copy
import re
import shutil
import subprocess
from datetime import date
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from monitor.sla.openslo import (
    DOWNTIME_METRIC,
    OBSERVED_METRIC,
    OpenSloError,
    ReadObjective,
    TargetObjective,
    check_time_slices,
    dns_label,
    export_documents,
    policies_of,
    read_documents,
    read_slo,
    slo_document,
    time_slice_window,
)
from monitor.sla.policy import ClaimRule, CreditTier, SlaPolicy
from monitor.sla.policy_config import policy_from_config
from monitor.sla.terms import BUILTIN_POLICIES
from tests.support import unavailable

# ------------------------------------------------------- what the published OpenSLO v1 requires
#
# From the OpenSLO repository's v1 JSON schema (github.com/OpenSLO/OpenSLO, schemas/v1/parts/):
# header.schema.json: required [apiVersion, kind, metadata, spec], apiVersion const openslo/v1;
# metadata.schema.json: metadata required [name]; specs/slo-spec.schema.json: required
# [service, budgetingMethod, objectives], exactly one of indicator / indicatorRef, budgetingMethod
# in [Occurrences, Timeslices], timeWindow at most one item, each required [duration] and, when not
# rolling, [calendar] with required [startTime, timeZone] (startTime "YYYY-MM-DD hh:mm:ss",
# timeZone matching "[A-Z][a-zA-Z_]+/[A-Z][a-zA-Z_]+"), objectives' items required [target]
# (0 <= target < 1) and, under Timeslices, [timeSliceWindow, timeSliceTarget] (0 < target <= 1;
# the window a duration shorthand "^[1-9][0-9]*[mhdwMQY]$" or a number > 0);
# specs/sli-spec.schema.json: exactly one of thresholdMetric / ratioMetric, ratioMetric required
# [counter, total] with exactly one of good / bad, each required [metricSource];
# metricsource.schema.json: required [spec]; specs/service-spec.schema.json: nothing beyond the
# header. Names (OpenSLO README "Notes (General Schema)", the Go SDK's StringDNSLabel): RFC 1123
# labels; the Go SDK (github.com/OpenSLO/go-sdk, pkg/openslo/v1/objects.go) also holds
# displayName to 63 characters and annotation keys to its annotationKeyRegexp.

HEADER_REQUIRED = ("apiVersion", "kind", "metadata", "spec")
METADATA_REQUIRED = ("name",)
SLO_SPEC_REQUIRED = ("service", "budgetingMethod", "objectives")
TIME_WINDOW_REQUIRED = ("duration",)
CALENDAR_REQUIRED = ("startTime", "timeZone")
OBJECTIVE_REQUIRED = ("target",)
TIMESLICES_OBJECTIVE_REQUIRED = ("timeSliceWindow", "timeSliceTarget")
RATIO_METRIC_REQUIRED = ("counter", "total")
METRIC_SOURCE_REQUIRED = ("spec",)
KINDS = (
    *("AlertCondition", "AlertNotificationTarget", "AlertPolicy", "DataSource", "Service"),
    *("SLI", "SLO"),
)

DNS_LABEL = re.compile(r"^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$")
SHORTHAND = re.compile(r"^[1-9][0-9]*[mhdwMQY]$")
START_TIME = re.compile(
    r"^\d{4}-(0[1-9]|1[0-2])-(0[1-9]|[12][0-9]|3[01]) ([01]\d|2[0-3]):[0-5]\d:[0-5]\d$"
)
TIME_ZONE = re.compile(r"[A-Z][a-zA-Z_]+\/[A-Z][a-zA-Z_]+")
ANNOTATION_KEY = re.compile(
    r"^([a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?(\.[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?)*/)?"
    r"[a-zA-Z0-9]([-._a-zA-Z0-9]{0,61}[a-zA-Z0-9])?$"
)


def _missing(where: str, node: Any, fields: tuple[str, ...]) -> list[str]:
    if not isinstance(node, dict):
        return [f"{where}: not a mapping"]
    return [f"{where}.{field}: required" for field in fields if field not in node]


def _metadata_problems(where: str, metadata: Any) -> list[str]:
    problems = _missing(where, metadata, METADATA_REQUIRED)
    if problems:
        return problems
    if not DNS_LABEL.fullmatch(metadata["name"]):
        problems.append(f"{where}.name: not an RFC 1123 label: {metadata['name']!r}")
    if len(metadata.get("displayName", "")) > 63:
        problems.append(f"{where}.displayName: over 63 characters")
    for key in metadata.get("annotations", {}):
        if not ANNOTATION_KEY.fullmatch(key) or len(key.rpartition("/")[2]) > 63:
            problems.append(f"{where}.annotations: bad key {key!r}")
    return problems


def schema_problems(document: Any) -> list[str]:
    """What the published v1 schema (above) finds wrong with one document."""
    problems = _missing("document", document, HEADER_REQUIRED)
    if problems:
        return problems
    if document["apiVersion"] != "openslo/v1":
        problems.append("apiVersion: not openslo/v1")
    if document["kind"] not in KINDS:
        problems.append(f"kind: {document['kind']!r}")
    problems += _metadata_problems("metadata", document["metadata"])
    if document["kind"] == "SLO":
        problems += _slo_spec_problems(document["spec"])
    return problems


def _slo_spec_problems(spec: Any) -> list[str]:
    problems = _missing("spec", spec, SLO_SPEC_REQUIRED)
    if problems:
        return problems
    if ("indicator" in spec) == ("indicatorRef" in spec):
        problems.append("spec: exactly one of indicator, indicatorRef")
    if spec["budgetingMethod"] not in ("Occurrences", "Timeslices"):
        problems.append(f"spec.budgetingMethod: {spec['budgetingMethod']!r}")
    if "indicator" in spec:
        problems += _metadata_problems("spec.indicator.metadata", spec["indicator"].get("metadata"))
        problems += _sli_problems(spec["indicator"].get("spec"))
    windows = spec.get("timeWindow", [])
    if len(windows) > 1:
        problems.append("spec.timeWindow: more than one item")
    for window in windows:
        problems += _missing("spec.timeWindow[0]", window, TIME_WINDOW_REQUIRED)
        if not SHORTHAND.fullmatch(str(window.get("duration"))):
            problems.append("spec.timeWindow[0].duration: not a duration shorthand")
        if window.get("isRolling") is not True:
            problems += _missing("spec.timeWindow[0]", window, ("calendar",))
            calendar = window.get("calendar", {})
            problems += _missing("spec.timeWindow[0].calendar", calendar, CALENDAR_REQUIRED)
            if not START_TIME.fullmatch(str(calendar.get("startTime"))):
                problems.append("spec.timeWindow[0].calendar.startTime: pattern")
            if not TIME_ZONE.search(str(calendar.get("timeZone"))):
                problems.append("spec.timeWindow[0].calendar.timeZone: pattern")
    for i, objective in enumerate(spec["objectives"]):
        where = f"spec.objectives[{i}]"
        problems += _missing(where, objective, OBJECTIVE_REQUIRED)
        if not 0 <= objective.get("target", -1) < 1:
            problems.append(f"{where}.target: outside [0, 1)")
        if spec["budgetingMethod"] == "Timeslices":
            problems += _missing(where, objective, TIMESLICES_OBJECTIVE_REQUIRED)
            if not 0 < objective.get("timeSliceTarget", 0) <= 1:
                problems.append(f"{where}.timeSliceTarget: outside (0, 1]")
            window = objective.get("timeSliceWindow")
            if not (isinstance(window, str) and SHORTHAND.fullmatch(window)) and not (
                isinstance(window, int | float) and not isinstance(window, bool) and window > 0
            ):
                problems.append(f"{where}.timeSliceWindow: {window!r}")
    return problems


def _sli_problems(spec: Any) -> list[str]:
    if not isinstance(spec, dict) or ("ratioMetric" in spec) == ("thresholdMetric" in spec):
        return ["spec.indicator.spec: exactly one of thresholdMetric, ratioMetric"]
    ratio = spec.get("ratioMetric")
    if ratio is None:
        return []
    problems = _missing("ratioMetric", ratio, RATIO_METRIC_REQUIRED)
    if ("good" in ratio) == ("bad" in ratio):
        problems.append("ratioMetric: exactly one of good, bad")
    for part in ("good", "bad", "total"):
        if part in ratio:
            problems += _missing(f"ratioMetric.{part}", ratio[part], ("metricSource",))
            problems += _missing(
                f"ratioMetric.{part}.metricSource",
                ratio[part].get("metricSource"),
                METRIC_SOURCE_REQUIRED,
            )
    return problems


# ----------------------------------------------------------------------------------- helpers


def _policy(**changes: Any) -> SlaPolicy:
    raw = {
        "name": "lambda-h100",
        "provider": "lambda",
        "target_pct": 99.9,
        "title": "Lambda — H100 on-demand (our contract)",
        "measurement": "whole_minutes",
        "min_downtime_s": 60,
        "exclude_maintenance": False,
        "tiers": [{"below_pct": 99.9, "credit_pct": 10}, {"below_pct": 99, "credit_pct": 25}],
        "claim_deadline": "days_after_period:30",
        "source_url": "https://lambdalabs.com/legal/sla",
        "terms_date": "2025-01-15",
    }
    return policy_from_config({**raw, **changes})


def _through_yaml(documents: list[dict[str, Any]]) -> list[Any]:
    """What a file written by the export and read by the import holds."""
    text = yaml.safe_dump_all(documents, sort_keys=False, allow_unicode=True)
    return list(yaml.safe_load_all(text))


def _exported_slo(objective: TargetObjective) -> dict[str, Any]:
    document: dict[str, Any] = _through_yaml([slo_document(objective)])[0]
    return document


# ------------------------------------------------------------------------------------ export


def test_every_built_in_policy_exports_as_documents_the_published_schema_accepts() -> None:
    objectives = [
        TargetObjective(f"gpu-{i}", policy, interval)
        for i, (policy, interval) in enumerate(
            zip(BUILTIN_POLICIES.values(), (15.0, 30.0, 60.0, 120.0, 7.5, 3600.0, 1.0), strict=True)
        )
    ]
    documents = _through_yaml(export_documents(objectives))

    assert [d["kind"] for d in documents] == ["Service"] * 3 + ["SLO"] * 7
    assert [d["metadata"]["name"] for d in documents[:3]] == ["aws", "azure", "gcp"]
    assert {d["metadata"]["name"]: schema_problems(d) for d in documents} == {
        d["metadata"]["name"]: [] for d in documents
    }


def test_the_schema_check_sees_what_the_spec_requires() -> None:
    slo = _exported_slo(TargetObjective("gpu-0", _policy(), 30.0))
    broken = copy.deepcopy(slo)
    del broken["spec"]["budgetingMethod"]
    del broken["spec"]["objectives"][0]["timeSliceWindow"]
    del broken["spec"]["timeWindow"][0]["calendar"]["timeZone"]
    broken["spec"]["indicatorRef"] = "elsewhere"
    broken["metadata"]["name"] = "GPU_0"

    assert schema_problems(slo) == []
    assert schema_problems(broken) == [
        "metadata.name: not an RFC 1123 label: 'GPU_0'",
        "spec.budgetingMethod: required",
    ]
    broken["spec"]["budgetingMethod"] = "Timeslices"
    assert schema_problems(broken) == [
        "metadata.name: not an RFC 1123 label: 'GPU_0'",
        "spec: exactly one of indicator, indicatorRef",
        "spec.timeWindow[0].calendar.timeZone: required",
        "spec.timeWindow[0].calendar.timeZone: pattern",
        "spec.objectives[0].timeSliceWindow: required",
        "spec.objectives[0].timeSliceWindow: None",
    ]


def test_a_target_s_slo_says_what_slamon_computes() -> None:
    slo = _exported_slo(TargetObjective("trainer-0", BUILTIN_POLICIES["aws-ec2-instance"], 15.0))
    spec = slo["spec"]

    assert spec["service"] == "aws"
    assert spec["timeWindow"] == [
        {
            "duration": "1M",
            "isRolling": False,
            "calendar": {"startTime": "2020-01-01 00:00:00", "timeZone": "Etc/UTC"},
        }
    ]
    assert spec["budgetingMethod"] == "Timeslices"
    assert spec["objectives"] == [
        {
            "displayName": "aws-ec2-instance 99.5 %",
            "target": 0.995,
            "timeSliceTarget": 0.5,
            "timeSliceWindow": 0.25,
        }
    ]
    ratio = spec["indicator"]["spec"]["ratioMetric"]
    assert ratio["counter"] is True
    assert ratio["bad"]["metricSource"] == {
        "type": "Prometheus",
        "spec": {"query": f'{DOWNTIME_METRIC}{{target="trainer-0"}}'},
    }
    assert ratio["total"]["metricSource"]["spec"]["query"] == (
        f'{OBSERVED_METRIC}{{target="trainer-0"}}'
    )
    annotations = slo["metadata"]["annotations"]
    assert annotations["slamon.dev/credit-tiers"] == (
        '[{"below_pct":99.5,"credit_pct":10.0},{"below_pct":99.0,"credit_pct":30.0},'
        '{"below_pct":95.0,"credit_pct":100.0}]'
    )
    assert annotations["slamon.dev/exclude-maintenance"] == "true"
    assert annotations["slamon.dev/exclude-user-initiated"] == "true"
    assert annotations["slamon.dev/probe-interval"] == "15s"


@pytest.mark.parametrize(
    ("seconds", "window"),
    [(15, 0.25), (30, 0.5), (60, "1m"), (90, 1.5), (120, "2m"), (3600, "1h"), (7200, "2h")],
    ids=["15s", "30s", "1m", "90s", "2m", "1h", "2h"],
)
def test_the_time_slice_is_the_probe_interval_in_minutes(seconds: int, window: Any) -> None:
    assert time_slice_window(seconds) == window


def test_a_target_name_becomes_a_dns_label_and_two_names_never_share_one() -> None:
    assert dns_label("trainer-0") == "trainer-0"
    assert re.fullmatch(r"gpu-box-7-[0-9a-f]{6}", dns_label("GPU box #7"))
    assert dns_label("GPU box #7") != dns_label("gpu-box-7") != dns_label("gpu box 7")
    assert DNS_LABEL.fullmatch(dns_label("x" * 200))
    assert DNS_LABEL.fullmatch(dns_label("___"))


def test_a_query_quotes_a_target_name_as_a_promql_string() -> None:
    slo = _exported_slo(TargetObjective('job "a"\\b', _policy(), 30.0))
    query = slo["spec"]["indicator"]["spec"]["ratioMetric"]["bad"]["metricSource"]["spec"]["query"]
    assert query == f'{DOWNTIME_METRIC}{{target="job \\"a\\"\\\\b"}}'


def test_a_100_percent_policy_has_no_openslo_form() -> None:
    with pytest.raises(ValueError, match=re.escape("a 100.0 % target has no OpenSLO form")):
        slo_document(TargetObjective("gpu-0", _policy(target_pct=100, tiers=[]), 30.0))


# ----------------------------------------------------------------------------- the round trip


def test_export_then_import_gives_the_same_policy_target_and_interval() -> None:
    policy = _policy()
    documents = _through_yaml(export_documents([TargetObjective("gpu-0", policy, 45.0)]))

    [read] = read_documents(documents)

    assert read == ReadObjective(
        slo="gpu-0", policy=policy, target="gpu-0", time_slice_s=45.0, interval_s=45.0
    )
    assert read.policy.policy_hash() == policy.policy_hash()


# any text a YAML config can hold as it is (YAML folds control characters and line separators)
_NAME = st.text(
    st.characters(blacklist_categories=("Cs", "Cc", "Zl", "Zp")), min_size=1, max_size=40
).filter(str.strip)
_PCT = st.decimals(min_value="0.001", max_value="99.999", places=3).map(float)


@st.composite
def policies(draw: st.DrawFn) -> SlaPolicy:
    target_pct = draw(_PCT)
    scope = draw(st.sampled_from(["instance", "region", "pool"]))
    belows = draw(
        st.lists(
            st.decimals(min_value="0.001", max_value=str(target_pct), places=3).map(float),
            unique=True,
            max_size=4,
        )
    )
    tiers = tuple(CreditTier(b, draw(st.integers(0, 100)) / 1) for b in belows)
    claim = draw(
        st.none()
        | st.builds(
            ClaimRule,
            st.sampled_from(["end_of_month_after_incident", "days_after_period"]),
            st.integers(0, 60),
        )
    )
    return SlaPolicy(
        name=draw(_NAME),
        provider=draw(_NAME),
        title=draw(_NAME),
        scope=scope,  # type: ignore[arg-type]
        target_pct=target_pct,
        measurement=draw(st.sampled_from(["continuous", "whole_minutes"])),
        min_downtime_s=draw(st.floats(0, 1e6, allow_nan=False)),
        region_min_zones=draw(st.none() | st.integers(1, 9)) if scope == "region" else None,
        exclude_maintenance=draw(st.booleans()),
        tiers=tiers,
        claim_deadline=claim,
        source_url=draw(st.none() | _NAME),
        terms_date=draw(st.none() | st.dates(date(1990, 1, 1), date(2100, 1, 1))),
        exclude_user_initiated=draw(st.booleans()),
    )


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.lists(
        st.tuples(_NAME, policies(), st.floats(1, 86_400, allow_nan=False)),
        min_size=1,
        max_size=4,
        unique_by=lambda t: t[0],
    )
)
def test_any_policy_survives_export_and_import(
    exported: list[tuple[str, SlaPolicy, float]],
) -> None:
    # one policy per name, as a config has them
    by_name = {policy.name: policy for _, policy, _ in exported}
    objectives = [TargetObjective(t, by_name[p.name], s) for t, p, s in exported]

    read = read_documents(_through_yaml(export_documents(objectives)))
    check_time_slices(read, {o.target: o.interval_s for o in objectives}, 30.0)

    assert policies_of(read) == list(by_name.values())
    assert [(r.target, r.interval_s) for r in read] == [
        (o.target, o.interval_s) for o in objectives
    ]
    assert len({r.slo for r in read}) == len(read)


# ---------------------------------------------------------------- what import refuses, and why


def _slo(**spec_changes: Any) -> dict[str, Any]:
    slo = _exported_slo(TargetObjective("gpu-0", _policy(), 60.0))
    slo["spec"].update(spec_changes)
    return slo


def _objective(**changes: Any) -> dict[str, Any]:
    return {"target": 0.999, "timeSliceTarget": 0.5, "timeSliceWindow": "1m", **changes}


REFUSED = [
    pytest.param(
        _slo(budgetingMethod="Occurrences"),
        "SLO 'gpu-0': budgetingMethod must be Timeslices (slamon budgets time, not events), "
        "got 'Occurrences'",
        id="occurrences",
    ),
    pytest.param(
        _slo(timeWindow=[{"duration": "28d", "isRolling": True}]),
        "SLO 'gpu-0': timeWindow must be a calendar month in UTC",
        id="rolling-window",
    ),
    pytest.param(
        _slo(
            timeWindow=[
                {
                    "duration": "1M",
                    "calendar": {"startTime": "2020-01-01 00:00:00", "timeZone": "Europe/Paris"},
                }
            ]
        ),
        "SLO 'gpu-0': timeWindow must be a calendar month in UTC",
        id="paris-months",
    ),
    pytest.param(
        _slo(objectives=[_objective(), _objective(target=0.99)]),
        "SLO 'gpu-0': 2 objectives; a slamon policy has one target (write one SLO per objective)",
        id="two-objectives",
    ),
    pytest.param(
        _slo(objectives=[_objective(target=0.99, targetPercent=99)]),
        "SLO 'gpu-0': objective: target and targetPercent are exclusive",
        id="target-twice",
    ),
    pytest.param(
        _slo(objectives=[_objective(target=1)]),
        "SLO 'gpu-0': objective: target must be in (0, 1), got 1",
        id="target-of-one",
    ),
    pytest.param(
        _slo(objectives=[_objective(timeSliceWindow="30s")]),
        "SLO 'gpu-0': objective: timeSliceWindow: '30s' is not a duration shorthand like 1m",
        id="seconds-shorthand",
    ),
    pytest.param(
        _slo(objectives=[{"target": 0.999}]),
        "SLO 'gpu-0': objective: timeSliceWindow: required with budgetingMethod Timeslices",
        id="no-time-slice",
    ),
]


@pytest.mark.parametrize(("document", "message"), REFUSED)
def test_import_refuses_what_slamon_cannot_measure(document: dict[str, Any], message: str) -> None:
    with pytest.raises(OpenSloError) as refused:
        read_slo(document)
    assert str(refused.value).startswith(message)
    assert "\n" not in str(refused.value)


def test_an_annotation_slamon_does_not_know_is_refused_others_are_ignored() -> None:
    slo = _slo()
    slo["metadata"]["annotations"]["nobl9.com/project"] = "gpus"
    assert read_slo(slo).policy == _policy()

    slo["metadata"]["annotations"]["slamon.dev/credit-tier"] = "10"
    with pytest.raises(OpenSloError, match=r"annotation slamon.dev/credit-tier: unknown"):
        read_slo(slo)


def test_a_bad_policy_field_is_named_with_its_slo() -> None:
    slo = _slo()
    slo["metadata"]["annotations"]["slamon.dev/scope"] = "galaxy"
    with pytest.raises(OpenSloError) as refused:
        read_slo(slo)
    assert str(refused.value) == (
        "SLO 'gpu-0': sla policy 'lambda-h100': scope: must be one of instance, region, pool, "
        "got 'galaxy'"
    )


def _read(time_slice: float, target: str | None = "gpu-0", interval: float | None = None) -> Any:
    return ReadObjective("slo-a", _policy(), target, time_slice, interval)


@pytest.mark.parametrize(
    ("read", "config", "refusal"),
    [
        pytest.param(_read(60), {"gpu-0": 60.0}, None, id="slice-equals-interval"),
        pytest.param(_read(300), {"gpu-0": 60.0}, None, id="slice-longer"),
        pytest.param(
            _read(30, interval=30),
            {"gpu-0": 60.0},
            "SLO 'slo-a': time slice 30s is shorter than the probe interval 60s "
            "(target 'gpu-0' in the config); slamon cannot judge a slice it does not probe",
            id="config-interval-wins",
        ),
        pytest.param(
            _read(15, interval=30),
            {},
            "SLO 'slo-a': time slice 15s is shorter than the probe interval 30s "
            "(slamon.dev/probe-interval); slamon cannot judge a slice it does not probe",
            id="file-interval",
        ),
        pytest.param(
            _read(15, target=None),
            {},
            "SLO 'slo-a': time slice 15s is shorter than the probe interval 30s "
            "(a target's default interval); slamon cannot judge a slice it does not probe",
            id="default-interval",
        ),
        pytest.param(_read(15, interval=10), {}, None, id="file-interval-short-enough"),
    ],
)
def test_a_time_slice_shorter_than_the_probe_interval_is_refused(
    read: ReadObjective, config: dict[str, float], refusal: str | None
) -> None:
    if refusal is None:
        check_time_slices([read], config, 30.0)
        return
    with pytest.raises(OpenSloError) as refused:
        check_time_slices([read], config, 30.0)
    assert str(refused.value) == refusal


def test_two_slos_that_state_one_policy_differently_are_refused() -> None:
    one = ReadObjective("a", _policy(), "gpu-0", 60, None)
    other = ReadObjective("b", _policy(min_downtime_s=0), "gpu-1", 60, None)
    same = ReadObjective("c", _policy(), "gpu-2", 60, None)

    assert policies_of([one, same]) == [_policy()]
    with pytest.raises(OpenSloError) as refused:
        policies_of([one, other])
    assert str(refused.value) == (
        "policy 'lambda-h100': SLOs 'a' and 'b' state it differently (min_downtime_s: 60.0 and 0.0)"
    )


def test_one_target_with_two_policies_is_refused() -> None:
    first = ReadObjective("a", _policy(), "gpu-0", 60, None)
    second = ReadObjective("b", _policy(name="other"), "gpu-0", 60, None)
    with pytest.raises(OpenSloError, match="target 'gpu-0': SLOs 'a' and 'b' give it two"):
        policies_of([first, second])


def test_a_foreign_slo_without_slamon_s_annotations_reads_as_a_default_policy() -> None:
    # shaped like the OpenSLO repository's examples/budgeting-method/timeslices-slo.yaml
    document = {
        "apiVersion": "openslo/v1",
        "kind": "SLO",
        "metadata": {"name": "web-availability", "displayName": "Web availability"},
        "spec": {
            "service": "web",
            "indicatorRef": "web-successful-requests",
            "timeWindow": [
                {
                    "duration": "1M",
                    "isRolling": False,
                    "calendar": {"startTime": "2022-01-01 00:00:00", "timeZone": "UTC"},
                }
            ],
            "budgetingMethod": "Timeslices",
            "objectives": [{"targetPercent": 99.5, "timeSliceTarget": 0.95, "timeSliceWindow": 5}],
        },
    }
    [read] = read_documents([{"apiVersion": "openslo/v1", "kind": "Service"}, document])

    assert read.policy == policy_from_config(
        {
            "name": "web-availability",
            "provider": "web",
            "target_pct": 99.5,
            "title": "Web availability",
        }
    )
    assert (read.target, read.time_slice_s, read.interval_s) == (None, 300.0, None)


@pytest.mark.parametrize(
    ("documents", "message"),
    [
        ([], "no SLO documents (kind: SLO, apiVersion: openslo/v1)"),
        ([["a"]], "document 1: expected a mapping, got list"),
        (
            [None, {"apiVersion": "openslo/v1alpha", "kind": "SLO"}],
            "document 2: apiVersion must be openslo/v1, got 'openslo/v1alpha'",
        ),
        (
            [{"apiVersion": "openslo/v1", "kind": "SLO", "metadata": {}}],
            "document 1: metadata.name: required",
        ),
    ],
    ids=["empty", "a-list", "v1alpha", "no-name"],
)
def test_a_file_that_is_not_openslo_v1_is_refused(documents: list[Any], message: str) -> None:
    with pytest.raises(OpenSloError) as refused:
        read_documents(documents)
    assert str(refused.value) == message


# ---------------------------------------------------------------- the queries, read by promtool


def test_the_indicator_queries_are_promql_prometheus_accepts(tmp_path: Path) -> None:
    promtool = shutil.which("promtool") or "/usr/bin/promtool"
    if not Path(promtool).exists():
        unavailable("promtool", f"{promtool} is not installed (Debian's prometheus package)")
    objectives = [TargetObjective(name, _policy(), 30.0) for name in ("gpu-0", 'job "a"\\b', "ü ß")]
    rules: list[dict[str, str]] = []
    for i, document in enumerate(_through_yaml(export_documents(objectives))[1:]):
        ratio = document["spec"]["indicator"]["spec"]["ratioMetric"]
        bad = ratio["bad"]["metricSource"]["spec"]["query"]
        total = ratio["total"]["metricSource"]["spec"]["query"]
        expr = f"1 - increase({bad}[5m]) / increase({total}[5m])"
        rules.append({"record": f"slamon:availability_{i}", "expr": expr})
    path = tmp_path / "rules.yaml"
    path.write_text(yaml.safe_dump({"groups": [{"name": "openslo", "rules": rules}]}))

    checked = subprocess.run(
        [promtool, "check", "rules", str(path)], capture_output=True, text=True, check=False
    )
    assert checked.returncode == 0, checked.stdout + checked.stderr
    assert "SUCCESS: 3 rules found" in checked.stdout
