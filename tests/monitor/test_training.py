"""Training-loop hooks: progress recorded without blocking, throughput computed between pushes,
slamon being down never reaching the loop, and the framework callbacks written to their
documented interfaces. slamon's API is faked at the HTTP layer with respx."""

from __future__ import annotations

import inspect
import json
import threading
from types import SimpleNamespace

import httpx
import pytest
import respx

from monitor.training import Heartbeats, Progress, throughput
from monitor.training_callbacks import (
    LightningHooks,
    TransformersHooks,
    batch_size,
    lightning_callback,
    transformers_callback,
)

URL = "http://slamon.test:8080"
ENDPOINT = f"{URL}/api/v1/heartbeats/llm-run-7"


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def beats(clock: Clock, unit: str = "samples") -> Heartbeats:
    return Heartbeats(URL, "llm-run-7", "hb-token", interval_s=3600, unit=unit, clock=clock)


def bodies(route: respx.Route) -> list[dict[str, object]]:
    return [json.loads(call.request.content) for call in route.calls]


def test_throughput_is_the_work_done_over_the_time_between_two_reports() -> None:
    assert throughput(Progress(10, 1000, 100.0), Progress(20, 4000, 110.0)) == 300.0
    assert throughput(Progress(10, 1000, 100.0), Progress(10, 1000, 100.0)) is None
    assert throughput(Progress(None, 0, 100.0), Progress(3, 0, 110.0)) is None


@respx.mock
def test_each_push_carries_the_step_and_the_throughput_since_the_last() -> None:
    route = respx.post(ENDPOINT).mock(return_value=httpx.Response(202))
    clock = Clock()
    hb = beats(clock)
    assert hb.push() is False  # nothing reported yet: no heartbeat
    hb.beat(step=1, samples=32)
    assert hb.push() is True  # the first says the job is alive; no rate yet
    for step in range(2, 12):
        clock.now += 0.5
        hb.beat(step=step, samples=32)
    assert hb.push() is True
    assert bodies(route) == [
        {"unit": "samples", "step": 1},
        {"unit": "samples", "step": 11, "throughput": 64.0},  # 320 samples in 5 s
    ]
    assert {c.request.headers["Authorization"] for c in route.calls} == {"Bearer hb-token"}


@respx.mock
def test_slamon_down_never_reaches_the_loop_and_the_gap_is_averaged_after() -> None:
    route = respx.post(ENDPOINT).mock(side_effect=httpx.ConnectError("refused"))
    clock = Clock()
    hb = beats(clock, unit="tokens")
    hb.beat(step=1, tokens=1000)
    assert hb.push() is False
    route.mock(return_value=httpx.Response(202))
    assert hb.push() is True
    route.mock(return_value=httpx.Response(503))
    clock.now += 10
    hb.beat(step=2, tokens=5000)
    assert hb.push() is False  # not raised: counted
    route.mock(side_effect=RuntimeError("a bug in a transport"))
    clock.now += 10
    hb.beat(step=3, tokens=5000)
    assert hb.push() is False
    route.mock(return_value=httpx.Response(202))
    clock.now += 5
    assert hb.push() is True
    assert hb.failures == 3
    # 10,000 tokens between the beats at 100 s and 120 s: the rate of the work, not of pushes
    assert bodies(route)[-1] == {"unit": "tokens", "step": 3, "throughput": 500.0}


