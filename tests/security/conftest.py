"""The API fixtures (real app, admin and read tokens) shared with tests/monitor/api."""

from tests.monitor.api.conftest import admin, api, reader, sessions_api

__all__ = ["admin", "api", "reader", "sessions_api"]
