"""The captured documents of tests/fixtures/account/ (provenance in
tests/fixtures/account/SOURCES.md), read as the tests need them."""

from __future__ import annotations

import json
import re
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "account"


def document(name: str) -> Any:
    """A JSON fixture as it was published."""
    return json.loads((FIXTURES / name).read_text())


def placebo(name: str) -> Any:
    """A recorded boto3 answer: the recording tool's ``data``, its datetimes (written as
    ``{"__class__": "datetime", "year": …}``) turned back into the datetimes boto3 returned."""
    return _unwrapped(document(name)["data"])


def _unwrapped(value: Any) -> Any:
    if isinstance(value, dict):
        if value.get("__class__") == "datetime":
            parts = {k: v for k, v in value.items() if k != "__class__"}
            return datetime(**parts, tzinfo=UTC)
        return {key: _unwrapped(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_unwrapped(item) for item in value]
    return value


def trailing_commas_removed(name: str) -> Any:
    """A document published with trailing commas (Google's Personalized Service Health sample):
    the one change made is removing each comma before a ``}`` or ``]``; its placeholders
    (``projects/ PROJECT_ID /…``) are left as published."""
    return json.loads(re.sub(r",(\s*[}\]])", r"\1", (FIXTURES / name).read_text()))
