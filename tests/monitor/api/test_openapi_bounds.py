"""Every bound the server enforces on one value is in the OpenAPI document, where a client (and
schemathesis) can read it: a number's limits are JSON Schema's ``minimum``/``maximum``, never
the pydantic-only ``ge``/``le`` a validator placed before them leaves behind, and the limit the
document states is the one the server keeps, on both sides of it."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from tests.support import ApiClient

PYDANTIC_ONLY = {"ge", "le", "gt", "lt", "multiple_of", "allow_inf_nan", "strict"}


def keys(node: Any, path: str = "") -> Iterator[tuple[str, str]]:
    if isinstance(node, dict):
        for key, value in node.items():
            yield path, key
            if key != "properties":  # property names are the user's words, not keywords
                yield from keys(value, f"{path}/{key}")
            else:
                for name, schema in value.items():
                    yield from keys(schema, f"{path}/properties/{name}")
    elif isinstance(node, list):
        for i, value in enumerate(node):
            yield from keys(value, f"{path}[{i}]")


def test_the_document_states_bounds_only_in_json_schema_words(api: ApiClient) -> None:
    document = api.get("/openapi.json").json()
    stray = [f"{path}/{key}" for path, key in keys(document) if key in PYDANTIC_ONLY]
    assert stray == []


def target_schema(api: ApiClient) -> dict[str, Any]:
    post = api.get("/openapi.json").json()["paths"]["/api/v1/targets"]["post"]
    schema: dict[str, Any] = post["requestBody"]["content"]["application/json"]["schema"]
    return schema


def bounds(field: dict[str, Any]) -> tuple[int, int]:
    number = next((s for s in field.get("anyOf", []) if s.get("type") == "integer"), field)
    return number["minimum"], number["maximum"]


@pytest.mark.parametrize("field", ["gpus", "confirmations", "recovery_confirmations"])
def test_a_targets_number_is_accepted_to_its_stated_bounds_and_refused_past_them(
    api: ApiClient, admin: dict[str, str], field: str
) -> None:
    low, high = bounds(target_schema(api)["properties"][field])
    for value, status in ((low - 1, 422), (low, 201), (high, 200), (high + 1, 422)):
        body = {"name": "box", "kind": "heartbeat", field: value}
        response: Any = api.post("/api/v1/targets", headers=admin, json=body)
        assert response.status_code == status, (field, value, response.text)


def test_a_heartbeats_gpu_readings_are_described_as_the_server_reads_them(
    api: ApiClient,
) -> None:
    post = api.get("/openapi.json").json()["paths"]["/api/v1/heartbeats/{target}"]["post"]
    schema = post["requestBody"]["content"]["application/json"]["schema"]
    readings = next(s for s in schema["properties"]["gpus"]["anyOf"] if s.get("type") == "array")
    item = readings["items"]
    assert item["required"] == ["key"]
    assert item["properties"]["xid"] == {"type": ["integer", "null"], "minimum": 0}
    assert item["properties"]["mig_instances"]["items"] == {"type": "string"}
