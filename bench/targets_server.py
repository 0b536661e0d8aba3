"""Many tiny HTTP targets for benchmarks: one process listening on ports [BASE, BASE+N) of
127.0.0.1, answering every request with 200 — this asyncio server, or nginx (``--nginx``).

    python bench/targets_server.py --base-port 20000 --count 1000
    python bench/targets_server.py --base-port 20000 --count 3000 --nginx

nginx is what the issue's known figures were measured against, and it spends about a third of
this server's CPU per request (at 3,000 fresh connections a second on 2 cores this server
took ~0.36 cores, nginx ~0.10), which leaves the probers, not the targets, to decide the result.
"""

from __future__ import annotations

import argparse
import asyncio
import shutil
import subprocess
import sys
import tempfile
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


def nginx_conf(base: int, count: int, folder: Path) -> str:
    """One nginx worker, one server block listening on every port, 200 "ok" to everything."""
    listens = "\n".join(f"    listen 127.0.0.1:{base + i} backlog=512;" for i in range(count))
    temp = "\n".join(
        f"  {kind}_temp_path {folder / kind};"
        for kind in ("client_body", "proxy", "fastcgi", "uwsgi", "scgi")
    )
    return f"""worker_processes 1;
daemon off;
pid {folder / "nginx.pid"};
error_log stderr warn;
events {{ worker_connections 16384; }}
http {{
  access_log off;
{temp}
  server {{
{listens}
    location / {{ default_type text/plain; return 200 "ok"; }}
  }}
}}
"""


def ensure_nginx() -> str:
    """The nginx binary, installed from Debian's packages (nginx-light) when missing."""
    found = shutil.which("nginx") or shutil.which("nginx", path="/usr/sbin")
    if found is None:
        print("targets: installing nginx-light with apt-get", flush=True)
        subprocess.run(["apt-get", "install", "-y", "-q", "nginx-light"], check=True)
        found = shutil.which("nginx", path="/usr/sbin:/usr/bin")
    assert found is not None, "nginx did not install"
    return found


def start_nginx(base: int, count: int) -> subprocess.Popen[str]:
    """nginx over the ports in a subprocess (foreground, its own temporary folder), once the
    last port answers."""
    import socket
    import time

    folder = Path(tempfile.mkdtemp(prefix="slamon-targets-nginx-"))
    (folder / "nginx.conf").write_text(nginx_conf(base, count, folder))
    server = subprocess.Popen(
        [ensure_nginx(), "-p", str(folder), "-c", str(folder / "nginx.conf")], text=True
    )
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        if server.poll() is not None:
            sys.exit("nginx did not start (see its error above)")
        try:
            socket.create_connection(("127.0.0.1", base + count - 1), timeout=1).close()
            print(f"nginx listening on 127.0.0.1:{base}..{base + count - 1}", flush=True)
            return server
        except OSError:
            time.sleep(0.2)
    server.kill()
    sys.exit("nginx did not listen within 30 s")


def start(base: int, count: int, nginx: bool = False) -> subprocess.Popen[str]:
    """This server (or nginx) in a subprocess, once it listens; exits the benchmark if it
    cannot (e.g. a port in the range is taken)."""
    if nginx:
        return start_nginx(base, count)
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
    parser.add_argument("--nginx", action="store_true", help="serve them with nginx instead")
    args = parser.parse_args()
    if args.nginx:
        nginx = start_nginx(args.base_port, args.count)
        try:
            nginx.wait()
        except KeyboardInterrupt:
            nginx.terminate()
    else:
        asyncio.run(main(args.base_port, args.count))
