"""The agent's GPU readers: NVML (faked at the pynvml functions, with a real H100's readings)
and nvidia-smi (the real capture in tests/fixtures/nvidia-smi/)."""

from __future__ import annotations

import pytest

from monitor.agent.model import AgentError
from monitor.agent.nvml import NvmlReader
from monitor.agent.run import open_reader
from monitor.agent.smi import FIELDS, OLD_DRIVER_FIELDS, SmiReader, parse_smi_csv
from monitor.probes.gpus.health import assess
from monitor.probes.gpus.readings import CLOCK_HW_THERMAL
from monitor.probes.gpus.wire import snapshot_from_json
from tests.fake_nvml import FakeNvml, h100s, patch_into
from tests.support import FIXTURES

H100_CSV = (FIXTURES / "nvidia-smi" / "gpuexp-h100-load.csv").read_text()
H100_UUID = "GPU-00000000-0000-0000-0000-000000000000"


def test_the_real_h100_capture_reads_as_the_dcgm_fields() -> None:
    [sample] = parse_smi_csv(H100_CSV, hostname="box-1")
    gpu = sample.reading
    assert (gpu.key, gpu.uuid, gpu.index, gpu.hostname) == (H100_UUID, H100_UUID, "0", "box-1")
    assert gpu.model == "NVIDIA H100 80GB HBM3"
    assert (gpu.temperature_c, gpu.memory_temperature_c) == (59.0, 54.0)
    assert (gpu.utilization_pct, gpu.power_w) == (100.0, 631.95)
    assert (sample.memory_used_mib, sample.memory_total_mib) == (19818.0, 81559.0)
    assert gpu.clock_event_reasons == 0
    assert (gpu.ecc_dbe_volatile, gpu.ecc_dbe_aggregate) == (0, 0)
    assert (gpu.uncorrectable_remapped_rows, gpu.row_remap_failure) == (0, False)
    assert gpu.xid is None  # nvidia-smi has no XID query


def test_the_capture_is_judged_usable_for_one_gpu_and_missing_for_two() -> None:
    [sample] = parse_smi_csv(H100_CSV)
    snapshot = snapshot_from_json([sample.to_json()])
    assert assess(snapshot, None, 1).usable
    two = assess(snapshot, None, 2)
    assert (two.usable, two.fatal, two.reasons) == (False, True, ("1 of 2 GPUs missing",))


def test_na_and_unsupported_values_are_left_out_not_guessed() -> None:
    text = (
        "index, uuid, name, temperature.gpu, ecc.errors.uncorrected.volatile.total,"
        " power.draw [W]\n"
        "0, GPU-a, NVIDIA A10G, 41, [N/A], [Not Supported]\n"
    )
    [sample] = parse_smi_csv(text)
    assert sample.reading.temperature_c == 41.0
    assert (sample.reading.ecc_dbe_volatile, sample.reading.power_w) == (None, None)


@pytest.mark.parametrize(
    "text",
    [
        pytest.param("", id="empty"),
        pytest.param("Failed to initialize NVML: Driver/library version mismatch\n", id="error"),
        pytest.param("index, uuid\n0, GPU-a, extra\n", id="ragged"),
    ],
)
def test_output_that_is_not_a_query_answer_is_a_clear_error(text: str) -> None:
    with pytest.raises(ValueError, match=r"\w"):
        parse_smi_csv(text)


def test_an_old_driver_gets_the_old_field_names_once() -> None:
    asked: list[list[str]] = []

    def run(argv: list[str]) -> str:
        asked.append(argv)
        if "clocks_event_reasons.active" in argv[1]:
            raise AgentError(
                'nvidia-smi failed: Field "clocks_event_reasons.active" '
                "is not a valid field to query."
            )
        return "index, uuid, temperature.gpu, clocks_throttle_reasons.active\n0, GPU-a, 50, 0x40\n"

    reader = SmiReader(run=run, hostname="old")
    first, second = reader.read(), reader.read()
    assert reader.fields == OLD_DRIVER_FIELDS
    assert [len(a) for a in asked] == [3, 3, 3]
    assert asked[0][1] == f"--query-gpu={','.join(FIELDS)}"
    assert first.gpus[0].reading.clock_event_reasons == CLOCK_HW_THERMAL
    assert second.gpus[0].reading.temperature_c == 50.0


def test_nvml_reads_every_gpu_with_the_recorded_values() -> None:
    fake = FakeNvml(h100s(2))
    reading = NvmlReader(fake, hostname="box-1").read()
    assert reading.source == "nvml"
    assert [g.reading.index for g in reading.gpus] == ["0", "1"]
    gpu = reading.gpus[0]
    assert gpu.reading.key == gpu.reading.uuid == "GPU-box-00-0000-0000-000000000000"
    assert (gpu.reading.temperature_c, gpu.reading.memory_temperature_c) == (59.0, 54.0)
    assert (gpu.reading.power_w, gpu.reading.utilization_pct) == (631.95, 100.0)
    assert (gpu.memory_used_mib, gpu.memory_total_mib) == (19818.0, 81559.0)
    assert gpu.reading.xid == 0  # registered for XID events, none yet
    assert snapshot_from_json([g.to_json() for g in reading.gpus]).gpus_seen == 2


def test_an_xid_event_is_carried_as_the_last_xid_of_its_gpu_until_another() -> None:
    fake = FakeNvml(h100s(2))
    reader = NvmlReader(fake)
    fake.xid(1, 79)
    assert [g.reading.xid for g in reader.read().gpus] == [0, 79]
    assert [g.reading.xid for g in reader.read().gpus] == [0, 79]  # the last seen, as DCGM
    fake.xid(1, 13)
    fake.xid(1, 48)
    assert [g.reading.xid for g in reader.read().gpus] == [0, 48]


def test_a_lost_gpu_is_left_out_and_an_unsupported_counter_is_none() -> None:
    gpus = h100s(3)
    gpus[2].lost = True
    gpus[0].ecc_dbe_volatile = gpus[0].ecc_dbe_aggregate = None
    reading = NvmlReader(FakeNvml(gpus)).read()
    assert [g.reading.index for g in reading.gpus] == ["0", "1"]
    assert reading.gpus[0].reading.ecc_dbe_volatile is None
    assert reading.gpus[1].reading.ecc_dbe_volatile == 0


def test_auto_uses_nvml_when_it_loads(monkeypatch: pytest.MonkeyPatch) -> None:
    patch_into(monkeypatch, FakeNvml(h100s(1)))
    reader = open_reader("auto", nvidia_smi="/nonexistent/nvidia-smi")
    assert reader.source == "nvml"
    assert len(reader.read().gpus) == 1


def test_auto_falls_back_to_nvidia_smi_and_says_why_when_neither_works(
    monkeypatch: pytest.MonkeyPatch, tmp_path: object
) -> None:
    patch_into(monkeypatch, FakeNvml([], loads=False))
    with pytest.raises(AgentError) as raised:
        open_reader("auto", nvidia_smi="/nonexistent/nvidia-smi")
    assert "NVML Shared Library Not Found" in str(raised.value)
    assert "nvidia-smi" in str(raised.value)
    with pytest.raises(AgentError, match="NVML did not load"):
        open_reader("nvml")
