"""Thin callbacks that feed ``monitor.training.Heartbeats`` from PyTorch Lightning and from
Hugging Face ``transformers.Trainer``. The frameworks are optional: each is imported only when
its callback is built, and the hooks themselves are plain classes written to the frameworks'
documented callback signatures (tested without the frameworks installed).

    trainer = lightning.Trainer(callbacks=[lightning_callback(beats)])
    trainer = transformers.Trainer(..., callbacks=[transformers_callback(beats)])

And callbacks that save a checkpoint when the box's metadata service gives an interruption
notice (``monitor.training.on_interruption``), at the end of the step under way:

    trainer = lightning.Trainer(callbacks=[lightning_interruption_callback("last.ckpt")])
    trainer = transformers.Trainer(..., callbacks=[transformers_interruption_callback()])
"""

from __future__ import annotations

import threading
from typing import Any

from monitor.interruptions import Notice, Watch
from monitor.training import Heartbeats, on_interruption


def batch_size(batch: Any) -> int:
    """The number of samples in a batch: the first dimension of its first tensor-like value
    (a tensor, a tuple or list of them, or a dict of them), else its length; 0 if unknown."""
    if isinstance(batch, dict):
        batch = next(iter(batch.values()), None)
    elif isinstance(batch, list | tuple) and batch and hasattr(batch[0], "shape"):
        batch = batch[0]
    shape = getattr(batch, "shape", None)
    if shape is not None and len(shape) > 0:
        return int(shape[0])
    try:
        return len(batch)
    except TypeError:
        return 0


class LightningHooks:
    """``lightning.pytorch.callbacks.Callback``'s training hooks, reporting each batch."""

    def __init__(self, heartbeats: Heartbeats, per_step: int | None = None) -> None:
        self.heartbeats = heartbeats
        self.per_step = per_step  # samples (or tokens) per step; else counted from the batch

    def on_train_batch_end(
        self, trainer: Any, pl_module: Any, outputs: Any, batch: Any, batch_idx: int
    ) -> None:
        work = self.per_step if self.per_step is not None else batch_size(batch)
        self.heartbeats.beat(step=int(trainer.global_step), samples=work, tokens=work)

    def on_train_end(self, trainer: Any, pl_module: Any) -> None:
        self.heartbeats.push()


class TransformersHooks:
    """``transformers.TrainerCallback``'s hooks, reporting each optimizer step."""

    def __init__(self, heartbeats: Heartbeats, per_step: int | None = None) -> None:
        self.heartbeats = heartbeats
        self.per_step = per_step  # else the global batch: per device x accumulation x devices

    def on_step_end(self, args: Any, state: Any, control: Any, **kwargs: Any) -> None:
        work = self.per_step if self.per_step is not None else _global_batch(args)
        self.heartbeats.beat(step=int(state.global_step), samples=work, tokens=work)

    def on_train_end(self, args: Any, state: Any, control: Any, **kwargs: Any) -> None:
        self.heartbeats.push()


class NoticeFlag:
    """What the interruption hooks share: the watch (started with training), the notice heard
    and not yet acted on, and the notices a checkpoint was saved for."""

    def __init__(
        self, cloud: str = "auto", base_url: str | None = None, acknowledge: bool = False
    ) -> None:
        self.cloud = cloud
        self.base_url = base_url
        self.acknowledge = acknowledge  # Azure: once the checkpoint is saved, not before
        self.watch: Watch | None = None
        self.saved: list[Notice] = []
        self._pending: Notice | None = None
        self._lock = threading.Lock()

    def start(self) -> None:
        if self.watch is None:
            self.watch = on_interruption(self._heard, self.cloud, self.base_url)

    def _heard(self, notice: Notice) -> None:
        with self._lock:
            self._pending = notice

    def take(self) -> Notice | None:
        """The notice to act on now, once."""
        with self._lock:
            notice, self._pending = self._pending, None
        return notice

    def done(self, notice: Notice) -> None:
        """The checkpoint for ``notice`` is saved: record it, and acknowledge if asked."""
        self.saved.append(notice)
        if self.acknowledge and self.watch is not None:
            self.watch.ack(notice)

    def close(self) -> None:
        if self.watch is not None:
            self.watch.close()
            self.watch = None


