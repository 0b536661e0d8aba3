"""/healthz: can this process reach its database and broker?"""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Depends
from fastapi.responses import JSONResponse
from starlette.concurrency import run_in_threadpool

from monitor.api.deps import AppState, app_state
from monitor.broker import check_broker
from monitor.db.engine import check_database
from monitor.errors import ServiceUnavailable

router = APIRouter()


@router.get("/healthz", tags=["health"])
async def healthz(state: Annotated[AppState, Depends(app_state)]) -> JSONResponse:
    """200 when the database and the broker answer, 503 (with the reason) when either does not."""
    database = await run_in_threadpool(_probe, check_database, state.engine)
    broker = await run_in_threadpool(_probe, check_broker, state.settings)
    healthy = database["ok"] and broker["ok"]
    body = {"status": "ok" if healthy else "unavailable", "database": database, "broker": broker}
    return JSONResponse(body, status_code=200 if healthy else 503)


def _probe(check: Any, arg: Any) -> dict[str, Any]:
    try:
        check(arg)
    except ServiceUnavailable as exc:
        return {"ok": False, "error": str(exc)}
    return {"ok": True}
