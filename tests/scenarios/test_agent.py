"""`slamon agent` and the training hooks end to end: boxes that run only the agent, registered
through the API like a freshly rented node, pushing their GPU readings to the real running
slamon (``slamon run``; or worker, beat and api on PostgreSQL + Redis) through the real API.

Three boxes read their GPUs through NVML, faked at the binding's boundary (``tests/fake_nvml``:
the pynvml functions, answering with a real H100's readings); each breaks one way, at the same
time, as the dcgm boxes of ``test_scenarios.py`` do: GPU 3 falls off the bus, a fatal XID 79,
a GPU at 94 °C. Each must raise ``gpu_health`` once and resolve once, while the box stays
reachable, and every surface must agree. A fourth box runs the real ``slamon agent`` command,
which falls back to nvidia-smi (a script printing the real H100 capture), and goes silent
when the agent stops: ``target_down``. Last, a training loop reports through the hooks
(``monitor.training``): its step and throughput show on the API and /metrics, and a drop in
throughput fires ``training_slowdown`` once and resolves it once.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import httpx
import pytest

from monitor.agent.nvml import NvmlReader
from monitor.agent.push import Outbox, Pusher
from monitor.agent.run import Agent
from monitor.training import Heartbeats
from tests.fake_nvml import FakeNvml, h100s
from tests.scenarios import surfaces
from tests.scenarios.checks import (
    ALERT_S,
    Expect,
    Live,
    World,
    alerting_config,
    await_all,
    await_webhook,
    eventually,
    month_of,
    once_each,
    report_counts,
    settled_disagreements,
    surfaces_agree,
)
from tests.support import FIXTURES

pytestmark = pytest.mark.slow

GPUS = 4
H100_CSV = FIXTURES / "nvidia-smi" / "gpuexp-h100-load.csv"


def prepare_world(world: World) -> None:
    """Nothing to serve: the boxes push."""


# training_slowdown on a test's time scale: below 70 % of the median of the last 20 s, for 3 s
SLOWDOWN = "slowdown_after: 3s, slowdown_trailing: 20s, slowdown_min_samples: 5"


def scenario_config(world: World) -> tuple[str, str]:
    return "", alerting_config(world.receiver.url, SLOWDOWN)


@dataclass
class Box:
    """One GPU box running the agent in a thread of the test, over NVML (faked)."""

    name: str
    nvml: FakeNvml
    token: str
    base: str
    stop: threading.Event = field(default_factory=threading.Event)
    thread: threading.Thread | None = None
    client: httpx.Client = field(default_factory=httpx.Client)

    def start(self) -> None:
        """Start (or restart, as systemd would after a driver reload) the agent."""
        self.stop = threading.Event()
        pusher = Pusher(self.base, self.name, self.token, self.client, Outbox(100))
        agent = Agent(NvmlReader(self.nvml, hostname=self.name), pusher, interval_s=1.0)
        self.thread = threading.Thread(target=agent.run, args=(self.stop,), daemon=True)
        self.thread.start()

    def halt(self) -> None:
        self.stop.set()
        if self.thread is not None:
            self.thread.join(timeout=10)


def register_box(live: Live, name: str, gpus: int) -> str:
    """``POST /api/v1/targets``: a heartbeat target with ``gpus``; its heartbeat token."""
    reply = httpx.post(
        f"{live.base}/api/v1/targets",
        params={"heartbeat_token": "true"},
        json={"name": name, "kind": "heartbeat", "gpus": gpus, "interval": "1s", "grace": "4s"},
        headers={"Authorization": f"Bearer {live.deployment.admin_token}"},
        timeout=10,
    )
    assert reply.status_code == 201, reply.text
    token: str = reply.json()["heartbeat_token"]
    return token


def _lose_gpu_3(box: Box, broken: bool) -> None:
    box.nvml.gpus[3].lost = broken


def _fatal_xid(box: Box, broken: bool) -> None:
    if broken:
        box.nvml.xid(1, 79)  # 79: fallen off the bus, the GPU must be reset
    else:  # the GPU is reset, the driver reloads, the agent restarts: XIDs start from 0
        box.halt()
        box.start()


def _hot_gpu(box: Box, broken: bool) -> None:
    box.nvml.gpus[2].temperature_c = 94 if broken else 46  # the threshold is 90 °C


FAULTS: dict[str, tuple[str, Callable[[Box, bool], None]]] = {
    "lost-gpu-3": ("agent-lost", _lose_gpu_3),
    "fatal-xid-79": ("agent-xid", _fatal_xid),
    "hot-gpu": ("agent-hot", _hot_gpu),
}


@pytest.fixture(scope="module")
def boxes(live: Live) -> Iterator[dict[str, Box]]:
    started = {}
    for name, _ in FAULTS.values():
        token = register_box(live, name, GPUS)
        box = Box(name, FakeNvml(h100s(GPUS, name)), token, live.base)
        box.start()
        started[name] = box
    yield started
    for box in started.values():
        box.halt()
        box.client.close()


def test_gpu_faults_pushed_by_agents_each_fire_gpu_health_once_and_resolve_once(
    live: Live, boxes: dict[str, Box]
) -> None:
    names = {fault: name for fault, (name, _) in FAULTS.items()}
    health = {fault: ("gpu_health", name) for fault, name in names.items()}
    down = tuple(("target_down", name) for name in names.values())
    # a box running only the agent is in the fleet, reachable and usable, on every surface
    surfaces_agree(live, Expect(targets=dict.fromkeys(names.values(), "up")), timeout=ALERT_S)

    for name, breaks in FAULTS.values():
        breaks(boxes[name], True)
    fired = await_all(live, list(health.values()), "firing")
    problems = [
        f"{fault}: no firing gpu_health webhook for {names[fault]} within {ALERT_S:g} s"
        for fault, key in health.items()
        if key not in fired
    ]
    broken = [fault for fault, key in health.items() if key in fired]
    problems += settled_disagreements(
        live,
        Expect(
            targets={names[f]: "unusable" for f in broken},
            firing=tuple(health[f] for f in broken),
            quiet=down,
        ),
    )

    for name, breaks in FAULTS.values():
        breaks(boxes[name], False)
    resolved = await_all(live, [health[f] for f in broken], "resolved")
    problems += [
        f"{fault}: no resolved gpu_health webhook for {names[fault]} within {ALERT_S:g} s"
        for fault in broken
        if health[fault] not in resolved
    ]
    problems += settled_disagreements(
        live,
        Expect(targets=dict.fromkeys(names.values(), "up"), quiet=(*health.values(), *down)),
        timeout=ALERT_S,
    )
    report = live.report(month_of(datetime.now(UTC)))
    for fault in broken:
        name = names[fault]
        try:
            pair = once_each(live, "gpu_health", name)
            report_counts(live, report, name, "usable", [pair])
        except AssertionError as exc:
            problems.append(f"{fault}: {exc}")
    for name in names.values():
        if live.hooks("target_down", name) != {"firing": [], "resolved": []}:
            problems.append(f"{name} stayed reachable, yet target_down was sent")
        if surfaces.report_outages(report, name, "reachable"):
            problems.append(f"{name} stayed reachable, yet the report has a reachable outage")
    assert not problems, "agent gpu_health:\n  " + "\n  ".join(problems)


def fake_nvidia_smi(folder: Path) -> Path:
    """An ``nvidia-smi`` that prints the real H100 capture, as the driver's own would."""
    script = folder / "nvidia-smi"
    script.write_text(f"#!/bin/sh\nexec cat '{H100_CSV}'\n")
    script.chmod(0o755)
    return folder


