"""The registry of account event kinds: one line per kind, each record complete."""

from __future__ import annotations

import pytest

from monitor.account.kind import AccountKind, SourceOptions
from monitor.account.kinds import KINDS, register, unregister
from monitor.account.model import PROVIDERS


def test_the_built_in_kinds_are_the_four_sources_with_their_extras() -> None:
    assert {name: (kind.provider, kind.extra) for name, kind in KINDS.items()} == {
        "aws_health": ("aws", "aws"),
        "ec2_events": ("aws", "aws"),
        "azure_resource_health": ("azure", "azure"),
        "gcp_service_health": ("gcp", "gcp"),
    }
    assert all(kind.provider in PROVIDERS for kind in KINDS.values())


def test_a_kind_is_registered_once_and_a_built_in_stays() -> None:
    toy = AccountKind(
        name="toy", provider="lambda", options=SourceOptions, list_events=lambda o, c: []
    )
    register(toy)
    try:
        with pytest.raises(ValueError, match="already registered"):
            register(toy)
    finally:
        unregister("toy")
    assert "toy" not in KINDS
    with pytest.raises(ValueError, match="built in"):
        unregister("aws_health")


def test_a_missing_sdk_is_one_line_naming_the_extra() -> None:
    kind = AccountKind(
        name="toy", provider="gcp", options=SourceOptions, list_events=lambda o, c: [],
        requires=("no_such_sdk.sub",), extra="gcp",
    )  # fmt: skip
    assert kind.missing_extra() == "the toy source needs no_such_sdk.sub: pip install 'slamon[gcp]'"
    assert KINDS["aws_health"].missing_extra() is None
