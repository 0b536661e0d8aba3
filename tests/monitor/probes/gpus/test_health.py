"""The GPU health rules (monitor/probes/gpus/health.py) over dcgm-exporter scrapes, and the
reading of those scrapes (gpus/dcgm_text.py) and of the counters kept between them."""

from __future__ import annotations

import contextlib
import json
from collections.abc import Mapping, Sequence
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from monitor.probes.gpus.counters import GpuCounters, GpuMemory
from monitor.probes.gpus.dcgm_text import parse_dcgm
from monitor.probes.gpus.health import FATAL_XIDS, GpuHealth, GpuThresholds, assess
from monitor.probes.gpus.readings import GpuSnapshot
from tests.support import FIXTURES as SHARED_FIXTURES

FIXTURES = SHARED_FIXTURES / "feeds" / "dcgm"
DATADOG = FIXTURES / "datadog-dcgm-metrics.txt"
L4 = FIXTURES / "cncf-kops-aws-L4.prom"

T4_A = "GPU-20c56d28-0da5-6d26-a36a-e7af1ce2586e"
T4_B = "GPU-9ef1b6d0-3643-5dd7-b823-c0ec20dcf2d5"
L4_UUID = "GPU-c2f76b33-7953-256e-8f33-1343419b1a1c"

UTIL = "DCGM_FI_DEV_GPU_UTIL"
TEMP = "DCGM_FI_DEV_GPU_TEMP"
MEM_TEMP = "DCGM_FI_DEV_MEMORY_TEMP"
XID = "DCGM_FI_DEV_XID_ERRORS"
DBE_VOL = "DCGM_FI_DEV_ECC_DBE_VOL_TOTAL"
DBE_AGG = "DCGM_FI_DEV_ECC_DBE_AGG_TOTAL"
REMAP_FAILURE = "DCGM_FI_DEV_ROW_REMAP_FAILURE"
UNCORRECTABLE_ROWS = "DCGM_FI_DEV_UNCORRECTABLE_REMAPPED_ROWS"
THROTTLE = "DCGM_FI_DEV_CLOCK_THROTTLE_REASONS"
CLOCK_EVENTS = "DCGM_FI_DEV_CLOCKS_EVENT_REASONS"
COUNTERS = {DBE_VOL, DBE_AGG, UNCORRECTABLE_ROWS}  # typed "counter", as dcgm-exporter does

Gpus = Mapping[int, Mapping[str, float]]


def uuid(index: int) -> str:
    return f"GPU-00000000-0000-0000-0000-00000000000{index}"


def scrape(gpus: Gpus, host: str = "node-a") -> str:
    """A dcgm-exporter scrape of one host, shaped like the captures: ``{gpu index: {field: v}}``."""
    lines: list[str] = []
    for metric in sorted({m for values in gpus.values() for m in values}):
        lines.append(f"# TYPE {metric} {'counter' if metric in COUNTERS else 'gauge'}")
        lines.extend(
            f'{metric}{{gpu="{i}",UUID="{uuid(i)}",device="nvidia{i}",'
            f'modelName="NVIDIA H100 80GB HBM3",Hostname="{host}"}} {values[metric]}'
            for i, values in gpus.items()
            if metric in values
        )
    return "\n".join(lines) + "\n"


def node(count: int = 8, **fields_of: Mapping[str, float]) -> Gpus:
    """``count`` GPUs at 40 °C; ``gpu3={XID: 79}`` sets fields of GPU 3."""
    return {i: {TEMP: 40, **fields_of.get(f"gpu{i}", {})} for i in range(count)}


def run(scrapes: Sequence[Gpus], expected: int = 8, **thresholds: Any) -> GpuHealth:
    """Assess each scrape in turn, handing the counters on through their JSON form."""
    stored: dict[str, Any] | None = None
    health = None
    for gpus in scrapes:
        previous = None if stored is None else GpuCounters.from_json(stored)
        health = assess(parse_dcgm(scrape(gpus)), previous, expected, GpuThresholds(**thresholds))
        stored = json.loads(json.dumps(health.counters.to_json()))
    assert health is not None
    return health


def verdict(health: GpuHealth) -> tuple[str, tuple[str, ...]]:
    if not health.usable:
        return ("fatal" if health.fatal else "unusable"), health.reasons
    return ("degraded" if health.degraded else "healthy"), health.reasons


