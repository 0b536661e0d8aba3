"""A worker's startup heap, moved out of the garbage collector's way once the worker is ready.

A worker that has started holds about 190,000 objects that live as long as it does: modules,
classes, the app, the config, SQLAlchemy's mappers. CPython runs a full collection only when
the objects promoted since the last one reach a quarter of those it kept, so until then the
cyclic garbage of tasks (an exception's traceback and frames, a finished round's futures) piles
up, and every full collection walks the startup objects again. ``gc.freeze()`` moves them to a
generation no collection visits (the pattern CPython documents for servers): full collections
then come after a quarter of what the worker made since, and each walks only that.

Measured (bench/steady_soak.py, 1,000 targets every 5 s on the embedded default, runtime-only
installs, three runs of each, alternating): the worker's RSS at minute five 138.6-139.3 MiB
frozen against 141.4-143.4 MiB not, about 3.5 MiB less; CPU per probe the same within the
machine's noise (BENCHMARKS.md). An object frozen here that becomes garbage later is never
freed; what a ready worker holds is kept for its life anyway.

Then, every ``TRIM_EVERY_S``, glibc's ``malloc_trim(0)`` hands the pages of freed memory back
to the kernel (``trim_freed_memory``). A round's rows, parsed documents and responses are freed
by Python into glibc's heap, which keeps the pages: free chunks between live ones stay resident
until something asks for them again, and only the free top of the heap is ever given back on
its own. ``malloc_trim`` walks the free chunks and returns every whole page in them
(``madvise``), a few milliseconds a minute. Without glibc (musl, macOS) nothing is trimmed.
"""

from __future__ import annotations

import ctypes
import gc
import threading
from collections.abc import Callable
from typing import Any

from celery.signals import worker_ready, worker_shutdown

TRIM_EVERY_S = 60.0


def connect() -> None:
    """When this process's worker is ready: freeze its startup heap, and trim freed memory
    every ``TRIM_EVERY_S`` until it shuts down (once per process)."""
    worker_ready.connect(freeze_startup_heap, weak=False, dispatch_uid="slamon-heap-freeze")
    trimmer = FreedMemoryTrimmer()
    worker_ready.connect(trimmer.start, weak=False, dispatch_uid="slamon-heap-trim")
    worker_shutdown.connect(trimmer.stop, weak=False, dispatch_uid="slamon-heap-trim-stop")


def freeze_startup_heap(**_: Any) -> None:
    gc.collect()  # what startup left as garbage is freed, not frozen
    gc.freeze()
    # a full collection over the now small old generation resets its size, which decides when
    # the next full collection runs: else the first would wait for a quarter of the frozen
    gc.collect()


def _malloc_trim() -> Callable[[int], int] | None:
    """glibc's ``malloc_trim``, or None where the C library has none."""
    try:
        return ctypes.CDLL(None).malloc_trim
    except (AttributeError, OSError):
        return None


MALLOC_TRIM = _malloc_trim()


def trim_freed_memory() -> bool:
    """Give the pages of freed malloc memory back to the kernel; False where glibc is absent."""
    if MALLOC_TRIM is None:
        return False
    MALLOC_TRIM(0)
    return True


class FreedMemoryTrimmer:
    """A daemon thread that calls ``trim_freed_memory`` every ``every_s`` until stopped."""

    def __init__(self, every_s: float = TRIM_EVERY_S) -> None:
        self.every_s = every_s
        self._stopping = threading.Event()
        self._thread: threading.Thread | None = None

    def start(self, **_: Any) -> None:
        if MALLOC_TRIM is None or self._thread is not None:
            return
        self._thread = threading.Thread(target=self._run, name="slamon-heap-trim", daemon=True)
        self._thread.start()

    def stop(self, **_: Any) -> None:
        self._stopping.set()
        if self._thread is not None:
            self._thread.join(self.every_s)

    def _run(self) -> None:
        while not self._stopping.wait(self.every_s):
            trim_freed_memory()
