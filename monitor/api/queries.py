"""What the read routes' queries share: one page of a query, a JSON list's membership on either
dialect, and what counts as an open incident."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from sqlalchemy import ColumnElement, Select, func, select
from sqlalchemy.orm import Session

from monitor.db.models import Incident
from monitor.feeds.model import CLOSED_STATUSES


def page(
    session: Session,
    query: Select[*tuple[Any, ...]],
    order: Sequence[Any],
    limit: int,
    offset: int,
    out: Callable[[Sequence[Any]], list[dict[str, Any]]],
) -> dict[str, Any]:
    """One page of ``query`` in ``order``: its rows through ``out``, the total and the paging."""
    total = session.scalar(select(func.count()).select_from(query.subquery())) or 0
    rows = session.execute(query.order_by(*order).limit(limit).offset(offset)).all()
    following = offset + limit
    return {
        "items": out(rows),
        "total": total,
        "limit": limit,
        "offset": offset,
        "next_offset": following if following < total else None,
    }


def json_list_has(session: Session, column: Any, value: str) -> ColumnElement[bool]:
    """Whether the JSON list in ``column`` holds the string ``value`` (either dialect)."""
    if session.get_bind().dialect.name == "postgresql":
        elements = func.json_array_elements_text(column).table_valued("value")
    else:
        elements = func.json_each(column).table_valued("value")
    return select(1).select_from(elements).where(elements.c.value == value).exists()


def open_incident() -> ColumnElement[bool]:
    return Incident.status.not_in(sorted(CLOSED_STATUSES))
