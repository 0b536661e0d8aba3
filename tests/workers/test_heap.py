"""A ready worker moves what it loaded out of the garbage collector's way (workers/heap.py)."""

from __future__ import annotations

import gc
import weakref
from collections.abc import Iterator

import pytest
from celery.signals import worker_ready


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