@pytest.fixture(scope="module")
def datadog() -> GpuSnapshot:
    return parse_dcgm(DATADOG.read_text())


@pytest.fixture(scope="module")
def l4() -> GpuSnapshot:
    return parse_dcgm(L4.read_text())


# --- the captured scrapes -----------------------------------------------------------------------


def test_l4_capture_holds_one_gpu_named_by_its_uuid(l4: GpuSnapshot) -> None:
    assert l4.gpus_seen == 1
    (gpu,) = l4.gpus
    assert (gpu.key, gpu.uuid, gpu.index, gpu.model) == (L4_UUID, L4_UUID, "0", "NVIDIA L4")
    assert gpu.hostname == "i-030791dc5a37cd257"  # spelled "Hostname" in this capture
    assert gpu.mig_instances == ()


def test_l4_capture_reads_every_reported_field(l4: GpuSnapshot) -> None:
    gpu = l4.gpus[0]
    assert gpu.temperature_c == 31
    assert gpu.utilization_pct == 0
    assert gpu.power_w == pytest.approx(16.365)
    assert gpu.memory_temperature_c == 0  # GDDR6 on an L4: the exporter reports 0
    assert gpu.row_remap_failure is False
    assert gpu.uncorrectable_remapped_rows == 0  # a "counter" family: the parser adds _total


def test_l4_capture_lacks_xid_ecc_and_clock_reasons(l4: GpuSnapshot) -> None:
    gpu = l4.gpus[0]
    assert (gpu.xid, gpu.ecc_dbe_volatile, gpu.ecc_dbe_aggregate, gpu.clock_event_reasons) == (
        None,
        None,
        None,
        None,
    )


def test_l4_capture_is_a_healthy_single_gpu_node(l4: GpuSnapshot) -> None:
    health = assess(l4, None, expected_gpus=1)
    assert verdict(health) == ("healthy", ())
    assert health.counters.to_json()["gpus"] == {
        L4_UUID: {
            "xid": None,
            "ecc_dbe_volatile": None,
            "ecc_dbe_aggregate": None,
            "uncorrectable_remapped_rows": 0,
            "throttle_streak": 0,
            "fault": None,
            "fault_kind": None,
            "fault_scrapes": 0,
        }
    }


def test_datadog_capture_holds_three_gpus_from_three_hosts(datadog: GpuSnapshot) -> None:
    # Each host has a GPU with index 0: only the UUID tells them apart.
    assert datadog.gpus_seen == 3
    assert [(g.key, g.index, g.hostname, g.model) for g in datadog.gpus] == [
        (T4_A, "0", "424773df46e0", "Tesla T4"),
        (T4_B, "0", "551bdf382151", "Tesla T4"),
        ("GPU-abc", "0", "ip-11111", "NVIDIA A10G"),
    ]


def test_datadog_capture_reads_the_first_t4(datadog: GpuSnapshot) -> None:
    gpu = datadog.gpu(T4_A)
    assert gpu is not None
    assert (gpu.temperature_c, gpu.utilization_pct, gpu.xid) == (25, 0, 0)
    assert gpu.power_w == pytest.approx(8.969)


def test_datadog_capture_reads_the_idle_clock_reason_of_the_second_t4(
    datadog: GpuSnapshot,
) -> None:
    gpu = datadog.gpu(T4_B)
    assert gpu is not None
    assert gpu.clock_event_reasons == 1  # GPU idle: not throttling
    assert gpu.temperature_c is None  # only SLOWDOWN_TEMP (93) is given for this one


def test_datadog_capture_ignores_its_label_less_dummy_series(datadog: GpuSnapshot) -> None:
    # MEMORY_TEMP, ROW_REMAP_FAILURE and UNCORRECTABLE_REMAPPED_ROWS appear only without labels.
    assert {(g.memory_temperature_c, g.row_remap_failure) for g in datadog.gpus} == {(None, None)}
    assert {g.uncorrectable_remapped_rows for g in datadog.gpus} == {None}


def test_datadog_capture_is_healthy_and_names_gpus_by_host_where_indexes_clash(
    datadog: GpuSnapshot,
) -> None:
    assert verdict(assess(datadog, None, expected_gpus=3)) == ("healthy", ())
    hot = assess(datadog, None, expected_gpus=3, thresholds=GpuThresholds(max_temp_c=25))
    assert verdict(hot) == ("unusable", ("temperature 25 °C on GPU 0 (424773df46e0)",))


