"""Exact, type-driven conversion between the report model and plain JSON-like values.

The JSON and CSV renderers both need to write every field of the model and read it back to the
same value, so the conversion is driven by the model's own type hints rather than written out per
field: a field added to ``model.py`` is carried by both formats without touching them.

Rules: times are ISO 8601 UTC with ``Z`` (microseconds kept when present); floats keep their
shortest round-tripping ``repr``; ``None`` stays null. Naive datetimes are a bug upstream and
raise ``ValueError`` rather than being guessed at.
"""

from __future__ import annotations

import dataclasses
import types
import typing
from datetime import UTC, datetime
from typing import Any, TypeVar

from monitor.reports import model
from monitor.sla.times import parse_aware

ISO_UTC_SUFFIX = "Z"
T = TypeVar("T")


def format_time(value: datetime) -> str:
    """``2025-06-03T14:02:07Z`` (or ``…07.250000Z``); raises ``ValueError`` on a naive datetime."""
    if value.tzinfo is None or value.utcoffset() is None:
        raise ValueError(f"naive datetime in a report: {value!r}")
    return value.astimezone(UTC).isoformat().replace("+00:00", ISO_UTC_SUFFIX)


_HINTS: dict[type[Any], tuple[tuple[str, Any], ...]] = {}


def hints(cls: type[Any]) -> tuple[tuple[str, Any], ...]:
    """``(field name, resolved type)`` of a model dataclass, in declaration order (cached)."""
    if cls not in _HINTS:
        resolved = typing.get_type_hints(cls, vars(model))
        _HINTS[cls] = tuple((f.name, resolved[f.name]) for f in dataclasses.fields(cls))
    return _HINTS[cls]


def optional_of(hint: Any) -> Any | None:
    """``X`` for ``X | None``; ``None`` when ``hint`` is not optional."""
    args = typing.get_args(hint)
    if isinstance(hint, types.UnionType) and type(None) in args:
        rest = [a for a in args if a is not type(None)]
        return rest[0] if len(rest) == 1 else None
    return None


def to_plain(value: Any) -> Any:
    """A model value as JSON-ready data: dataclasses as dicts, tuples as lists, times as text."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: to_plain(getattr(value, f.name)) for f in dataclasses.fields(value)}
    if isinstance(value, datetime):
        return format_time(value)
    if isinstance(value, tuple | list):
        return [to_plain(v) for v in value]
    if isinstance(value, dict):
        return {str(k): to_plain(v) for k, v in value.items()}
    return value


def from_plain(hint: Any, value: Any) -> Any:
    """The inverse of :func:`to_plain` for a value of type ``hint``; ``ValueError`` if it can't."""
    inner = optional_of(hint)
    if inner is not None:
        return None if value is None else from_plain(inner, value)
    if dataclasses.is_dataclass(hint) and isinstance(hint, type):
        return build(hint, value)
    origin = typing.get_origin(hint)
    if origin is tuple:
        if not isinstance(value, list):
            raise ValueError(f"expected a list, got {value!r}")
        return tuple(from_plain(typing.get_args(hint)[0], v) for v in value)
    if origin is dict or hint is Any:
        return value
    return _scalar(hint, value)


def build(cls: type[T], data: Any) -> T:
    """An instance of the model dataclass ``cls`` from a dict made by :func:`to_plain`."""
    if not isinstance(data, dict):
        raise ValueError(f"{cls.__name__}: expected an object, got {type(data).__name__}")
    kwargs = {name: from_plain(hint, data[name]) for name, hint in hints(cls) if name in data}
    try:
        return cls(**kwargs)
    except TypeError as exc:  # a required field is missing
        raise ValueError(f"{cls.__name__}: {exc}") from None


def _scalar(hint: Any, value: Any) -> Any:
    if hint is datetime:
        if not isinstance(value, str):
            raise ValueError(f"expected a time, got {value!r}")
        return parse_aware(value)
    if hint is bool and isinstance(value, bool):
        return value
    if hint is float and isinstance(value, int | float) and not isinstance(value, bool):
        return float(value)
    if hint is int and isinstance(value, int) and not isinstance(value, bool):
        return value
    if hint is str and isinstance(value, str):
        return value
    raise ValueError(f"expected {getattr(hint, '__name__', hint)}, got {value!r}")
