"""A source's target template, rendered over one instance's fields.

A template is the target config every instance of a source gets (``kind``, ``url``, ``pool``,
``sla``, ``interval``, ``labels`` …) with ``{field}`` placeholders over the instance's fields:
``http://{private_ip}:9400/metrics``, ``{tags.pool}``. ``{{`` and ``}}`` are literal braces. A
placeholder the instance lacks is an error naming the field and what the instance has, so one
instance without a private IP is refused with one line, not registered with a broken URL.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

PLACEHOLDER = re.compile(r"\{\{|\}\}|\{([^{}]*)\}")
NUMERIC_FIELDS = frozenset(
    {"gpus", "hourly_price", "confirmations", "recovery_confirmations", "interval", "timeout"}
)


class TemplateError(ValueError):
    """A template names a field the instance does not have, or is not well formed."""


def placeholders(text: str) -> list[str]:
    """The field names ``text`` refers to, in order (for config check: the names at least
    parse)."""
    names = []
    for match in PLACEHOLDER.finditer(text):
        if match.group(0) in ("{{", "}}"):
            continue
        name = match.group(1).strip()
        if not name:
            raise TemplateError("an empty {} placeholder")
        names.append(name)
    return names


def render_text(text: str, fields: Mapping[str, Any], where: str) -> str:
    """``text`` with each ``{name}`` replaced by ``fields[name]``; ``where`` names the template
    key in the error."""

    def replace(match: re.Match[str]) -> str:
        whole = match.group(0)
        if whole == "{{":
            return "{"
        if whole == "}}":
            return "}"
        name = match.group(1).strip()
        value = fields.get(name)
        if value is None or value == "":
            have = ", ".join(sorted(k for k, v in fields.items() if v not in (None, "")))
            raise TemplateError(
                f"template {where}: the instance has no {name!r} (it has: {have or 'nothing'})"
            )
        return str(value)

    return PLACEHOLDER.sub(replace, text)


def render(template: Mapping[str, Any], fields: Mapping[str, Any]) -> dict[str, Any]:
    """The template's target fields for one instance. Strings are rendered (in ``labels`` too);
    a rendered numeric field (``gpus: "{tags.gpus}"``) becomes a number."""
    rendered: dict[str, Any] = {}
    for key, value in template.items():
        if isinstance(value, str):
            text = render_text(value, fields, key)
            rendered[key] = _number(text) if key in NUMERIC_FIELDS else text
        elif isinstance(value, Mapping):
            rendered[key] = {
                k: render_text(v, fields, f"{key}.{k}") if isinstance(v, str) else v
                for k, v in value.items()
            }
        else:
            rendered[key] = value
    return rendered


def _number(text: str) -> Any:
    """``"8"`` -> 8, ``"2.5"`` -> 2.5; a duration like ``"15s"`` stays text (the config reads
    it)."""
    try:
        return int(text)
    except ValueError:
        try:
            return float(text)
        except ValueError:
            return text
