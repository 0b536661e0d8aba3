"""A ready worker moves what it loaded out of the garbage collector's way (workers/heap.py)."""

from __future__ import annotations

import gc
import subprocess
import sys
import weakref
from collections.abc import Iterator

import pytest
from celery.signals import worker_ready

from workers import heap


class Node:
    """One half of a reference cycle: only the cyclic collector frees it."""

    def __init__(self) -> None:
        self.other: Node | None = None


@pytest.fixture
def unfrozen() -> Iterator[None]:
    gc.unfreeze()
    yield
    gc.unfreeze()  # the rest of the test session collects as before


@pytest.mark.usefixtures("unfrozen")
def test_a_ready_worker_freezes_its_startup_heap_but_frees_startup_garbage_first() -> None:
    import workers.app  # noqa: F401  the app connects its signal handlers when it is built

    a, b = Node(), Node()
    a.other, b.other = b, a
    gone = weakref.ref(a)
    del a, b  # garbage, but a cycle: still alive until a collection finds it
    assert gc.get_freeze_count() == 0

    worker_ready.send(sender=None)

    assert gone() is None  # collected before the freeze, not kept for the worker's life
    assert gc.get_freeze_count() > 50_000  # the modules, classes and app a worker loaded
    assert gc.get_count()[0] < 100  # the collections ran: the youngest generation is empty


FRAGMENTED_HEAP = """
import sys, time
from workers import heap

def rss_kib():
    with open("/proc/self/status") as status:
        return next(int(line.split()[1]) for line in status if line.startswith("VmRSS:"))

blocks = [bytes(2000) for _ in range(50_001)]  # over pymalloc's 512 bytes: glibc's heap
kept = blocks[::50]  # one block in 50 stays, the last among them: the heap's top is in use
del blocks
before = rss_kib()
if sys.argv[1] == "call":
    assert heap.trim_freed_memory()
else:
    trimmer = heap.FreedMemoryTrimmer(every_s=0.05)
    trimmer.start()
    deadline = time.monotonic() + 10
    while before - rss_kib() < 50_000 and time.monotonic() < deadline:
        time.sleep(0.05)
    trimmer.stop()
print(before - rss_kib(), len(kept))
"""


@pytest.mark.skipif(heap.MALLOC_TRIM is None, reason="glibc's malloc_trim is not here")
@pytest.mark.parametrize("how", ["call", "thread"])
def test_freed_memory_between_live_blocks_goes_back_to_the_kernel(how: str) -> None:
    # 100 MB of blocks freed around live ones stay resident on their own; trimmed, they go
    ran = subprocess.run(
        [sys.executable, "-c", FRAGMENTED_HEAP, how],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    freed_kib, kept = map(int, ran.stdout.split())
    assert kept == 1001
    assert freed_kib > 80_000, ran.stdout