# --- reading hand-made scrapes ------------------------------------------------------------------


def test_empty_text_holds_no_gpu() -> None:
    assert parse_dcgm("").gpus_seen == 0
    assert verdict(assess(parse_dcgm(""), None, expected_gpus=0)) == ("healthy", ())
    assert verdict(assess(parse_dcgm(""), None, expected_gpus=8)) == (
        "fatal",
        ("8 of 8 GPUs missing",),
    )


def test_lowercase_hostname_without_uuid_keys_the_gpu_by_host_and_index() -> None:
    text = 'DCGM_FI_DEV_GPU_TEMP{gpu="3",device="nvidia3",hostname="node-b"} 55\n'
    (gpu,) = parse_dcgm(text).gpus
    assert (gpu.key, gpu.hostname, gpu.uuid, gpu.temperature_c) == ("node-b/3", "node-b", None, 55)


def mig_line(metric: str, value: int, instance: str = "", profile: str = "", gpu: str = "0") -> str:
    labels = f'gpu="{gpu}",UUID="GPU-{"mig" if instance else "whole"}",Hostname="n"'
    if instance:
        labels += f',GPU_I_ID="{instance}",GPU_I_PROFILE="{profile}"'
    return f"{metric}{{{labels}}} {value}"


MIG = "\n".join(
    [
        f"# TYPE {TEMP} gauge",
        mig_line(TEMP, 51, "1", "3g.40gb"),
        mig_line(TEMP, 52, "2", "2g.20gb"),
        mig_line(TEMP, 52, "3", "1g.10gb"),
        mig_line(TEMP, 40, gpu="1"),
        f"# TYPE {THROTTLE} gauge",
        mig_line(THROTTLE, 32, "1", "3g.40gb"),
        mig_line(THROTTLE, 4, "2", "2g.20gb"),
    ]
)


def test_mig_instances_count_once_under_their_physical_gpu() -> None:
    snapshot = parse_dcgm(MIG)
    assert snapshot.gpus_seen == 2
    mig = snapshot.gpu("GPU-mig")
    assert mig is not None
    assert mig.mig_instances == ("1", "2", "3")
    assert (mig.index, mig.hostname) == ("0", "n")
    assert mig.temperature_c == 52  # the hottest instance's reading
    assert mig.clock_event_reasons == 32 | 4  # bitmasks are OR-ed


def test_mig_instances_without_uuid_fold_by_host_and_index() -> None:
    text = MIG.replace('UUID="GPU-mig",', "").replace('UUID="GPU-whole",', "")
    snapshot = parse_dcgm(text)
    assert [(g.key, g.mig_instances) for g in snapshot.gpus] == [
        ("n/0", ("1", "2", "3")),
        ("n/1", ()),
    ]


def test_labels_missing_from_one_series_are_taken_from_another() -> None:
    text = (
        f'{XID}{{gpu="2",UUID="GPU-x"}} 0\n'
        f'{TEMP}{{gpu="2",UUID="GPU-x",modelName="NVIDIA H100",Hostname="h"}} 30\n'
    )
    (gpu,) = parse_dcgm(text).gpus
    assert (gpu.model, gpu.hostname, gpu.index) == ("NVIDIA H100", "h", "2")


def test_counter_families_are_read_whether_typed_or_not() -> None:
    typed = f'# TYPE {DBE_VOL} counter\n{DBE_VOL}{{gpu="0",UUID="GPU-x"}} 4\n'
    untyped = f'{DBE_AGG}{{gpu="0",UUID="GPU-x"}} 6\n'
    (gpu,) = parse_dcgm(typed + untyped).gpus
    assert (gpu.ecc_dbe_volatile, gpu.ecc_dbe_aggregate) == (4, 6)


def test_newer_clocks_event_reasons_field_is_read_like_the_throttle_one() -> None:
    (gpu,) = parse_dcgm(f'{CLOCK_EVENTS}{{gpu="0",UUID="GPU-x"}} 64\n').gpus
    assert gpu.clock_event_reasons == 64


