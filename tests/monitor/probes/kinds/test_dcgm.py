"""A dcgm target's verdict names its cause: whatever made the GPUs unusable (a missing GPU, an
unreadable exporter), the cause is the GPU readings, and the rule stays ``gpu_health``."""

from __future__ import annotations

from datetime import UTC, datetime

from monitor.probes import kinds
from monitor.probes.kinds.dcgm import judge
from monitor.probes.model import ProbeResult, ProbeTarget
from tests.support import FIXTURES

L4 = (FIXTURES / "feeds" / "dcgm" / "cncf-kops-aws-L4.prom").read_bytes()  # one healthy L4
T0 = datetime(2026, 12, 4, tzinfo=UTC)


def scrape(gpus: int, raw: bytes) -> ProbeResult:
    target = ProbeTarget(1, "l4-box", "dcgm", "http://l4:9400/metrics", 5.0, gpus=gpus)
    return judge(ProbeResult(1, "l4-box", T0, True, status_code=200), raw, target)


def test_a_healthy_scrape_is_usable_with_no_cause() -> None:
    result = scrape(1, L4)
    assert (result.usable, result.causes) == (True, frozenset())


def test_a_missing_gpu_is_a_gpu_fault() -> None:
    result = scrape(2, L4)
    assert (result.usable, result.error_kind, result.causes) == (
        False,
        "gpu",
        frozenset({"gpu_hardware"}),
    )


def test_an_unreadable_exporter_is_a_gpu_fault_too() -> None:
    result = scrape(1, b'DCGM_FI_DEV_GPU_TEMP{gpu="0" 40\n')
    assert (result.usable, result.error_kind, result.causes) == (
        False,
        "parse",
        frozenset({"gpu_hardware"}),
    )


def test_every_cause_of_a_dcgm_outage_raises_gpu_health() -> None:
    kind = kinds.KINDS["dcgm"]
    for causes in (frozenset({"gpu_hardware"}), frozenset({"stalled_step"}), frozenset()):
        assert [r.rule for r in kind.usable_rules(causes)] == ["gpu_health"]
