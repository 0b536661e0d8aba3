"""The README says what it does: its two commands are the ones CI runs, its guided first run runs
as written and shows what it says, and its dependency table names exactly what slamon declares.

The first run is read from the README's "A first run" section and run in a folder of its own
against the real ``slamon`` console script: its files are written, each ``sh`` block runs in a
terminal of its own (a process group whose output is kept), each ``text`` block is awaited, line
by line and in order, in one terminal's output, and the pages its prose names are fetched when
the prose names them. Three things differ from a user's run, and only these: the ports (8080,
9000 and 8999 become free ones, so the test runs beside others; ``slamon run`` gets ``--port``),
``.venv`` is a link to the test's own environment, and outside HTTP goes to a proxy that is not
there (``NO_PROXY`` keeps loopback direct), so the catalog's feeds fail fast instead of reaching
the internet."""

from __future__ import annotations

import hashlib
import hmac
import os
import re
import signal
import subprocess
import sys
import time
import tomllib
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from urllib.parse import urljoin

import httpx
import pytest
from packaging.requirements import Requirement

from monitor.alerts.channels.webhook import sign
from tests.faults.servers import free_port

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
FIRST_RUN = "## A first run"
WAIT_S = 120.0  # a cold `slamon run` on a busy 2-core machine, then an outage and its webhook
README_PORTS = {"api": 8080, "receiver": 9000, "target": 8999}


def section(title: str) -> str:
    text = README.read_text()
    assert title + "\n" in text, f"README.md has no {title!r} section"
    return text.split(title + "\n", 1)[1].split("\n## ", 1)[0]


def readme_commands() -> list[str]:
    return re.findall(r"```sh\n(.+?)\n```", section("## Two commands"))


def test_the_readme_opens_with_exactly_two_commands() -> None:
    commands = readme_commands()
    assert len(commands) == 2
    assert commands[0].endswith("slamon run")
    assert "pytest" in commands[1]


def test_ci_runs_exactly_the_readme_test_command() -> None:
    ci_lines = (ROOT / ".ci" / "run").read_text().splitlines()
    assert readme_commands()[1] in ci_lines


def test_the_readme_stays_short() -> None:
    assert len(README.read_text().splitlines()) <= 160


# ---------------------------------------------------------------------- dependencies


def _name(requirement: str) -> str:
    return Requirement(requirement).name.lower().replace("_", "-")


def table_names(table: str) -> set[str]:
    """The dependencies a "dependency | why" table names: each row's first cell
    (``celery[redis]; kombu, redis``, ``SQLAlchemy 2.0 + psycopg``, a ``(dev)`` or ``(extras)``
    note after them; ``(no Grafana client)`` names none)."""
    named = set()
    for row in table.splitlines()[2:]:
        if not row.startswith("| "):
            continue
        cell = re.sub(r"\([^)]*\)", "", row.split("|")[1])
        for part in re.split(r"[,;+]", cell):
            words = part.split()
            if words:
                named.add(words[0].split("[")[0].lower())
    return named


