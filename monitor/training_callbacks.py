"""Thin callbacks that feed ``monitor.training.Heartbeats`` from PyTorch Lightning and from
Hugging Face ``transformers.Trainer``. The frameworks are optional: each is imported only when
its callback is built, and the hooks themselves are plain classes written to the frameworks'
documented callback signatures (tested without the frameworks installed).

    trainer = lightning.Trainer(callbacks=[lightning_callback(beats)])
    trainer = transformers.Trainer(..., callbacks=[transformers_callback(beats)])
"""

from __future__ import annotations

from typing import Any

from monitor.training import Heartbeats


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


def _global_batch(args: Any) -> int:
    per_device = int(getattr(args, "per_device_train_batch_size", 0) or 0)
    accumulation = int(getattr(args, "gradient_accumulation_steps", 1) or 1)
    devices = int(getattr(args, "world_size", 1) or 1)
    return per_device * accumulation * devices


def lightning_callback(heartbeats: Heartbeats, per_step: int | None = None) -> Any:
    """A Lightning ``Callback`` (``lightning`` or the older ``pytorch_lightning``)."""
    try:
        from lightning.pytorch.callbacks import Callback
    except ImportError:
        try:
            from pytorch_lightning.callbacks import Callback
        except ImportError:
            raise ImportError("PyTorch Lightning is not installed: pip install lightning") from None

    class SlamonCallback(LightningHooks, Callback):  # type: ignore[misc]
        pass

    return SlamonCallback(heartbeats, per_step)


def transformers_callback(heartbeats: Heartbeats, per_step: int | None = None) -> Any:
    """A ``transformers.TrainerCallback``."""
    try:
        from transformers import TrainerCallback
    except ImportError:
        raise ImportError("transformers is not installed: pip install transformers") from None

    class SlamonCallback(TransformersHooks, TrainerCallback):  # type: ignore[misc]
        pass

    return SlamonCallback(heartbeats, per_step)
