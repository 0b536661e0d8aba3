"""The training loop hears an interruption notice and saves its checkpoint before the deadline:
a local IMDSv2 server starts answering spot/instance-action with a time two minutes ahead, and
the checkpoint file exists well before then; the Lightning and transformers hooks (written to
the frameworks' documented callback signatures, tested without them installed) do the same."""

from __future__ import annotations

import inspect
import threading
import time
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from types import SimpleNamespace

import pytest

from monitor import training
from monitor.interruptions import Notice
from monitor.interruptions.aws import INSTANCE_ACTION
from monitor.training_callbacks import (
    LightningInterruptionHooks,
    NoticeFlag,
    TransformersInterruptionHooks,
    lightning_interruption_callback,
    transformers_interruption_callback,
)
from tests.monitor.interruptions.fake_metadata import MetadataServer

REBOOT = (
    b'{"DocumentIncarnation": 2, "Events": [{"EventId": "E1", "EventType": "Preempt",'
    b' "EventStatus": "Scheduled", "NotBefore": "Thu, 22 Jul 2021 04:50:17 GMT",'
    b' "EventSource": "Platform", "Resources": ["vm1"], "Description": ""}]}'
)


@pytest.fixture
def imds() -> Iterator[MetadataServer]:
    server = MetadataServer("aws")
    yield server
    server.close()


def spot_notice_in(server: MetadataServer, seconds: float, after_s: float) -> datetime:
    """From ``after_s`` on, the server says the instance is reclaimed ``seconds`` later."""
    deadline = (datetime.now(UTC) + timedelta(seconds=seconds + after_s)).replace(microsecond=0)
    body = f'{{"action": "terminate", "time": "{deadline:%Y-%m-%dT%H:%M:%SZ}"}}'.encode()
    timer = threading.Timer(after_s, server.documents.__setitem__, (INSTANCE_ACTION, (200, body)))
    timer.start()
    return deadline


def test_a_plain_loop_saves_its_checkpoint_well_before_the_deadline(
    imds: MetadataServer, tmp_path: Path
) -> None:
    checkpoint = tmp_path / "ckpt.pt"
    heard = threading.Event()
    notices: list[Notice] = []

    def on_notice(notice: Notice) -> None:
        notices.append(notice)
        heard.set()

    watch = training.on_interruption(on_notice, cloud="aws", base_url=imds.url)
    deadline = spot_notice_in(imds, 120, after_s=0.5)
    saved_at = None
    try:
        for step in range(2000):  # a training loop: a step every 10 ms
            time.sleep(0.01)
            if heard.is_set():
                checkpoint.write_text(f"step {step}")
                saved_at = datetime.now(UTC)
                heard.clear()
                break
    finally:
        watch.close()
    assert checkpoint.exists()
    assert saved_at is not None
    assert (deadline - saved_at).total_seconds() > 110  # heard within a poll (~1 s)
    [notice] = notices
    assert notice.deadline == deadline
    assert 110 < (notice.seconds_left(saved_at) or 0) <= 120


def test_heartbeats_take_on_interruption_and_stop_it_on_close(imds: MetadataServer) -> None:
    beats = training.Heartbeats("http://127.0.0.1:9", "run", interval_s=3600)
    heard: list[Notice] = []
    watch = beats.on_interruption(heard.append, cloud="aws", base_url=imds.url)
    spot_notice_in(imds, 120, after_s=0.2)
    for _ in range(300):
        if heard:
            break
        time.sleep(0.02)
    beats.close()
    assert [n.kind for n in heard] == ["preemption"]
    assert watch._stop.is_set()


class Trainer:
    """What the Lightning hooks use of a ``lightning.Trainer``."""

    def __init__(self) -> None:
        self.global_step = 0

    def save_checkpoint(self, path: str) -> None:
        Path(path).write_text(f"step {self.global_step}")


def test_the_lightning_hooks_save_a_checkpoint_before_the_deadline(
    imds: MetadataServer, tmp_path: Path
) -> None:
    path = tmp_path / "last.ckpt"
    hooks = LightningInterruptionHooks(str(path), NoticeFlag("aws", imds.url))
    trainer = Trainer()
    hooks.on_train_start(trainer, None)
    deadline = spot_notice_in(imds, 120, after_s=0.5)
    for batch_idx in range(1000):
        time.sleep(0.01)
        trainer.global_step += 1
        hooks.on_train_batch_end(trainer, None, {"loss": 0.1}, None, batch_idx)
        if path.exists():
            break
    saved_at = datetime.now(UTC)
    hooks.on_train_end(trainer, None)
    assert path.exists()
    assert (deadline - saved_at).total_seconds() > 110
    assert [n.key for n in hooks.notices.saved] == [f"{deadline:%Y-%m-%dT%H:%M:%SZ} terminate"]


def test_the_transformers_hooks_ask_the_trainer_to_save_then_acknowledge(tmp_path: Path) -> None:
    azure = MetadataServer("azure")
    try:
        hooks = TransformersInterruptionHooks(NoticeFlag("azure", azure.url, acknowledge=True))
        args, state = SimpleNamespace(output_dir=str(tmp_path)), SimpleNamespace(global_step=0)
        control = SimpleNamespace(should_save=False)
        hooks.on_train_begin(args, state, control)
        azure.document = REBOOT
        for _ in range(300):
            time.sleep(0.02)
            control = hooks.on_step_end(args, state, control)
            if control.should_save:
                break
        assert control.should_save is True
        assert azure.acknowledged == []  # not before the checkpoint is saved
        hooks.on_save(args, state, control)  # the Trainer saved
        assert azure.acknowledged == [{"StartRequests": [{"EventId": "E1"}]}]
        hooks.on_train_end(args, state, control)
    finally:
        azure.close()


# lightning.pytorch.callbacks.Callback and transformers.TrainerCallback (their API references)
LIGHTNING = {
    "on_train_start": ["self", "trainer", "pl_module"],
    "on_train_batch_end": ["self", "trainer", "pl_module", "outputs", "batch", "batch_idx"],
    "on_train_end": ["self", "trainer", "pl_module"],
}
TRANSFORMERS = {
    name: ["self", "args", "state", "control", "kwargs"]
    for name in ("on_train_begin", "on_step_end", "on_save", "on_train_end")
}


@pytest.mark.parametrize(
    ("hooks", "documented"),
    [(LightningInterruptionHooks, LIGHTNING), (TransformersInterruptionHooks, TRANSFORMERS)],
)
def test_the_interruption_hooks_have_the_documented_signatures(
    hooks: type, documented: dict[str, list[str]]
) -> None:
    for name, parameters in documented.items():
        assert list(inspect.signature(getattr(hooks, name)).parameters) == parameters


@pytest.mark.parametrize(
    ("build", "modules", "advice"),
    [
        (
            lambda: lightning_interruption_callback("last.ckpt"),
            ("lightning.pytorch.callbacks", "pytorch_lightning.callbacks"),
            "lightning",
        ),
        (transformers_interruption_callback, ("transformers",), "transformers"),
    ],
)
def test_a_missing_framework_is_a_clear_import_error(
    monkeypatch: pytest.MonkeyPatch, build: object, modules: tuple[str, ...], advice: str
) -> None:
    import sys

    for name in modules:
        monkeypatch.setitem(sys.modules, name, None)
    with pytest.raises(ImportError, match=f"pip install {advice}"):
        build()  # type: ignore[operator]