def declared() -> set[str]:
    """Every requirement of ``pyproject.toml``, its extras included."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    names = {_name(r) for r in project["dependencies"]}
    for extra in project["optional-dependencies"].values():
        names |= {_name(r) for r in extra}
    return names - {project["name"]}  # `slamon[aws,…]` in dev: the package's own extras


def test_the_dependency_tables_name_exactly_the_declared_dependencies() -> None:
    """The README says why each dependency is there, docs/architecture.md in full: both name
    every declared dependency and nothing else."""
    detail = (ROOT / "docs" / "architecture.md").read_text().split("## Dependencies in detail")
    assert len(detail) == 2, "docs/architecture.md has no 'Dependencies in detail' section"
    assert table_names(section("## Why each dependency is here")) == declared()
    assert table_names(detail[1].split("\n\n", 2)[2].split("\n## ", 1)[0]) == declared()


def test_the_table_check_sees_a_missing_and_an_undeclared_dependency() -> None:
    table = section("## Why each dependency is here")
    rows = [row for row in table.splitlines() if not row.startswith("| feedparser")]
    rows.append("| leftpad (dev) | pads |")
    assert table_names("\n".join(rows)) ^ declared() == {
        "feedparser",
        "prometheus-client",
        "leftpad",
    }


# ---------------------------------------------------------------------- the first run


@dataclass
class Block:
    kind: str  # "file", "sh", "text" or "prose"
    text: str
    name: str = ""  # a file's name, from its first line ("# slamon.yaml")


def first_run(ports: dict[str, int]) -> list[Block]:
    """The section's blocks in order, with the README's ports replaced by ``ports``."""
    text = section(FIRST_RUN)
    for key, port in README_PORTS.items():
        text = re.sub(rf"\b{port}\b", str(ports[key]), text)
    text = re.sub(r"slamon run\b", f"slamon run --port {ports['api']}", text)
    blocks: list[Block] = []
    at = 0
    for fence in re.finditer(r"```(\w+)\n(.*?)\n```", text, re.S):
        blocks.append(Block("prose", text[at : fence.start()]))
        at = fence.end()
        lang, body = fence.groups()
        if lang in {"yaml", "python"}:
            first, _, rest = body.partition("\n")
            assert first.startswith("# "), f"a {lang} block must open with '# FILENAME'"
            blocks.append(Block("file", rest + "\n", name=first[2:].strip()))
        else:
            assert lang in {"sh", "text"}, f"an unexpected {lang} block"
            blocks.append(Block(lang, body))
    blocks.append(Block("prose", text[at:]))
    return blocks


# a time, a count, a port, a hash: a word of hex digits with a digit in it
WORD = re.compile(r"(?<![0-9A-Za-z])[0-9a-f]*[0-9][0-9a-f]*(?![0-9a-f])")


def line_pattern(line: str) -> re.Pattern[str]:
    """The README's output line with every number and hash open (times, counts, the policy's
    hash are the user's own); the rest exactly."""
    parts, at = [], 0
    for word in WORD.finditer(line):
        parts += [re.escape(line[at : word.start()]), r"[0-9a-f]+"]
        at = word.end()
    return re.compile("".join([*parts, re.escape(line[at:])]))


def shows(output: str, expected: str) -> bool:
    """Every line of ``expected`` is a line of ``output``, in that order."""
    lines = iter(output.splitlines())
    return all(
        any(pattern.fullmatch(line.rstrip()) for line in lines)
        for pattern in map(line_pattern, expected.splitlines())
    )


@dataclass
class Terminal:
    number: int
    process: subprocess.Popen[bytes]
    log: Path

    def output(self) -> str:
        return self.log.read_text(errors="replace")

    def close(self) -> None:
        """TERM to its whole process group (the shell, what it started, their children), KILL
        after a grace period."""
        for sig, grace in ((signal.SIGTERM, 30.0), (signal.SIGKILL, 10.0)):
            try:
                os.killpg(self.process.pid, sig)
            except ProcessLookupError:
                return
            deadline = time.monotonic() + grace
            while time.monotonic() < deadline:
                try:
                    os.killpg(self.process.pid, 0)
                except ProcessLookupError:
                    self.process.wait(timeout=5)
                    return
                self.process.poll()
                time.sleep(0.1)


def environment() -> dict[str, str]:
    dead_proxy = f"http://127.0.0.1:{free_port()}"
    env = {k: v for k, v in os.environ.items() if not k.startswith("SLAMON_")}
    env.update(HTTP_PROXY=dead_proxy, HTTPS_PROXY=dead_proxy, ALL_PROXY=dead_proxy)
    env.update(NO_PROXY="127.0.0.1,localhost", PYTHONUNBUFFERED="1")
    return env


@pytest.fixture
def terminals() -> Iterator[list[Terminal]]:
    opened: list[Terminal] = []
    try:
        yield opened
    finally:
        for terminal in reversed(opened):
            terminal.close()


def await_output(terminals: list[Terminal], expected: str) -> Terminal:
    deadline = time.monotonic() + WAIT_S
    while time.monotonic() < deadline:
        for terminal in terminals:
            if shows(terminal.output(), expected):
                return terminal
        if not any(t.process.poll() is None for t in terminals):
            break
        time.sleep(0.2)
    logs = "\n".join(f"----- terminal {t.number}\n{t.output()[-6000:]}" for t in terminals)
    pytest.fail(f"no terminal showed, within {WAIT_S} s:\n{expected}\n{logs}")


