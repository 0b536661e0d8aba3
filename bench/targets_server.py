"""Many tiny HTTP targets for benchmarks: one asyncio process listening on ports
[BASE, BASE+N) of 127.0.0.1, answering every request with 200 and keep-alive.

    python bench/targets_server.py --base-port 20000 --count 1000
"""

from __future__ import annotations

import argparse
import asyncio
import subprocess
import sys
from pathlib import Path

RESPONSE = b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\nContent-Type: text/plain\r\n\r\nok"


async def serve(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    try:
        while True:
            head = await reader.readuntil(b"\r\n\r\n")
            if not head:
                break
            writer.write(RESPONSE)
            await writer.drain()
    except (asyncio.IncompleteReadError, ConnectionError):
        pass
    finally:
        writer.close()


async def main(base: int, count: int) -> None:
    servers = [
        await asyncio.start_server(serve, "127.0.0.1", base + i, backlog=64) for i in range(count)
    ]
    print(f"listening on 127.0.0.1:{base}..{base + count - 1}", flush=True)
    await asyncio.gather(*(s.serve_forever() for s in servers))


def start(base: int, count: int) -> subprocess.Popen[str]:
    """This server in a subprocess, once it listens; exits the benchmark if it cannot (e.g. a
    port in the range is taken)."""
    server = subprocess.Popen(
        [sys.executable, str(Path(__file__)), "--base-port", str(base), "--count", str(count)],
        stdout=subprocess.PIPE,
        text=True,
    )
    assert server.stdout is not None
    banner = server.stdout.readline().strip()
    if not banner.startswith("listening"):
        server.kill()
        sys.exit("the targets server did not start (see its error above)")
    print(banner, flush=True)
    return server


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--base-port", type=int, default=20000)
    parser.add_argument("--count", type=int, default=1000)
    args = parser.parse_args()
    asyncio.run(main(args.base_port, args.count))