def test_non_dcgm_families_and_non_finite_values_are_ignored() -> None:
    text = (
        'process_open_fds{gpu="0"} 9\n'
        f'{TEMP}{{gpu="0",UUID="GPU-x"}} NaN\n'
        f'{UTIL}{{gpu="0",UUID="GPU-x"}} +Inf\n'
        f'{XID}{{gpu="0",UUID="GPU-x"}} 13\n'
    )
    (gpu,) = parse_dcgm(text).gpus
    assert (gpu.key, gpu.temperature_c, gpu.utilization_pct, gpu.xid) == ("GPU-x", None, None, 13)


@pytest.mark.parametrize(
    "text",
    [
        pytest.param("garbage\n", id="a word without a value"),
        pytest.param('DCGM_FI_DEV_GPU_TEMP{gpu="0" 55\n', id="an unclosed label set"),
        pytest.param('DCGM_FI_DEV_GPU_TEMP{gpu="0"} hot\n', id="a value that is no number"),
        pytest.param('DCGM_FI_DEV_GPU_TEMP{gpu="0",gpu="1"} 1\n', id="a repeated label"),
        pytest.param("<html><body>502 Bad Gateway</body></html>", id="an HTML error page"),
        pytest.param('{"gpus": []}', id="a JSON document"),
    ],
)
def test_unreadable_text_raises_value_error(text: str) -> None:
    with pytest.raises(ValueError, match=r"^unreadable DCGM metrics: "):
        parse_dcgm(text)


FUZZ = settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
TOKENS = st.sampled_from(
    [
        "DCGM_FI_DEV_XID_ERRORS", "DCGM_FI_DEV_GPU_TEMP", "DCGM_FI_DEV_ECC_DBE_VOL_TOTAL",
        "DCGM_FI_DEV_CLOCK_THROTTLE_REASONS", "_total", "# TYPE ", "# HELP ", " counter", " gauge",
        " histogram", " summary", "{", "}", ",", "=", '"', "\\", "gpu", "UUID", "Hostname",
        "GPU_I_ID", "le", "quantile", " ", "\n", "0", "1", "-", "79", "1e400", "NaN", "+Inf", "#",
        "_bucket", "_count", "_sum", "_created", "\t", ".", "x",
    ]
)  # fmt: skip


@FUZZ
@given(st.text(max_size=200))
def test_arbitrary_text_raises_nothing_but_value_error(text: str) -> None:
    with contextlib.suppress(ValueError):
        parse_dcgm(text)


@FUZZ
@given(st.lists(TOKENS, max_size=40).map("".join))
def test_exposition_like_text_raises_nothing_but_value_error_and_assesses(text: str) -> None:
    try:
        snapshot = parse_dcgm(text)
    except ValueError:
        return
    health = assess(snapshot, None, expected_gpus=1)
    assert not (health.fatal and health.usable)
    assert not (health.degraded and not health.usable)
    assert GpuCounters.from_json(json.loads(json.dumps(health.counters.to_json()))) == (
        health.counters
    )


# --- the verdict over consecutive scrapes -------------------------------------------------------

