"""Fixtures for the discovery tests: the fake clouds of ``fake_clouds.py``."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from tests.monitor.discovery.fake_clouds import NodesApi, emptied, moto_server


@pytest.fixture(scope="module")
def moto_url() -> Iterator[str]:
    """A real EC2 API on 127.0.0.1, for the module, with test credentials in the environment
    and nothing else of the standard chain (no shared files, no instance metadata)."""
    with moto_server() as url:
        yield url


@pytest.fixture
def ec2(moto_url: str) -> Any:
    """An emptied fake EC2, and a boto3 client of its us-east-1 for the test to act with."""
    return emptied(moto_url)


@pytest.fixture
def api() -> Iterator[NodesApi]:
    """A Kubernetes API server listing no nodes yet."""
    server = NodesApi()
    yield server
    server.close()
