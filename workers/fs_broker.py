"""Celery's filesystem transport (the embedded default's broker), made safe for several
consumers of one folder.

kombu writes a message file in place, so a consumer in another process could take the file
before its bytes were written and died on an empty message (``JSONDecodeError``, an
"Unrecoverable error" that stops the worker): seen with `slamon run`'s probe processes. Here a
message is written under a name no consumer picks up and renamed into place, which is atomic
within a folder; a file that still is not a message is logged and dropped, never fatal.

The exchange's binding table had the same race when workers start together: kombu creates the
file (truncating it) before it takes the lock, so a second worker could read it empty or two
could interleave their writes. Here the file is opened without truncation, locked, then read,
extended and rewritten under the lock; an empty table (created, not yet written) reads as no
bindings.
"""

from __future__ import annotations

import fcntl
import logging
import os
import uuid
from time import monotonic
from typing import Any

from kombu.exceptions import ChannelError
from kombu.transport import filesystem
from kombu.utils.encoding import bytes_to_str, str_to_bytes
from kombu.utils.json import dumps, loads

log = logging.getLogger(__name__)


class Channel(filesystem.Channel):
    def _put(self, queue: Any, message: Any, **kwargs: Any) -> Any:  # type: ignore[override]
        name = f"{round(monotonic() * 1000)}_{uuid.uuid4()}.{queue}.msg"
        final = os.path.join(self.data_folder_out, name)
        partial = os.path.join(self.data_folder_out, f".{name}.part")  # never matches a queue
        try:
            with open(partial, "wb") as out:
                out.write(str_to_bytes(dumps(message)))  # type: ignore[no-untyped-call]
            os.replace(partial, final)
        except OSError as exc:
            raise ChannelError(f"Cannot add file {final!r} to directory") from exc

    def get_table(self, exchange: Any) -> Any:
        try:
            with open(self._exchange_file(exchange), "rb") as table:  # type: ignore[no-untyped-call]
                fcntl.flock(table.fileno(), fcntl.LOCK_SH)
                return _bindings(table.read())
        except FileNotFoundError:
            return []
        except OSError as exc:
            raise ChannelError(f"Cannot read the bindings of exchange {exchange!r}") from exc

    def _queue_bind(self, exchange: Any, routing_key: Any, pattern: Any, queue: Any) -> None:
        path = self._exchange_file(exchange)  # type: ignore[no-untyped-call]
        self.control_folder.mkdir(exist_ok=True)
        binding = filesystem.exchange_queue_t(routing_key or "", pattern or "", queue or "")
        try:
            descriptor = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)  # never truncates
            with os.fdopen(descriptor, "rb+", buffering=0) as table:
                fcntl.flock(table.fileno(), fcntl.LOCK_EX)
                bindings = _bindings(table.read())
                if binding not in bindings:
                    table.seek(0)
                    table.truncate()
                    table.write(str_to_bytes(dumps([binding, *bindings])))  # type: ignore[no-untyped-call]
        except OSError as exc:
            raise ChannelError(f"Cannot bind queue {queue!r} to exchange {exchange!r}") from exc

    def _get(self, queue: Any, timeout: Any = None) -> Any:
        while True:  # ends with the message, or with Empty when the queue has none
            try:
                return super()._get(queue)  # type: ignore[no-untyped-call]
            except ValueError as exc:  # JSONDecodeError: the file is already removed
                log.warning("dropped a message file of queue %s that is not JSON: %s", queue, exc)


def _bindings(raw: bytes) -> list[Any]:
    """The binding table's rows; none while the file is created but not yet written."""
    text = bytes_to_str(raw).strip()  # type: ignore[no-untyped-call]
    rows = loads(text) if text else []  # type: ignore[no-untyped-call]
    return [filesystem.exchange_queue_t(*row) for row in rows]


class Transport(filesystem.Transport):
    Channel = Channel