CASES = [
    pytest.param(
        [node(8)], 8, ("healthy", ()), id="eight GPUs reporting nothing wrong are healthy"
    ),
    pytest.param(
        [node(8), node(7)],
        8,
        ("fatal", ("1 of 8 GPUs missing",)),
        id="a GPU that disappears between two scrapes makes the node unusable",
    ),
    pytest.param(
        [node(6)], 8, ("fatal", ("2 of 8 GPUs missing",)), id="two GPUs missing are counted"
    ),
    pytest.param([node(9)], 8, ("healthy", ()), id="more GPUs than expected is no fault"),
    pytest.param(
        [node(8, gpu3={XID: 79})],
        8,
        ("healthy", ()),
        id="a non zero xid on the first scrape is only recorded as seen",
    ),
    pytest.param(
        [node(8, gpu3={XID: 79}), node(8, gpu3={XID: 79})],
        8,
        ("healthy", ()),
        id="an unchanged sticky xid is no new event",
    ),
    pytest.param(
        [node(8, gpu3={XID: 0}), node(8, gpu3={XID: 79})],
        8,
        ("fatal", ("XID 79 on GPU 3",)),
        id="an xid changing to 79 makes the gpu unusable",
    ),
    pytest.param(
        [node(8, gpu3={XID: 13}), node(8, gpu3={XID: 48})],
        8,
        ("fatal", ("XID 48 on GPU 3",)),
        id="an xid changing from one code to a fatal one is an event",
    ),
    pytest.param(
        [node(8, gpu3={XID: 0}), node(8, gpu3={XID: 13})],
        8,
        ("degraded", ("XID 13 on GPU 3",)),
        id="a new application xid only degrades",
    ),
    pytest.param(
        [node(8, gpu3={XID: 0}), node(8, gpu3={XID: 92})],
        8,
        ("degraded", ("XID 92 on GPU 3",)),
        id="a high single bit ecc rate xid only degrades",
    ),
    pytest.param(
        [node(8, gpu3={XID: 79}), node(8, gpu3={XID: 0})],
        8,
        ("healthy", ()),
        id="an xid falling back to zero is a reset not an event",
    ),
    pytest.param(
        [node(8, gpu3={XID: 79}), node(8, gpu3={XID: 0}), node(8, gpu3={XID: 79})],
        8,
        ("fatal", ("XID 79 on GPU 3",)),
        id="the same xid after a reset is a new event",
    ),
    pytest.param(
        [node(8, gpu3={XID: 0}), node(8), node(8, gpu3={XID: 0})],
        8,
        ("healthy", ()),
        id="a scrape without the xid field keeps the baseline",
    ),
    pytest.param(
        [node(8, gpu1={DBE_VOL: 0}), node(8, gpu1={DBE_VOL: 2})],
        8,
        ("fatal", ("ECC double-bit errors +2 on GPU 1",)),
        id="an ecc double bit counter increase makes the gpu unusable",
    ),
    pytest.param(
        [node(8, gpu1={DBE_AGG: 5}), node(8, gpu1={DBE_AGG: 6})],
        8,
        ("fatal", ("ECC double-bit errors +1 on GPU 1",)),
        id="an aggregate double bit counter increase counts too",
    ),
    pytest.param(
        [node(8, gpu1={DBE_VOL: 3}), node(8, gpu1={DBE_VOL: 3})],
        8,
        ("healthy", ()),
        id="a flat non zero ecc counter is no new event",
    ),
    pytest.param(
        [node(8, gpu1={DBE_VOL: 5}), node(8, gpu1={DBE_VOL: 0})],
        8,
        ("healthy", ()),
        id="an ecc counter that goes down resets the baseline silently",
    ),
    pytest.param(
        [node(8, gpu1={DBE_VOL: 5}), node(8, gpu1={DBE_VOL: 0}), node(8, gpu1={DBE_VOL: 1})],
        8,
        ("fatal", ("ECC double-bit errors +1 on GPU 1",)),
        id="an ecc increase after a reset counts from the new baseline",
    ),
    pytest.param(
        [node(8, gpu0={REMAP_FAILURE: 1})],
        8,
        ("fatal", ("row remap failure on GPU 0",)),
        id="a row remap failure makes the gpu unusable even on the first scrape",
    ),
    pytest.param(
        [node(8, gpu0={UNCORRECTABLE_ROWS: 0}), node(8, gpu0={UNCORRECTABLE_ROWS: 1})],
        8,
        ("degraded", ("uncorrectable remapped rows +1 on GPU 0",)),
        id="a new uncorrectable remapped row degrades",
    ),
    pytest.param(
        [node(8, gpu2={THROTTLE: 0x40})],
        8,
        ("degraded", ("thermal throttling on GPU 2",)),
        id="one scrape of thermal throttling degrades",
    ),
    pytest.param(
        [node(8, gpu2={THROTTLE: 0x20})] * 2,
        8,
        ("degraded", ("thermal throttling on GPU 2",)),
        id="a throttle streak below the threshold degrades",
    ),
    pytest.param(
        [node(8, gpu2={THROTTLE: 0x40})] * 3,
        8,
        ("unusable", ("thermal throttling on GPU 2",)),
        id="a throttle streak reaching three scrapes makes the gpu unusable but not fatal",
    ),
    pytest.param(
        [node(8, gpu2={THROTTLE: 0x40})] * 2 + [node(8)] + [node(8, gpu2={THROTTLE: 0x40})],
        8,
        ("degraded", ("thermal throttling on GPU 2",)),
        id="a scrape without throttling restarts the streak",
    ),
    pytest.param(
        [node(8, gpu2={CLOCK_EVENTS: 0x4})] * 3,
        8,
        ("healthy", ()),
        id="a sustained software power cap is normal under full load",
    ),
    pytest.param(
        [node(8, gpu2={THROTTLE: 0x80 | 0x20})],
        8,
        ("degraded", ("thermal and power throttling on GPU 2",)),
        id="thermal and power bits together are named together",
    ),
    pytest.param(
        [node(8, gpu2={THROTTLE: 0x8})],
        8,
        ("degraded", ("hardware slowdown throttling on GPU 2",)),
        id="the hardware slowdown bit alone is throttling",
    ),
    pytest.param(
        [node(8, gpu2={THROTTLE: 0x1 | 0x2 | 0x100})] * 3,
        8,
        ("healthy", ()),
        id="idle application clock and display bits are not throttling",
    ),
    pytest.param(
        [node(8, gpu5={TEMP: 92})],
        8,
        ("unusable", ("temperature 92 °C on GPU 5",)),
        id="a temperature above the limit makes the box unusable",
    ),
    pytest.param(
        [node(8, gpu5={TEMP: 90})],
        8,
        ("unusable", ("temperature 90 °C on GPU 5",)),
        id="a temperature at the limit makes the box unusable",
    ),
    pytest.param(
        [node(8, gpu5={TEMP: 89.5, MEM_TEMP: 99})],
        8,
        ("healthy", ()),
        id="a temperature under the limit is healthy",
    ),
    pytest.param(
        [node(8, gpu3={XID: 0}), node(7, gpu3={XID: 79}, gpu5={TEMP: 95})],
        8,
        ("fatal", ("1 of 8 GPUs missing", "XID 79 on GPU 3", "temperature 95 °C on GPU 5")),
        id="every reason is listed missing gpus first then gpu by gpu",
    ),
]


