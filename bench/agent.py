"""What `slamon agent` costs on a GPU box: CPU per reading and resident memory.

The real `slamon agent` command runs against a local heartbeat receiver (202 to every push),
reading every ``--interval`` through nvidia-smi (a script printing the real H100 capture from
tests/fixtures/nvidia-smi: it costs a fork and a `cat`, less than the real nvidia-smi, whose own
cost is NVIDIA's and not counted as the agent's). The NVML path is measured in one process with
NVML faked at the pynvml functions (tests/fake_nvml.py): the agent's own Python per reading,
without the driver's calls (microseconds each on a real GPU).

    .venv/bin/python bench/agent.py [--seconds 30] [--interval 0.2] [--gpus 8]

Prints CPU ms per reading (the agent process, its nvidia-smi children apart), peak RSS, and the
ratio to the `slamon run` figure in BENCHMARKS.md given with --service-rss.
"""

from __future__ import annotations

import argparse
import http.server
import os
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from measure import CLOCK_TICKS, cpu_ticks

H100_CSV = ROOT / "tests" / "fixtures" / "nvidia-smi" / "gpuexp-h100-load.csv"
PUSHES: list[float] = []


class Receiver(http.server.BaseHTTPRequestHandler):
    def log_message(self, *args: object) -> None:
        pass

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("Content-Length", 0)))
        PUSHES.append(time.monotonic())
        self.send_response(202)
        self.send_header("Content-Length", "2")
        self.end_headers()
        self.wfile.write(b"{}")


def peak_rss_mib(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return 0.0


def children_ticks(pid: int) -> int:
    """CPU of the reaped children (nvidia-smi runs): cutime + cstime."""
    text = Path(f"/proc/{pid}/stat").read_text()
    fields = text[text.rindex(")") + 2 :].split()
    return int(fields[13]) + int(fields[14])


def agent_process(seconds: float, interval: float, gpus: int) -> dict[str, float]:
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Receiver)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    folder = Path(tempfile.mkdtemp(prefix="slamon-agent-bench-"))
    rows = H100_CSV.read_text().splitlines()
    lines = [
        rows[0],
        *(rows[1].replace(", 0, [Requested", f", {i}, [Requested", 1) for i in range(gpus)),
    ]
    (folder / "readings.csv").write_text("\n".join(lines) + "\n")
    smi = folder / "nvidia-smi"
    smi.write_text(f"#!/bin/sh\nexec cat '{folder / 'readings.csv'}'\n")
    smi.chmod(0o755)
    env = os.environ | {"PATH": f"{folder}{os.pathsep}{os.environ['PATH']}"}
    url = f"http://127.0.0.1:{server.server_address[1]}"
    command = [sys.executable, "-m", "monitor.cli", "agent", "--url", url, "--target", "box",
               "--token", "t", "--source", "nvidia-smi", "--interval", f"{interval}s"]  # fmt: skip
    agent = subprocess.Popen(command, env=env, cwd=ROOT, stderr=subprocess.DEVNULL)
    try:
        while len(PUSHES) < 3:
            if agent.poll() is not None:
                raise SystemExit(f"slamon agent exited ({agent.returncode}): {' '.join(command)}")
            time.sleep(0.05)
        start_ticks, start_children, start_pushes = (
            cpu_ticks(agent.pid) or 0,
            children_ticks(agent.pid),
            len(PUSHES),
        )
        time.sleep(seconds)
        ticks = (cpu_ticks(agent.pid) or 0) - start_ticks
        child = children_ticks(agent.pid) - start_children
        readings = len(PUSHES) - start_pushes
        rss = peak_rss_mib(agent.pid)
    finally:
        agent.terminate()
        agent.wait(timeout=10)
        server.shutdown()
    return {
        "readings": readings,
        "cpu_ms_per_reading": 1000 * ticks / CLOCK_TICKS / max(readings, 1),
        "nvidia_smi_ms_per_reading": 1000 * child / CLOCK_TICKS / max(readings, 1),
        "peak_rss_mib": rss,
    }


def nvml_in_process(readings: int, gpus: int) -> float:
    """CPU ms the agent's NVML reader and JSON spend per reading (fake NVML, no driver)."""
    from monitor.agent.nvml import NvmlReader
    from tests.fake_nvml import FakeNvml, h100s

    reader = NvmlReader(FakeNvml(h100s(gpus)))
    started = time.process_time()
    for _ in range(readings):
        reader.read().to_json()
    return 1000 * (time.process_time() - started) / readings


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawTextHelpFormatter
    )
    parser.add_argument("--seconds", type=float, default=30.0)
    parser.add_argument("--interval", type=float, default=0.2)
    parser.add_argument("--gpus", type=int, default=8)
    parser.add_argument(
        "--service-rss", type=float, default=None, help="slamon run's peak RSS, MiB"
    )
    args = parser.parse_args()
    found = agent_process(args.seconds, args.interval, args.gpus)
    nvml_ms = nvml_in_process(2000, args.gpus)
    print(
        f"slamon agent, {args.gpus} GPUs, a reading every {args.interval:g} s for {args.seconds:g} s:"
    )
    print(f"  readings pushed              {found['readings']}")
    print(
        f"  CPU ms per reading (agent)   {found['cpu_ms_per_reading']:.2f}  (nvidia-smi path: read, parse, push)"
    )
    print(
        f"  CPU ms per reading (its nvidia-smi children) {found['nvidia_smi_ms_per_reading']:.2f}"
    )
    print(f"  CPU ms per reading, NVML reader + JSON (in process, fake NVML) {nvml_ms:.3f}")
    print(f"  peak RSS MiB                 {found['peak_rss_mib']:.1f}")
    if args.service_rss:
        print(
            f"  ratio to slamon run's {args.service_rss:g} MiB: {found['peak_rss_mib'] / args.service_rss:.2f}"
        )
    per_day = found["cpu_ms_per_reading"] * 86400 / 15 / 1000
    print(f"  at the default 15 s interval: {per_day:.1f} CPU s a day")


if __name__ == "__main__":
    main()
