"""The OpenAPI document is exact: schemathesis with every check (``--checks all``: coverage,
fuzzing and stateful phases) against the running ``slamon run``, once with an admin token and
once with a read token, finds nothing. Generated clients and gateways trust that document.

Every bound on one value is declared in the document (the newest schemathesis, pinned in
pyproject.toml, checks them). The only relaxation is tests/scenarios/schemathesis.toml's: the
operations whose rules JSON Schema cannot state (timeout ≤ interval, a known SLA policy, ends_at
after starts_at, a heartbeat's ``at`` within the server's clock's bounds, no NUL in strings, a
provider's document whose times must read as times and whose stage or status must be one the
provider documents) answer 422 to a schema-valid body that breaks one, as their descriptions
say. The heartbeat and notice routes push for the configured target, so their bodies are
judged, not refused with 404.
The failed-authentication limit is
raised for the run: schemathesis sends hundreds of bad tokens from one address on purpose, and
its checks expect 401, not the 429 a real client would get (tests/monitor/api/test_throttle.py).
"""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.scenarios.deployments import Deployment, embedded

pytestmark = pytest.mark.slow

CONFIG = Path(__file__).with_name("schemathesis.toml")
SCHEMATHESIS = Path(sys.executable).with_name("st")


@pytest.fixture(scope="module")
def service(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Deployment]:
    root = tmp_path_factory.mktemp("openapi")
    (root / "slamon.yaml").write_text(
        "targets:\n  - {name: gpu-0, kind: http, url: 'http://127.0.0.1:9/healthz', interval: 30}\n"
    )
    deployment = embedded(root)
    deployment.env["SLAMON_API_AUTH_FAILURES_PER_MINUTE"] = "1000000"
    deployment.prepare()
    deployment.start()
    yield deployment
    deployment.stop()


def document(service: Deployment) -> dict[str, Any]:
    return httpx.get(f"{service.base_url}/openapi.json", timeout=10).raise_for_status().json()


@pytest.mark.parametrize("scope", ["admin", "read"])
def test_schemathesis_checks_all_find_nothing(service: Deployment, scope: str) -> None:
    token = service.admin_token if scope == "admin" else service.read_token
    argv = [
        str(SCHEMATHESIS), "--config-file", str(CONFIG),
        "run", f"{service.base_url}/openapi.json", "--checks", "all",
        "--header", f"Authorization: Bearer {token}",
        "--max-examples", "30", "--workers", "1", "--seed", "20261202", "--no-color",
    ]  # fmt: skip
    done = subprocess.run(argv, capture_output=True, text=True, timeout=600, check=False)
    report = done.stdout + done.stderr
    assert done.returncode == 0, report[-8000:]
    operations = sum(len(methods) for methods in document(service)["paths"].values())
    assert f"Tested: {operations}" in report, report[-3000:]  # every operation, none skipped
    assert not service.crashed(), service.log_tail()