@pytest.mark.parametrize(("scrapes", "expected", "outcome"), CASES)
def test_verdict_after_consecutive_scrapes(
    scrapes: list[Gpus], expected: int, outcome: tuple[str, tuple[str, ...]]
) -> None:
    assert verdict(run(scrapes, expected)) == outcome


def test_throttle_threshold_is_configurable() -> None:
    assert verdict(run([node(8, gpu2={THROTTLE: 0x40})], throttle_scrapes=1))[0] == "unusable"
    assert verdict(run([node(8, gpu2={THROTTLE: 0x4})] * 5, throttle_reasons=0x60)) == (
        "healthy",
        (),
    )


def test_throttle_streak_is_kept_in_the_counters() -> None:
    health = run([node(2, gpu1={THROTTLE: 0x40})] * 2, expected=2)
    assert [(m.key, m.throttle_streak) for m in health.counters.gpus] == [
        (uuid(0), 0),
        (uuid(1), 2),
    ]


def test_a_gpu_that_returns_starts_from_a_new_baseline() -> None:
    # Forgotten while absent: its sticky XID on return is the baseline, not an event.
    health = run([node(2, gpu1={XID: 0}), node(1), node(2, gpu1={XID: 79})], expected=2)
    assert verdict(health) == ("healthy", ())
    assert health.counters.get(uuid(1)) == GpuMemory(uuid(1), xid=79)


@pytest.mark.parametrize(
    "code", [48, 63, 64, 74, 79, 94, 95], ids=lambda code: f"xid {code} is fatal"
)
def test_fatal_xid_set_holds_the_reset_or_service_codes(code: int) -> None:
    assert code in FATAL_XIDS


@pytest.mark.parametrize("code", [13, 31, 43, 45, 92], ids=lambda code: f"xid {code} is not fatal")
def test_application_and_warning_xids_are_not_fatal(code: int) -> None:
    assert code not in FATAL_XIDS


# --- counters between probes --------------------------------------------------------------------


def test_counters_round_trip_through_json() -> None:
    counters = GpuCounters(
        (
            GpuMemory("GPU-a", xid=79, ecc_dbe_volatile=2, throttle_streak=1),
            GpuMemory("node-b/3", ecc_dbe_aggregate=7, uncorrectable_remapped_rows=1),
        )
    )
    stored = json.loads(json.dumps(counters.to_json()))
    assert stored["version"] == 1
    assert GpuCounters.from_json(stored) == counters