def test_the_agent_command_falls_back_to_nvidia_smi_and_a_silent_box_goes_down(
    live: Live, tmp_path: Path
) -> None:
    name = "agent-smi"
    token = register_box(live, name, gpus=1)
    bin_dir = fake_nvidia_smi(tmp_path)
    env = os.environ | {
        "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}",
        "SLAMON_AGENT_TOKEN": token,
        "LD_LIBRARY_PATH": str(tmp_path),  # no libnvidia-ml here: NVML cannot load
    }
    command = [sys.executable, "-m", "monitor.cli", "agent", "--url", live.base, "--target", name]
    once = subprocess.run(
        [*command, "--once"], env=env, capture_output=True, text=True, timeout=60, check=False
    )
    assert once.returncode == 0, once.stderr
    assert "pushed one reading (nvidia-smi)" in once.stdout

    pushed_once = _last_heartbeat(live, name)
    assert pushed_once is not None
    agent = subprocess.Popen(
        [*command, "--interval", "1s"], env=env, stderr=subprocess.PIPE, text=True
    )
    try:
        # the running agent's own pushes, not only the --once one
        eventually(
            lambda: (_last_heartbeat(live, name) or {}).get("at", "") > pushed_once["at"],
            "a heartbeat from the running agent",
        )
        surfaces_agree(live, Expect(targets={name: "up"}), timeout=ALERT_S)
    finally:
        agent.send_signal(signal.SIGTERM)
        _, said = agent.communicate(timeout=30)
    assert agent.returncode == 0, said
    assert "nvidia-smi every 1 s" in said
    await_webhook(live, "target_down", name, "firing")
    surfaces_agree(
        live, Expect(targets={name: "down"}, firing=(("target_down", name),)), timeout=ALERT_S
    )