class LightningInterruptionHooks:
    """Lightning hooks: ``trainer.save_checkpoint(path)`` after the batch during which an
    interruption notice came."""

    def __init__(self, path: str, notices: NoticeFlag | None = None) -> None:
        self.path = path
        self.notices = notices or NoticeFlag()

    def on_train_start(self, trainer: Any, pl_module: Any) -> None:
        self.notices.start()

    def on_train_batch_end(
        self, trainer: Any, pl_module: Any, outputs: Any, batch: Any, batch_idx: int
    ) -> None:
        notice = self.notices.take()
        if notice is not None:
            trainer.save_checkpoint(self.path)
            self.notices.done(notice)

    def on_train_end(self, trainer: Any, pl_module: Any) -> None:
        self.notices.close()


class TransformersInterruptionHooks:
    """transformers hooks: ``control.should_save = True`` at the end of the step during which
    an interruption notice came (the Trainer then saves to its ``output_dir`` and calls
    ``on_save``, where the notice counts as saved)."""

    def __init__(self, notices: NoticeFlag | None = None) -> None:
        self.notices = notices or NoticeFlag()
        self._saving: Notice | None = None

    def on_train_begin(self, args: Any, state: Any, control: Any, **kwargs: Any) -> None:
        self.notices.start()

    def on_step_end(self, args: Any, state: Any, control: Any, **kwargs: Any) -> Any:
        notice = self.notices.take()
        if notice is not None:
            self._saving = notice
            control.should_save = True
        return control

    def on_save(self, args: Any, state: Any, control: Any, **kwargs: Any) -> None:
        if self._saving is not None:
            self.notices.done(self._saving)
            self._saving = None

    def on_train_end(self, args: Any, state: Any, control: Any, **kwargs: Any) -> None:
        self.notices.close()


def _global_batch(args: Any) -> int:
    per_device = int(getattr(args, "per_device_train_batch_size", 0) or 0)
    accumulation = int(getattr(args, "gradient_accumulation_steps", 1) or 1)
    devices = int(getattr(args, "world_size", 1) or 1)
    return per_device * accumulation * devices


def lightning_callback(heartbeats: Heartbeats, per_step: int | None = None) -> Any:
    """A Lightning ``Callback`` (``lightning`` or the older ``pytorch_lightning``)."""
    Callback = _lightning_callback_class()

    class SlamonCallback(LightningHooks, Callback):  # type: ignore[misc,valid-type]
        pass

    return SlamonCallback(heartbeats, per_step)


def _lightning_callback_class() -> Any:
    try:
        from lightning.pytorch.callbacks import Callback
    except ImportError:
        try:
            from pytorch_lightning.callbacks import Callback
        except ImportError:
            raise ImportError("PyTorch Lightning is not installed: pip install lightning") from None
    return Callback


def transformers_callback(heartbeats: Heartbeats, per_step: int | None = None) -> Any:
    """A ``transformers.TrainerCallback``."""
    try:
        from transformers import TrainerCallback
    except ImportError:
        raise ImportError("transformers is not installed: pip install transformers") from None

    class SlamonCallback(TransformersHooks, TrainerCallback):  # type: ignore[misc]
        pass

    return SlamonCallback(heartbeats, per_step)


def lightning_interruption_callback(path: str, notices: NoticeFlag | None = None) -> Any:
    """A Lightning ``Callback`` saving ``path`` when an interruption notice comes."""
    Callback = _lightning_callback_class()

    class SlamonInterruptionCallback(LightningInterruptionHooks, Callback):  # type: ignore[misc,valid-type]
        pass

    return SlamonInterruptionCallback(path, notices)


def transformers_interruption_callback(notices: NoticeFlag | None = None) -> Any:
    """A ``transformers.TrainerCallback`` asking the Trainer to save on an interruption notice."""
    try:
        from transformers import TrainerCallback
    except ImportError:
        raise ImportError("transformers is not installed: pip install transformers") from None

    class SlamonInterruptionCallback(TransformersInterruptionHooks, TrainerCallback):  # type: ignore[misc]
        pass

    return SlamonInterruptionCallback(notices)