@pytest.mark.parametrize(
    "document",
    [
        pytest.param(None, id="nothing stored"),
        pytest.param([], id="a list"),
        pytest.param({"version": 2, "gpus": {}}, id="an unknown version"),
        pytest.param({"version": 1, "gpus": []}, id="gpus as a list"),
        pytest.param({"version": 1, "gpus": {"GPU-a": 79}}, id="an entry that is no object"),
        pytest.param({"version": 1, "gpus": {"GPU-a": {"xid": "79"}}}, id="a value as text"),
        pytest.param({"version": 1, "gpus": {"GPU-a": {"xid": True}}}, id="a value as a bool"),
        pytest.param(
            {"version": 1, "gpus": {"GPU-a": {"throttle_streak": None}}}, id="a missing streak"
        ),
    ],
)
def test_counters_from_anything_else_raise_value_error(document: object) -> None:
    with pytest.raises(ValueError, match=r"^unreadable GPU counters: "):
        GpuCounters.from_json(document)


memories = st.builds(
    GpuMemory,
    key=st.text(min_size=1, max_size=20),
    xid=st.none() | st.integers(0, 200),
    ecc_dbe_volatile=st.none() | st.integers(0, 2**40),
    ecc_dbe_aggregate=st.none() | st.integers(0, 2**40),
    uncorrectable_remapped_rows=st.none() | st.integers(0, 1000),
    throttle_streak=st.integers(0, 100),
)


@FUZZ
@given(st.lists(memories, max_size=5, unique_by=lambda m: m.key))
def test_any_counters_survive_json(gpus: list[GpuMemory]) -> None:
    counters = GpuCounters(tuple(gpus))
    assert GpuCounters.from_json(json.loads(json.dumps(counters.to_json()))) == counters


# --- a fatal event holds until the GPU is reset (issue 14: XID/ECC never alerted) -------------


@pytest.mark.parametrize(
    ("scrapes", "expected"),
    [
        pytest.param(
            [node(gpu3={XID: 0}), node(gpu3={XID: 79}), node(gpu3={XID: 79})],
            ("fatal", ("XID 79 on GPU 3",)),
            id="a fatal XID still holds on the next scrape (the confirmation re-probe)",
        ),
        pytest.param(
            [node(gpu3={XID: 0}), node(gpu3={XID: 79}), *[node(gpu3={XID: 79})] * 5],
            ("fatal", ("XID 79 on GPU 3",)),
            id="and on every scrape until a reset",
        ),
        pytest.param(
            [node(gpu3={XID: 0}), node(gpu3={XID: 79}), node(gpu3={XID: 0})],
            ("healthy", ()),
            id="the XID code back at 0 is the reset that clears it",
        ),
        pytest.param(
            [node(gpu3={XID: 0}), node(gpu3={XID: 13}), node(gpu3={XID: 13})],
            ("healthy", ()),
            id="a non-fatal XID warns once and does not hold",
        ),
        pytest.param(
            [
                node(gpu5={DBE_VOL: 0, DBE_AGG: 2}),
                node(gpu5={DBE_VOL: 1, DBE_AGG: 3}),
                node(gpu5={DBE_VOL: 1, DBE_AGG: 3}),
            ],
            ("fatal", ("ECC double-bit errors +1 on GPU 5",)),
            id="an ECC double-bit error holds",
        ),
        pytest.param(
            [
                node(gpu5={DBE_VOL: 0, DBE_AGG: 2}),
                node(gpu5={DBE_VOL: 1, DBE_AGG: 3}),
                node(gpu5={DBE_VOL: 0, DBE_AGG: 3}),
            ],
            ("healthy", ()),
            id="the volatile count back at 0 is the reset that clears it",
        ),
        pytest.param(
            [node(gpu5={DBE_AGG: 2}), node(gpu5={DBE_AGG: 3}), *[node(gpu5={DBE_AGG: 3})] * 2],
            ("fatal", ("ECC double-bit errors +1 on GPU 5",)),
            id="with only the aggregate count it holds for the hold period",
        ),
        pytest.param(
            [node(gpu5={DBE_AGG: 2}), node(gpu5={DBE_AGG: 3}), *[node(gpu5={DBE_AGG: 3})] * 3],
            ("healthy", ()),
            id="and clears after it",
        ),
    ],
)
def test_a_fatal_gpu_event_holds_until_the_gpu_is_reset(
    scrapes: list[Gpus], expected: tuple[str, tuple[str, ...]]
) -> None:
    assert verdict(run(scrapes, fault_hold_scrapes=3)) == expected