@dataclass
class TrainingLoop:
    """A training loop in a thread of the test, doing ``rate`` samples a second (paced by the
    clock, so a busy machine does not slow it by accident), reporting through the hooks."""

    beats: Heartbeats
    rate: float = 4000.0
    stop: threading.Event = field(default_factory=threading.Event)
    step: int = 0

    def run(self) -> None:
        last = time.monotonic()
        while not self.stop.wait(0.05):
            now = time.monotonic()
            self.step += 1
            self.beats.beat(step=self.step, samples=self.rate * (now - last))
            last = now


def test_a_training_loop_shows_its_throughput_and_a_drop_fires_training_slowdown(
    live: Live,
) -> None:
    name = "train-llm"
    token = register_box(live, name, gpus=0)
    beats = Heartbeats(live.base, name, token, interval_s=0.5).start()
    loop = TrainingLoop(beats)
    thread = threading.Thread(target=loop.run, daemon=True)
    thread.start()
    key = ("training_slowdown", name)
    try:
        surfaces_agree(live, Expect(targets={name: "up"}, quiet=(key,)), timeout=ALERT_S)
        shown = eventually(lambda: _throughput_shown(live, name), "throughput on the API")
        assert 0.7 * loop.rate < shown["throughput"] < 1.3 * loop.rate, shown
        assert shown["step"] > 0
        assert shown["unit"] == "samples"
        lines = httpx.get(f"{live.base}/metrics", timeout=10).text.splitlines()
        rates = [x for x in lines if x.startswith("slamon_training_throughput{")]
        assert [x for x in rates if f'target="{name}"' in x and 'unit="samples"' in x], rates
        time.sleep(12)  # a baseline: the guard wants 5 samples in the trailing window

        loop.rate = 1200.0  # 30 % of its usual speed
        await_webhook(live, "training_slowdown", name, "firing")
        surfaces_agree(live, Expect(targets={name: "up"}, firing=(key,)), timeout=ALERT_S)
        summary = live.firing()[key]["summary"]
        assert "% of its usual throughput" in summary, summary

        loop.rate = 4000.0
        await_webhook(live, "training_slowdown", name, "resolved")
        surfaces_agree(live, Expect(targets={name: "up"}, quiet=(key,)), timeout=ALERT_S)
        once_each(live, "training_slowdown", name)
    finally:
        loop.stop.set()
        thread.join(timeout=5)
        beats.close()


def _last_heartbeat(live: Live, name: str) -> dict[str, Any] | None:
    reply = httpx.get(
        f"{live.base}/api/v1/targets/{name}",
        headers={"Authorization": f"Bearer {live.deployment.read_token}"},
        timeout=10,
    )
    beat: dict[str, Any] | None = (
        reply.json().get("last_heartbeat") if reply.status_code == 200 else None
    )
    return beat


