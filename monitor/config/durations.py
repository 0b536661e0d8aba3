"""Durations as the config writes them: ``15s``, ``2m``, ``1h30m``, ``500ms`` or plain seconds."""

from __future__ import annotations

import functools
import math
import re

_UNIT_SECONDS = {"ms": 0.001, "s": 1.0, "m": 60.0, "h": 3600.0, "d": 86400.0}
_PART = re.compile(r"(\d+(?:\.\d+)?)(ms|s|m|h|d)")


def parse_duration(value: object) -> float:
    """Seconds for a duration; ``ValueError`` with a readable message otherwise."""
    seconds = _text_seconds(value) if isinstance(value, str) else _seconds(value)
    if not math.isfinite(seconds):
        raise ValueError("must be a finite duration")
    return seconds


@functools.lru_cache(maxsize=256)
def _text_seconds(text: str) -> float:
    """A written duration's seconds, remembered: a sweep validates the same few (a template's
    ``interval: 15s``) once per instance."""
    return _seconds(text)


def _seconds(value: object) -> float:
    if isinstance(value, bool):
        raise ValueError("must be a duration like 15s, 2m or a number of seconds")
    if isinstance(value, int | float):
        return float(value)
    if not isinstance(value, str):
        raise ValueError("must be a duration like 15s, 2m or a number of seconds")
    text = value.strip().lower().replace(" ", "")
    try:
        return float(text)
    except ValueError:
        pass
    parts = _PART.findall(text)
    if not parts or "".join(n + u for n, u in parts) != text:
        raise ValueError(f"{value!r} is not a duration (use e.g. 15s, 2m, 1h30m, 500ms)")
    return sum(float(n) * _UNIT_SECONDS[u] for n, u in parts)


def format_duration(seconds: float) -> str:
    """A short human form: 90 -> '1m30s', 0.5 -> '500ms'."""
    if seconds < 1:
        return f"{round(seconds * 1000)}ms"
    whole = int(seconds)
    hours, rest = divmod(whole, 3600)
    minutes, secs = divmod(rest, 60)
    out = (f"{hours}h" if hours else "") + (f"{minutes}m" if minutes else "")
    return out + (f"{secs}s" if secs or not out else "")
