"""Many tiny HTTP targets whose health the soak test switches: one asyncio process listening on
ports [BASE, BASE+N) of 127.0.0.1 (200 ``ok`` with keep-alive), plus a control port where

    POST /fail?first=I&count=K&seconds=S

makes targets I..I+K-1 answer 503 for the next S seconds.

    python bench/soak_targets.py --base-port 26000 --count 2000 --control-port 25998
"""

from __future__ import annotations

import argparse
import asyncio
import time
from urllib.parse import parse_qs, urlsplit

OK = b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\nContent-Type: text/plain\r\n\r\nok"
DOWN = (
    b"HTTP/1.1 503 Service Unavailable\r\nContent-Length: 4\r\nContent-Type: text/plain\r\n\r\ndown"
)
NO_CONTENT = b"HTTP/1.1 204 No Content\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
BAD = b"HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"


class Health:
    """Until when (monotonic seconds) each target answers 503."""

    def __init__(self, count: int) -> None:
        self.failing_until = [0.0] * count

    def fail(self, first: int, count: int, seconds: float) -> None:
        until = time.monotonic() + seconds
        for index in range(max(0, first), min(len(self.failing_until), first + count)):
            self.failing_until[index] = until

    def answer(self, index: int) -> bytes:
        return DOWN if time.monotonic() < self.failing_until[index] else OK


def target_handler(health: Health, index: int):
    async def serve(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while True:
                await reader.readuntil(b"\r\n\r\n")
                writer.write(health.answer(index))
                await writer.drain()
        except (asyncio.IncompleteReadError, asyncio.LimitOverrunError, ConnectionError):
            pass
        finally:
            writer.close()

    return serve


def control_handler(health: Health):
    async def serve(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            head = await reader.readuntil(b"\r\n\r\n")
            method, target = head.split(b"\r\n", 1)[0].decode().split(" ")[:2]
            parts = urlsplit(target)
            query = {k: v[0] for k, v in parse_qs(parts.query).items()}
            if method == "POST" and parts.path == "/fail":
                health.fail(int(query["first"]), int(query["count"]), float(query["seconds"]))
                writer.write(NO_CONTENT)
            else:
                writer.write(BAD)
            await writer.drain()
        except (asyncio.IncompleteReadError, ConnectionError, KeyError, ValueError):
            writer.write(BAD)
        finally:
            writer.close()

    return serve


async def main(base: int, count: int, control_port: int) -> None:
    health = Health(count)
    servers = [
        await asyncio.start_server(target_handler(health, i), "127.0.0.1", base + i, backlog=64)
        for i in range(count)
    ]
    servers.append(await asyncio.start_server(control_handler(health), "127.0.0.1", control_port))
    print(
        f"listening on 127.0.0.1:{base}..{base + count - 1}, control on {control_port}", flush=True
    )
    await asyncio.gather(*(s.serve_forever() for s in servers))


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--base-port", type=int, default=26000)
    parser.add_argument("--count", type=int, default=2000)
    parser.add_argument("--control-port", type=int, default=25998)
    args = parser.parse_args()
    asyncio.run(main(args.base_port, args.count, args.control_port))