def _throughput_shown(live: Live, name: str) -> dict[str, Any] | None:
    beat = _last_heartbeat(live, name)
    return beat if beat and beat.get("throughput") else None


# ------------------------------------------------- a GPU box's alert follows its cause (issue 29)


class StepAndReadings:
    """A training job on an 8-GPU box, pushing over HTTP every half second: its step, and the
    box's GPU readings as `slamon agent` sends them (``gpu_wire``), GPU 0's ECC double-bit
    count given. ``stall()`` stops the step, ``fault()`` gives GPU 0 an ECC double-bit error,
    ``heal()`` resets it (the volatile count starts again from 0)."""

    def __init__(self, base: str, name: str, token: str) -> None:
        self.url = f"{base}/api/v1/heartbeats/{name}"
        self.headers = {"Authorization": f"Bearer {token}"}
        self.step, self.advancing, self.dbe = 0, True, 0
        self.answers: set[int] = set()
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._run, daemon=True)

    def _body(self) -> dict[str, Any]:
        gpus = [
            {"key": f"GPU-{i}", "index": str(i), "xid": 0, "ecc_dbe_volatile": 0} for i in range(8)
        ]
        gpus[0]["ecc_dbe_volatile"] = self.dbe
        return {"step": self.step, "gpus": gpus}

    def _run(self) -> None:
        with httpx.Client(timeout=5) as client:
            while not self.stop.is_set():
                if self.advancing:
                    self.step += 10
                try:
                    reply = client.post(self.url, json=self._body(), headers=self.headers)
                    self.answers.add(reply.status_code)
                except httpx.HTTPError:
                    self.answers.add(0)
                self.stop.wait(0.5)

    def stall(self) -> None:
        self.advancing = False

    def advance(self) -> None:
        self.advancing = True

    def fault(self) -> None:
        self.dbe += 1

    def heal(self) -> None:
        self.dbe = 0


def test_a_gpu_box_fires_heartbeat_stalled_for_its_step_and_gpu_health_for_its_gpus(
    live: Live,
) -> None:
    """A heartbeat target with ``gpus: 8``: a stalled step is ``heartbeat_stalled`` (not
    ``gpu_health``, whatever the box's GPU count), a GPU fault in its readings ``gpu_health``;
    each outage names its cause on the API."""
    name = "gpu-job"
    reply = httpx.post(
        f"{live.base}/api/v1/targets",
        params={"heartbeat_token": "true"},
        json={
            "name": name, "kind": "heartbeat", "gpus": 8, "interval": "1s", "grace": "4s",
            "stall_after": "3s",
        },
        headers={"Authorization": f"Bearer {live.deployment.admin_token}"},
        timeout=10,
    )  # fmt: skip
    assert reply.status_code == 201, reply.text
    stalled, health = ("heartbeat_stalled", name), ("gpu_health", name)
    job = StepAndReadings(live.base, name, reply.json()["heartbeat_token"])
    job.thread.start()
    try:
        surfaces_agree(live, Expect(targets={name: "up"}), timeout=ALERT_S)

        job.stall()
        await_webhook(live, *stalled, "firing")
        surfaces_agree(live, Expect(targets={name: "unusable"}, firing=(stalled,), quiet=(health,)))
        [outage] = [o for o in live.outages(name, "usable") if o["end"] is None]
        assert outage["cause"] == "stalled_step", outage
        job.advance()
        await_webhook(live, *stalled, "resolved")

        job.fault()
        await_webhook(live, *health, "firing")
        surfaces_agree(live, Expect(targets={name: "unusable"}, firing=(health,), quiet=(stalled,)))
        [outage] = [o for o in live.outages(name, "usable") if o["end"] is None]
        assert outage["cause"] == "gpu_hardware", outage
        job.heal()
        await_webhook(live, *health, "resolved")
        surfaces_agree(live, Expect(targets={name: "up"}, quiet=(stalled, health)))

        once_each(live, *stalled)
        once_each(live, *health)
        assert live.hooks("target_down", name) == {"firing": [], "resolved": []}
    finally:
        job.stop.set()
        job.thread.join(timeout=10)
    assert job.answers <= {202}, job.answers
