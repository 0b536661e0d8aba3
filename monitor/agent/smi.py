"""Reading the box's GPUs with ``nvidia-smi``, where NVML cannot load from Python.

``nvidia-smi --query-gpu=<fields> --format=csv`` prints a header row (field names, units in
brackets) and one row per GPU; values carry their units (``100 %``, ``19818 MiB``) and a field a
GPU lacks reads ``[N/A]`` or ``[Not Supported]``. The parser reads columns by header name, so
it takes any field order and any superset of fields (the real capture in the tests asks for
212). nvidia-smi has no XID query: readings from it carry no XID, and the server judges the
rest.
"""

from __future__ import annotations

import csv
import socket
import subprocess
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

from monitor.agent.model import AgentError, BoxReading, GpuSample
from monitor.probes.gpus.readings import GpuReading

FIELDS = (
    "index",
    "uuid",
    "name",
    "temperature.gpu",
    "temperature.memory",
    "utilization.gpu",
    "memory.used",
    "memory.total",
    "power.draw",
    "clocks_event_reasons.active",
    "ecc.errors.uncorrected.volatile.total",
    "ecc.errors.uncorrected.aggregate.total",
    "remapped_rows.uncorrectable",
    "remapped_rows.failure",
)
# drivers before 535 name the clock-event mask "throttle reasons" and may lack remapped rows
OLD_DRIVER_FIELDS = tuple(
    name.replace("clocks_event_reasons", "clocks_throttle_reasons")
    for name in FIELDS
    if not name.startswith("remapped_rows")
)
MISSING = frozenset({"", "n/a", "[n/a]", "[not supported]", "not supported", "[unknown error]"})
TIMEOUT_S = 10.0

Runner = Callable[[list[str]], str]  # argv -> stdout; raises AgentError


def parse_smi_csv(text: str, hostname: str | None = None) -> tuple[GpuSample, ...]:
    """The GPUs of one ``--format=csv`` answer (header row first). Raises ``ValueError`` for
    text that is not one."""
    rows = [row for row in csv.reader(text.splitlines(), skipinitialspace=True) if row]
    if not rows:
        raise ValueError("nvidia-smi printed nothing")
    header = [name.split(" [", 1)[0].strip() for name in rows[0]]
    if "uuid" not in header and "index" not in header:
        raise ValueError("not nvidia-smi --format=csv output: no uuid or index column")
    samples = []
    for row in rows[1:]:
        if len(row) != len(header):
            raise ValueError(f"a row of {len(row)} values under {len(header)} columns")
        samples.append(_sample(dict(zip(header, row, strict=True)), hostname))
    return tuple(samples)


def _sample(values: Mapping[str, str], hostname: str | None) -> GpuSample:
    get = _getter(values)
    uuid, index = get("uuid"), get("index")
    host = get("hostname") or hostname
    key = uuid or f"{host or 'localhost'}/{index}"
    failure = get("remapped_rows.failure")
    reasons = get("clocks_event_reasons.active") or get("clocks_throttle_reasons.active")
    reading = GpuReading(
        key=key,
        index=index,
        uuid=uuid,
        hostname=host,
        model=get("name"),
        utilization_pct=_number(get("utilization.gpu")),
        temperature_c=_number(get("temperature.gpu")),
        memory_temperature_c=_number(get("temperature.memory")),
        power_w=_number(get("power.draw")),
        xid=None,
        ecc_dbe_volatile=_whole(get("ecc.errors.uncorrected.volatile.total")),
        ecc_dbe_aggregate=_whole(get("ecc.errors.uncorrected.aggregate.total")),
        row_remap_failure=None if failure is None else failure.lower() in ("yes", "1", "true"),
        uncorrectable_remapped_rows=_whole(get("remapped_rows.uncorrectable")),
        clock_event_reasons=_mask(reasons),
    )
    return GpuSample(
        reading,
        memory_used_mib=_number(get("memory.used")),
        memory_total_mib=_number(get("memory.total")),
    )


def _getter(values: Mapping[str, str]) -> Callable[[str], str | None]:
    def get(name: str) -> str | None:
        value = values.get(name)
        if value is None or value.strip().lower() in MISSING:
            return None
        return value.strip()

    return get


def _number(value: str | None) -> float | None:
    """``"100 %"`` -> 100.0, ``"631.95 W"`` -> 631.95; None for anything else."""
    if value is None:
        return None
    try:
        return float(value.split()[0])
    except (ValueError, IndexError):
        return None


def _whole(value: str | None) -> int | None:
    number = _number(value)
    return None if number is None or number != int(number) else int(number)


def _mask(value: str | None) -> int | None:
    if value is None:
        return None
    try:
        return int(value, 16) if value.lower().startswith("0x") else int(value)
    except ValueError:
        return None


def run_smi(argv: list[str]) -> str:
    """Run nvidia-smi; its stdout. ``AgentError`` with its own words when it fails."""
    try:
        done = subprocess.run(  # noqa: S603 (the operator's own nvidia-smi, no shell)
            argv, capture_output=True, text=True, timeout=TIMEOUT_S, check=False
        )
    except FileNotFoundError:
        raise AgentError("nvidia-smi is not installed (not on PATH)") from None
    except subprocess.TimeoutExpired:
        raise AgentError(f"nvidia-smi did not answer within {TIMEOUT_S:g} s") from None
    if done.returncode != 0:
        said = (done.stderr or done.stdout).strip().splitlines()
        raise AgentError(f"nvidia-smi failed: {said[0] if said else f'exit {done.returncode}'}")
    return done.stdout


@dataclass
class SmiReader:
    """Reads the GPUs by running nvidia-smi each time; falls back to the older field names
    once, and keeps them, when the driver does not know the current ones."""

    run: Runner = run_smi
    binary: str = "nvidia-smi"
    hostname: str = field(default_factory=socket.gethostname)
    source: str = "nvidia-smi"
    fields: tuple[str, ...] = FIELDS

    def read(self) -> BoxReading:
        try:
            text = self.run(self._argv())
        except AgentError as exc:
            if self.fields == OLD_DRIVER_FIELDS or "not a valid field" not in str(exc).lower():
                raise
            self.fields = OLD_DRIVER_FIELDS
            text = self.run(self._argv())
        try:
            return BoxReading(parse_smi_csv(text, self.hostname), self.source)
        except ValueError as exc:
            raise AgentError(f"nvidia-smi output unreadable: {exc}") from None

    def close(self) -> None:
        pass

    def _argv(self) -> list[str]:
        return [self.binary, f"--query-gpu={','.join(self.fields)}", "--format=csv"]
