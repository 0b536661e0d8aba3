"""Reading untrusted JSON values. These readers never raise: a value of the wrong type reads
as missing, so one odd field costs that field, not the document."""

from __future__ import annotations

from typing import Any


def nonblank(value: object) -> str | None:
    """A string stripped of surrounding whitespace; None for a blank string or a non-string."""
    return (value.strip() or None) if isinstance(value, str) else None


def id_text(value: object) -> str | None:
    """An id given as a string or an integer (not a boolean), as text; None when missing."""
    if isinstance(value, bool) or not isinstance(value, str | int):
        return None
    return str(value) or None


def as_dict(value: object) -> dict[str, Any]:
    """``value`` if it is a JSON object, else an empty one."""
    return value if isinstance(value, dict) else {}


def dicts_in(value: object) -> list[dict[str, Any]]:
    """The JSON objects in a list, in order; ``[]`` when ``value`` is no list."""
    return [v for v in value if isinstance(v, dict)] if isinstance(value, list) else []
