"""The embedded default's broker (workers/fs_broker.py): messages written atomically, read once
by several consumers of one folder, and a file that is not a message skipped, not fatal."""

from __future__ import annotations

import queue
import threading
from pathlib import Path
from typing import Any

import pytest
from kombu import Connection
from kombu.transport import filesystem

from monitor.settings import Settings
from workers.app import broker_options
from workers.fs_broker import Transport


def options(folder: Path) -> dict[str, Any]:
    """The transport options `slamon` itself uses, with its state in ``folder``."""
    return broker_options(Settings(state_dir=folder, broker_url="filesystem://"))


def connect(folder: Path, transport: Any = Transport) -> Connection:
    return Connection(transport=transport, transport_options=options(folder))


def test_a_message_round_trips_and_leaves_no_partial_file(tmp_path: Path) -> None:
    with connect(tmp_path) as conn:
        probes = conn.SimpleQueue("round-trip")  # kombu keeps bindings per process: a queue each
        probes.put({"shard": [[1, 1796000000.5]]})
        names = [p.name for p in (tmp_path / "broker" / "queue").iterdir()]
        assert [n for n in names if n.endswith(".round-trip.msg")] != []
        assert [n for n in names if n.endswith(".part")] == []
        message = probes.get(timeout=2)
        assert message.payload == {"shard": [[1, 1796000000.5]]}
        message.ack()
        probes.close()


def test_a_file_that_is_not_a_message_is_dropped_and_the_next_one_read(tmp_path: Path) -> None:
    (tmp_path / "broker" / "queue").mkdir(parents=True)
    (tmp_path / "broker" / "queue" / "0_broken.torn.msg").write_bytes(
        b""
    )  # what a torn write leaves
    with connect(tmp_path) as conn:
        probes = conn.SimpleQueue("torn")
        probes.put({"n": 1})
        message = probes.get(timeout=2)
        assert message.payload == {"n": 1}
        message.ack()
        probes.close()
    (tmp_path / "broker" / "queue" / "0_broken.torn.msg").write_bytes(b"")
    with connect(tmp_path, filesystem.Transport) as stock:  # kombu's own dies on it
        broken = stock.SimpleQueue("torn")
        with pytest.raises(ValueError, match="Expecting value"):
            broken.get(timeout=2)
        broken.close()


def test_two_consumers_and_a_producer_see_every_message_exactly_once(tmp_path: Path) -> None:
    sent, got, errors = 600, queue.Queue[int](), queue.Queue[BaseException]()
    done = threading.Event()

    def consume() -> None:
        try:
            with connect(tmp_path) as conn:
                probes = conn.SimpleQueue("shared")
                while not (done.is_set() and probes.qsize() == 0):
                    try:
                        message = probes.get(timeout=0.05)
                    except probes.Empty:
                        continue
                    got.put(message.payload["n"])
                    message.ack()
                probes.close()
        except BaseException as exc:
            errors.put(exc)

    with connect(tmp_path) as conn:  # bind the queue first, as a worker's start does
        conn.SimpleQueue("shared").close()
    consumers = [threading.Thread(target=consume, daemon=True) for _ in range(2)]
    for thread in consumers:
        thread.start()
    with connect(tmp_path) as conn:
        probes = conn.SimpleQueue("shared")
        for n in range(sent):
            probes.put({"n": n, "shard": [[i, 1796000000.25] for i in range(250)]})  # a shard
        probes.close()
    done.set()
    for thread in consumers:
        thread.join(timeout=60)
    assert errors.empty(), errors.get()
    received = sorted(got.get() for _ in range(got.qsize()))
    assert received == list(range(sent))


def bind_and_read(folder: Path, name: str, errors: queue.Queue[BaseException]) -> None:
    """One worker starting: its own connection binds its queue, then reads the table back."""
    try:
        with connect(folder) as conn:
            channel = conn.default_channel
            channel._queue_bind("slamon.fanout", "", "", name)
            for _ in range(20):
                channel.get_table("slamon.fanout")
    except BaseException as exc:  # any failure in a thread is the test's
        errors.put(exc)


def test_workers_binding_at_once_lose_no_binding_and_never_read_a_torn_table(
    tmp_path: Path,
) -> None:
    errors: queue.Queue[BaseException] = queue.Queue()
    names = [f"worker-{n}" for n in range(16)]
    threads = [threading.Thread(target=bind_and_read, args=(tmp_path, n, errors)) for n in names]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=30)
    assert errors.empty(), errors.get()
    with connect(tmp_path) as conn:
        table = conn.default_channel.get_table("slamon.fanout")
    assert sorted(row.queue for row in table) == sorted(names)


def test_a_table_created_but_not_yet_written_reads_as_no_bindings(tmp_path: Path) -> None:
    with connect(tmp_path) as conn:
        channel = conn.default_channel
        channel.control_folder.mkdir(exist_ok=True)
        (channel.control_folder / "slamon.fanout.exchange").write_bytes(b"")
        assert channel.get_table("slamon.fanout") == []
        channel._queue_bind("slamon.fanout", "", "", "first")
        assert [row.queue for row in channel.get_table("slamon.fanout")] == ["first"]