def test_beats_from_many_threads_all_count() -> None:
    hb = beats(Clock())
    threads = [
        threading.Thread(target=lambda: [hb.beat(samples=1) for _ in range(5000)]) for _ in range(4)
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert hb._progress.work == 20000


@respx.mock
def test_the_background_thread_pushes_and_close_sends_the_last_progress() -> None:
    route = respx.post(ENDPOINT).mock(return_value=httpx.Response(202))
    hb = Heartbeats(URL, "llm-run-7", interval_s=0.05).start()
    hb.beat(step=7, samples=8)
    done = threading.Event()
    for _ in range(100):
        if route.calls:
            done.set()
            break
        threading.Event().wait(0.02)
    hb.beat(step=8, samples=8)
    hb.close()
    assert done.is_set()
    assert bodies(route)[-1]["step"] == 8


def test_an_unknown_unit_is_refused_at_once() -> None:
    with pytest.raises(ValueError, match="samples, tokens"):
        Heartbeats(URL, "t", unit="images")


# --- the frameworks' documented callback interfaces ------------------------------------------

# lightning.pytorch.callbacks.Callback (Lightning 2.x API reference)
LIGHTNING = {
    "on_train_batch_end": ["self", "trainer", "pl_module", "outputs", "batch", "batch_idx"],
    "on_train_end": ["self", "trainer", "pl_module"],
}
# transformers.TrainerCallback (Transformers "Callbacks" reference): event(args, state, control,
# **kwargs)
TRANSFORMERS = {
    "on_step_end": ["self", "args", "state", "control", "kwargs"],
    "on_train_end": ["self", "args", "state", "control", "kwargs"],
}


@pytest.mark.parametrize(
    ("hooks", "documented"), [(LightningHooks, LIGHTNING), (TransformersHooks, TRANSFORMERS)]
)
def test_the_hooks_have_the_documented_signatures(hooks: type, documented: dict) -> None:
    for name, parameters in documented.items():
        assert list(inspect.signature(getattr(hooks, name)).parameters) == parameters


class Tensor:
    def __init__(self, *shape: int) -> None:
        self.shape = shape


@pytest.mark.parametrize(
    ("batch", "size"),
    [
        (Tensor(64, 3, 224, 224), 64),
        ((Tensor(16, 512), Tensor(16)), 16),
        ({"input_ids": Tensor(8, 2048), "labels": Tensor(8, 2048)}, 8),
        ([1, 2, 3], 3),
        (object(), 0),
    ],
)
def test_a_batch_counts_its_samples(batch: object, size: int) -> None:
    assert batch_size(batch) == size


def test_lightning_hooks_report_the_global_step_and_the_batch() -> None:
    hb = beats(Clock())
    hooks = LightningHooks(hb)
    hooks.on_train_batch_end(
        SimpleNamespace(global_step=41), None, {"loss": 0.1}, Tensor(32, 10), 0
    )
    hooks.on_train_batch_end(
        SimpleNamespace(global_step=42), None, {"loss": 0.1}, Tensor(32, 10), 1
    )
    assert (hb._progress.step, hb._progress.work) == (42, 64)


def test_transformers_hooks_count_the_global_batch() -> None:
    hb = beats(Clock(), unit="tokens")
    args = SimpleNamespace(
        per_device_train_batch_size=4, gradient_accumulation_steps=8, world_size=2
    )
    TransformersHooks(hb).on_step_end(args, SimpleNamespace(global_step=10), None)
    assert (hb._progress.step, hb._progress.work) == (10, 64)
    TransformersHooks(hb, per_step=4096).on_step_end(args, SimpleNamespace(global_step=11), None)
    assert hb._progress.work == 64 + 4096


@pytest.mark.parametrize(
    ("build", "modules", "advice"),
    [
        (
            lightning_callback,
            ("lightning.pytorch.callbacks", "pytorch_lightning.callbacks"),
            "lightning",
        ),
        (transformers_callback, ("transformers",), "transformers"),
    ],
)
def test_a_missing_framework_is_a_clear_import_error(
    monkeypatch: pytest.MonkeyPatch, build: object, modules: tuple[str, ...], advice: str
) -> None:
    import sys

    for name in modules:
        monkeypatch.setitem(sys.modules, name, None)  # importing it raises ImportError
    with pytest.raises(ImportError, match=f"pip install {advice}"):
        build(beats(Clock()))  # type: ignore[operator]
