"""Fuzzing the config loader: whatever YAML it is given, only ``ConfigError`` comes out, and
each of its problems says where in the file it is. Durations get the same treatment.

Three sources of input: random YAML documents built from the config's own field names (so
they reach deep into the models), the example config with values swapped, removed or added,
and the example config's text with characters overwritten.
"""

from __future__ import annotations

import math
import re
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from monitor.config import Config, load_config, parse_config
from monitor.config.durations import format_duration, parse_duration
from monitor.errors import ConfigError

FUZZ = settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
EXAMPLE_PATH = Path(__file__).parents[3] / "slamon.example.yaml"
EXAMPLE_TEXT = EXAMPLE_PATH.read_text(encoding="utf-8")
EXAMPLE = yaml.safe_load(EXAMPLE_TEXT)

# Keys the models know, so random documents get past "unknown field" into the validators.
FIELD_NAMES = sorted(
    {"providers", "targets", "pools", "channels", "routes", "schedule", "maintenance"}
    | {"slug", "name", "kind", "url", "provider", "region", "zone", "pool", "instance_type"}
    | {"gpus", "hourly_price", "sla", "interval", "timeout", "secret", "match", "channels"}
    | {"regions", "components", "min_up", "start", "end", "tick", "feeds", "labels"}
)
# A problem names its place first: ``targets[0].interval (line 12): …``. Keys are the user's
# text (anything), so "a place" is whatever non-blank text comes before the first ": ".
LOCATED = re.compile(r"^(?=.*\S.*: ).+?: .+")
WHOLE_DOCUMENT = (
    "the config must be a mapping with keys like providers, targets",
    "not valid YAML: ",
)

scalars = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**70), max_value=2**70)
    | st.floats(allow_nan=True, allow_infinity=True)
    | st.sampled_from(
        ["15s", "2m", "1h30m", "500ms", "0s", "-5s", "1e400", "http://x/", "tcp://h:1"]
    )
    | st.sampled_from(["http", "tcp", "dcgm", "heartbeat", "webhook", "aws-ec2-instance"])
    | st.text(max_size=20)
    | st.dates()
    | st.datetimes()
)
# Keys without line breaks: a problem's location echoes the key as written, so a key holding
# a newline would make a two-line problem (cosmetic; reported, not a crash).
one_line = st.characters(blacklist_categories=("Cc", "Cs", "Zl", "Zp"))
keys = st.sampled_from(FIELD_NAMES) | st.text(one_line, max_size=8) | st.integers(-3, 3)
yaml_values = st.recursive(
    scalars,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(keys, inner, max_size=5),
    max_leaves=25,
)


def check_only_config_errors(text: str) -> Config | ConfigError:
    """Parse ``text``; anything but a ``ConfigError`` whose problems are located fails."""
    try:
        return parse_config(text)
    except ConfigError as exc:
        error = exc
    assert error.problems
    for problem in error.problems:
        assert problem.strip(), problem
        assert "\n" not in problem, problem
        assert problem.startswith(WHOLE_DOCUMENT) or LOCATED.match(problem), problem
        if problem.startswith("not valid YAML: "):
            assert "line " in problem or "position " in problem, problem
    return error


def dump(data: Any) -> str:
    return yaml.safe_dump(data, allow_unicode=True, sort_keys=False)


# --------------------------------------------------------------------------- documents


@FUZZ
@given(yaml_values)
def test_any_yaml_value_is_a_config_or_a_located_config_error(data: Any) -> None:
    check_only_config_errors(dump(data))


@FUZZ
@given(st.dictionaries(st.sampled_from(FIELD_NAMES), yaml_values, max_size=6))
def test_any_mapping_of_known_sections_is_a_config_or_a_located_config_error(
    data: dict[str, Any],
) -> None:
    check_only_config_errors(dump(data))


# --------------------------------------------------------------------------- the example, mutated