def check_page(url: str, base: str) -> None:
    """A page the prose names answers, and says what the prose says of it."""
    page = httpx.get(url, timeout=10)
    assert page.status_code == 200, f"GET {url}: {page.status_code}"
    if url == f"{base}/":  # the status page: web-0 is down, its name links to its page
        row = re.search(r'<tr class="target" data-target="web-0" data-state="(\w+)">', page.text)
        assert row is not None, f"web-0 is not listed on {url}"
        assert row.group(1) == "down", f"web-0 is shown {row.group(1)} on {url}"
        link = re.search(r'<a class="name" href="([^"]+)">web-0</a>', page.text)
        assert link is not None, f"web-0's name on {url} links nowhere"
        assert urljoin(url, link.group(1)) == f"{base}/targets/web-0"
    elif url == f"{base}/targets/web-0":  # history bars, its uptimes and the outage, open
        assert 'data-target="web-0" data-state="down"' in page.text
        assert "data-buckets=" in page.text
        assert 'class="num uptime"' in page.text
        outages = re.findall(r'<tr class="outage" data-series="(\w+)" data-open="(\w+)"', page.text)
        assert outages == [("reachable", "true")], outages
    else:
        pytest.fail(f"the first run names {url}, and this test does not know what it shows")


@pytest.mark.slow
def test_the_first_run_runs_as_written_and_shows_what_it_says(
    tmp_path: Path, terminals: list[Terminal]
) -> None:
    venv = Path(sys.executable).parent.parent
    assert (venv / "bin" / "slamon").exists(), f"run the tests from the venv: no {venv}/bin/slamon"
    (tmp_path / ".venv").symlink_to(venv)
    ports = {key: free_port() for key in README_PORTS}
    base = f"http://127.0.0.1:{ports['api']}"
    env = environment()
    blocks = first_run(ports)
    webhooks: list[str] = []
    for block in blocks:
        if block.kind == "file":
            (tmp_path / block.name).write_text(block.text)
        elif block.kind == "sh":
            number = len(terminals) + 1
            log = tmp_path / f"terminal-{number}.log"
            with log.open("wb") as out:
                process = subprocess.Popen(
                    ["bash", "-c", block.text],
                    cwd=tmp_path,
                    env=env,
                    stdout=out,
                    stderr=subprocess.STDOUT,
                    start_new_session=True,
                )
            terminals.append(Terminal(number, process, log))
        elif block.kind == "text":
            await_output(terminals, block.text)
            webhooks += [line for line in block.text.splitlines() if line.startswith("verified")]
        else:
            for url in re.findall(rf"{re.escape(base)}/[\w/.-]*", block.text):
                check_page(url.rstrip("."), base)

    # what the README promised, beyond its output lines
    assert [w.split()[1:] for w in webhooks] == [
        ["firing", "target_down", f"{base}/targets/web-0"],
        ["resolved", "target_down", f"{base}/targets/web-0"],
    ]
    report = (tmp_path / "report.html").read_text()
    assert "web-0" in report
    assert f"{datetime.now(UTC):%Y-%m}" in report
    assert [t.number for t in terminals if t.process.poll() not in (None, 0)] == []


def test_the_first_runs_receiver_verifies_slamons_signature_and_nothing_else() -> None:
    """The README's ``verify`` accepts what slamon's webhook signs, and refuses a changed body,
    another secret, an old or a future timestamp and a missing header."""
    [code] = [b.text for b in first_run(README_PORTS) if b.name == "receiver.py"]
    secret = re.search(r'SECRET = b"([^"]+)"', code)
    assert secret is not None
    names: dict[str, object] = {}
    exec(code.split("\nHTTPServer(", 1)[0], names)  # the README's own code
    verify = names["verify"]
    assert callable(verify)
    body = b'{"version": 1, "event": "firing"}'
    now = datetime.now(UTC)
    assert verify(sign(secret.group(1), body, now), body) is True
    assert verify(sign(secret.group(1), body, now), body + b" ") is False
    assert verify(sign("another-secret", body, now), body) is False
    assert verify(sign(secret.group(1), body, now - timedelta(minutes=6)), body) is False
    assert verify(sign(secret.group(1), body, now + timedelta(minutes=6)), body) is False
    assert verify("", body) is False
    expected = hmac.new(secret.group(1).encode(), b"1." + body, hashlib.sha256).hexdigest()
    assert sign(secret.group(1), body, datetime.fromtimestamp(1, UTC)) == f"t=1,v1={expected}"
