"""Celery's filesystem transport (the embedded default's broker), made safe for several
consumers of one folder.

kombu writes a message file in place, so a consumer in another process could take the file
before its bytes were written and died on an empty message (``JSONDecodeError``, an
"Unrecoverable error" that stops the worker): seen with `slamon run`'s probe processes. Here a
message is written under a name no consumer picks up and renamed into place, which is atomic
within a folder; a file that still is not a message is logged and dropped, never fatal.
"""

from __future__ import annotations

import logging
import os
import uuid
from time import monotonic
from typing import Any

from kombu.exceptions import ChannelError
from kombu.transport import filesystem
from kombu.utils.encoding import str_to_bytes
from kombu.utils.json import dumps

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

    def _get(self, queue: Any, timeout: Any = None) -> Any:
        while True:  # ends with the message, or with Empty when the queue has none
            try:
                return super()._get(queue)  # type: ignore[no-untyped-call]
            except ValueError as exc:  # JSONDecodeError: the file is already removed
                log.warning("dropped a message file of queue %s that is not JSON: %s", queue, exc)


class Transport(filesystem.Transport):
    Channel = Channel