def paths_of(node: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """Every path to a value inside ``node`` (dict keys and list indexes)."""
    children: list[tuple[Any, Any]] = []
    if isinstance(node, dict):
        children = list(node.items())
    elif isinstance(node, list):
        children = list(enumerate(node))
    out = [prefix] if prefix else []
    for key, child in children:
        out += paths_of(child, (*prefix, key))
    return out


def with_change(data: Any, path: tuple[Any, ...], action: str, value: Any) -> Any:
    """A copy of ``data`` with the value at ``path`` replaced, deleted or given a sibling."""
    if not path:
        return value if action == "replace" else data
    head, rest = path[0], path[1:]
    copy = dict(data) if isinstance(data, dict) else list(data)
    if rest:
        copy[head] = with_change(copy[head], rest, action, value)
    elif action == "replace":
        copy[head] = value
    elif action == "delete":
        del copy[head]
    elif isinstance(copy, dict):
        copy[f"{head}_extra"] = value
    else:
        copy.insert(head, value)
    return copy


@st.composite
def mutated_example(draw: st.DrawFn) -> Any:
    data = EXAMPLE
    for _ in range(draw(st.integers(1, 4))):
        paths = paths_of(data)
        if not paths:
            break
        path = draw(st.sampled_from(paths))
        action = draw(st.sampled_from(["replace", "delete", "add"]))
        data = with_change(data, path, action, draw(yaml_values))
    return data


@FUZZ
@given(mutated_example())
def test_the_example_with_values_changed_is_a_config_or_a_located_config_error(data: Any) -> None:
    check_only_config_errors(dump(data))


@st.composite
def overwritten_example(draw: st.DrawFn) -> str:
    text = EXAMPLE_TEXT
    edits = st.tuples(st.integers(0, len(text)), st.text(min_size=1, max_size=4))
    for position, replacement in draw(st.lists(edits, min_size=1, max_size=6)):
        text = text[:position] + replacement + text[position + len(replacement) :]
    return text


@FUZZ
@given(overwritten_example())
def test_the_example_text_overwritten_is_a_config_or_a_located_config_error(text: str) -> None:
    check_only_config_errors(text)


def test_the_example_itself_is_valid() -> None:
    assert isinstance(check_only_config_errors(EXAMPLE_TEXT), Config)


@FUZZ
@given(st.binary(max_size=200))
def test_any_file_content_loads_or_raises_config_error(tmp_path_factory: Any, raw: bytes) -> None:
    path = tmp_path_factory.mktemp("cfg") / "slamon.yaml"
    path.write_bytes(raw)
    try:
        load_config(path)
    except ConfigError as exc:
        problems = exc.problems
    else:
        problems = ["(loaded)"]
    assert problems


@pytest.mark.parametrize(
    "text",
    [
        pytest.param("targets: !!python/object/apply:os.system [id]", id="python-apply"),
        pytest.param("x: !!python/name:os.system", id="python-name"),
        pytest.param("x: !!binary aGVsbG8=", id="binary"),
    ],
)
def test_yaml_tags_that_build_objects_are_config_errors(text: str) -> None:
    # The loader is YAML's safe loader: a config file cannot make slamon run code.
    assert isinstance(check_only_config_errors(text), ConfigError)


# Found by this fuzzing: YAML that nests without end used to reach Python's recursion limit.
@pytest.mark.parametrize(
    "text",
    [
        pytest.param("targets: &loop [*loop]", id="alias-loop"),
        pytest.param("targets: " + "[" * 5000, id="deep-flow"),
    ],
)
def test_yaml_that_never_ends_is_a_config_error(text: str) -> None:
    check_only_config_errors(text)


# --------------------------------------------------------------------------- durations

duration_texts = st.text(alphabet="0123456789.msdhe+-_ inf\t", max_size=16) | st.text(max_size=16)


@FUZZ
@given(
    duration_texts | st.floats() | st.integers() | st.booleans() | st.none() | st.lists(st.none())
)
def test_a_duration_is_a_finite_number_or_a_value_error(value: object) -> None:
    try:
        seconds = parse_duration(value)
    except ValueError as exc:
        message = str(exc)
    else:
        message = "(parsed)"
        assert math.isfinite(seconds)
    assert message


@FUZZ
@given(
    st.lists(
        st.tuples(st.integers(0, 10_000), st.sampled_from(["ms", "s", "m", "h", "d"])),
        min_size=1,
        max_size=4,
    )
)
def test_a_written_duration_adds_up_its_parts(parts: list[tuple[int, str]]) -> None:
    unit = {"ms": 0.001, "s": 1, "m": 60, "h": 3600, "d": 86400}
    text = "".join(f"{n}{u}" for n, u in parts)
    assert parse_duration(text) == pytest.approx(sum(n * unit[u] for n, u in parts))


@FUZZ
@given(st.integers(1, 10**7))
def test_a_formatted_duration_parses_back_to_the_same_seconds(seconds: int) -> None:
    assert parse_duration(format_duration(seconds)) == seconds
