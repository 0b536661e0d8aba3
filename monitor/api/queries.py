"""What the read routes' queries share: one page of a query (what they select is
``monitor.history``'s where it is a timeline)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from sqlalchemy import Select, func, select
from sqlalchemy.orm import Session


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
